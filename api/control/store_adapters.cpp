#include "api/control/store_adapters.h"

#include <spdlog/spdlog.h>

#include "agent/call_policy.h"
#include "common/metrics.h"

#include <mutex>

namespace warden::api::control {

store::call_record to_row(const agent::call_record& r) {
  store::call_record s;
  s.call_id = r.call_id;
  s.session_id = r.session_id;
  s.owner = r.owner;
  s.owner = r.owner;
  s.tool = r.tool;
  s.arguments = r.arguments;
  s.surface = r.surface;
  s.mode = r.mode;
  s.risk_level = r.risk_level;
  s.risk_reasons = r.risk_reasons;
  s.decision = agent::to_string(r.decision);
  s.decided_by = agent::to_string(r.by);
  s.rule_id = r.rule_id;
  s.allowed = r.allowed;
  s.approval_id = r.approval_id;
  s.reason = r.reason;
  s.started_unix_ms = r.started_unix_ms;
  s.finished_unix_ms = r.finished_unix_ms;
  s.duration_ms = r.duration_ms;
  s.approval_latency_ms = r.approval_latency_ms;
  s.exit_status = r.exit_status;
  s.is_error = r.is_error;
  s.output_bytes = r.output_bytes;
  s.status = agent::to_string(r.status);
  s.notes = r.notes;
  return s;
}

store::stored_rule to_stored(const agent::permission_rule& r) {
  store::stored_rule s;
  s.id = r.id;
  s.scope = agent::to_string(r.scope);
  s.session_id = r.session_id;
  s.tool = r.tool;
  s.command_prefix = r.command_prefix;
  s.path_prefix = r.path_prefix;
  s.arguments = r.arguments;
  s.created_unix_ms = r.created_unix_ms;
  s.expires_unix_ms = r.expires_unix_ms;
  s.owner = r.owner;
  return s;
}

std::optional<agent::permission_rule> from_stored(const store::stored_rule& s) {
  agent::permission_rule r;
  if (s.scope == "always") r.scope = agent::rule_scope::always;
  else if (s.scope == "session") r.scope = agent::rule_scope::session;
  else return std::nullopt;
  r.id = s.id;
  r.session_id = s.session_id;
  r.tool = s.tool;
  r.command_prefix = s.command_prefix;
  r.path_prefix = s.path_prefix;
  r.arguments = s.arguments;
  r.created_unix_ms = s.created_unix_ms;
  r.expires_unix_ms = s.expires_unix_ms;
  r.owner = s.owner;
  return r;
}

boost::asio::awaitable<result<std::int64_t>> store_recorder::open(agent::call_record r) {
  auto write = [this, rec = to_row(r)]() -> result<std::int64_t> { return log_.insert(rec); };
  result<std::int64_t> row = make_error(errc::internal, "warden is stopping");
  try {
    row = co_await pool_.run_blocking(write);
  } catch (const std::exception& e) {
    row = make_error(errc::internal, e.what());
  }
  co_return row;
}

namespace {

/// A settled call's metrics: warden_tool_calls_total{tool, decision, by, exit} and, when a person
/// was asked, warden_approval_latency_seconds{answer}.
void count_call(const agent::call_record& r) {
  static std::once_flag described;
  auto& m = metrics::global();
  std::call_once(described, [&m] {
    m.describe("warden_tool_calls_total", "counter",
               "Tool calls settled, by tool (\"other\": one the request did not enable), decision (allowed: the gate let it through; refused), who decided "
               "(policy, user, rule, auto, bypass, expired, client_gone, cancel) and exit (0, nonzero, error: the tool reported "
               "an error without an exit status, none: no program ran)");
    m.describe("warden_approval_latency_seconds", "histogram",
               "Time from asking a person to approve a tool call until the answer, by answer (allowed, refused)");
  });
  std::string exit = "none";
  if (r.exit_status) exit = *r.exit_status == 0 ? "0" : "nonzero";
  else if (r.allowed && r.is_error) exit = "error";
  const std::string decision = r.allowed ? "allowed" : "refused";
  // A tool the request did not enable (any name a model writes) is "other": labels stay the
  // server's own tools, so a model cannot fill the metrics' series budget (common/metrics.h).
  const bool known = r.decision != agent::call_verdict::not_enabled && !r.tool.empty() && r.tool.size() <= 64;
  m.add("warden_tool_calls_total",
        {{"tool", known ? r.tool : "other"}, {"decision", decision}, {"by", agent::to_string(r.by)}, {"exit", exit}});
  if (r.approval_latency_ms) {
    m.observe("warden_approval_latency_seconds", {{"answer", decision}}, static_cast<double>(*r.approval_latency_ms) / 1000.0);
  }
}

}  // namespace

boost::asio::awaitable<void> store_recorder::record(std::int64_t row, agent::call_record r) {
  if (r.status != agent::run_status::pending) count_call(r);
  // Queued, not awaited: the stream never waits for SQLite; the pool finishes queued writes
  // before it stops (app/serve.cpp stops it last).
  auto write = [this, row, rec = std::move(r)]() noexcept {
    try {
      record_now(row, rec);
    } catch (const std::exception& e) {
      spdlog::warn("the call record could not be written: {}", e.what());
    }
  };
  if (!pool_.post(std::move(write))) spdlog::warn("the call record was not written: warden is stopping");
  co_return;
}

void store_recorder::record_now(std::int64_t row, const agent::call_record& r) {
  const store::call_record s = to_row(r);
  if (row > 0) {
    if (auto w = log_.update(row, s); !w) spdlog::warn("the call record could not be written: {}", w.error().message);
  } else if (auto w = log_.insert(s); !w) {
    spdlog::warn("the call record could not be written: {}", w.error().message);
  }
}

result<void> stored_rules::insert(const agent::permission_rule& r) { return rows_.insert(to_stored(r)); }

result<std::vector<agent::permission_rule>> stored_rules::list() const {
  auto rows = rows_.list();
  if (!rows) return rows.error();
  std::vector<agent::permission_rule> out;
  for (const auto& row : *rows) {
    if (auto r = from_stored(row)) out.push_back(std::move(*r));
  }
  return out;
}

result<bool> stored_rules::remove(std::string_view id) { return rows_.remove(id); }

result<std::size_t> stored_rules::remove_expired(std::int64_t now_ms) { return rows_.remove_expired(now_ms); }

}  // namespace warden::api::control
