// `warden audit`: the audit log (store/call_records.h) on the terminal, read straight from
// <home>/warden.db (SQLite WAL, so a running server keeps writing meanwhile); `warden audit
// verify` checks its hash chain.
#include <ctime>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "agent/gate.h"
#include "api/control/audit_routes.h"
#include "app/commands.h"
#include "client/chat_format.h"
#include "common/utf8.h"
#include "store/call_records.h"
#include "store/database.h"

namespace warden::app {

namespace {

using audit_row = std::pair<std::int64_t, store::call_record>;

/// The last `n` rows matching `q` (n ≥ 1), oldest first: every page is read, the tail kept.
result<std::deque<audit_row>> last_rows(const store::call_log& log, store::audit_query q, std::size_t n) {
  std::deque<audit_row> keep;
  q.limit = store::k_max_audit_page;
  for (;;) {
    auto page = log.list(q);
    if (!page) return page.error();
    const std::size_t got = page->size();
    if (got > 0) q.after_row_id = page->back().first;
    for (auto& row : *page) {
      keep.push_back(std::move(row));
      if (keep.size() > n) keep.pop_front();
    }
    if (got < q.limit) return keep;
  }
}

/// Unix ms as `2026-12-01T10:00:00.123Z`.
std::string utc_time(std::int64_t ms) {
  const std::time_t secs = static_cast<std::time_t>(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
  std::tm tm{};
  if (::gmtime_r(&secs, &tm) == nullptr) return std::to_string(ms);
  char buf[40];
  const std::size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char frac[8];
  std::snprintf(frac, sizeof frac, ".%03dZ", static_cast<int>(ms - static_cast<std::int64_t>(secs) * 1000));
  return std::string(buf, n) + frac;
}

/// `text` made safe for one terminal line (client/chat_format.h one_line, uncut): valid UTF-8,
/// every control character shown as an escape, so a model-chosen string can neither end the
/// line nor drive the terminal.
std::string visible(std::string_view text) { return client::one_line(text, std::numeric_limits<std::size_t>::max()); }

/// The arguments on one line: at most 80 characters of them, then made visible.
std::string short_arguments(const std::string& arguments) {
  constexpr std::size_t k_max = 80;
  const std::string text = to_valid_utf8(arguments);
  const std::string_view cut = utf8_prefix(text, k_max);
  return cut.size() < text.size() ? visible(cut) + "…" : visible(text);
}

/// "ran", "not-run" or "pending" (rows from before the chain have no status: from `allowed`), then
/// the notes in brackets: "ran[client_gone]".
std::string status_word(const store::call_record& r) {
  std::string w = r.status == "pending" ? "pending" : r.status == "ran" || (r.status.empty() && r.allowed) ? "ran" : "not-run";
  for (const auto& n : r.notes) {
    w += '[';
    w += visible(n);
    w += ']';
  }
  return w;
}

/// One text line per call: time, [owner/]session, tool, status[notes], decision/decided_by(:rule), risk, exit
/// ("error" for a failed call without a program, "-" for none), duration, arguments; every stored string made visible.
std::string text_line(const store::call_record& r) {
  std::string who = visible(r.decision) + "/" + visible(r.decided_by);
  if (!r.rule_id.empty()) {
    who += ':';
    who += visible(r.rule_id);
  }
  const std::string risk = r.risk_level.empty() ? "-" : visible(r.risk_level);
  // a tool without a program (edit_file, render_html) that failed has no exit status: "error"
  const std::string exit = r.exit_status ? std::to_string(*r.exit_status) : r.is_error ? "error" : "-";
  const std::string who_asked = r.owner.empty() ? visible(r.session_id) : visible(r.owner) + "/" + visible(r.session_id);
  return utc_time(r.started_unix_ms) + "  " + who_asked + "  " + visible(r.tool) + "  " +
         status_word(r) + "  " + who + "  risk=" + risk + "  exit=" + exit + "  " + std::to_string(r.duration_ms) + "ms  " +
         short_arguments(r.arguments);
}

/// The query from the options, or nullopt after printing why not (exit 2).
std::optional<store::audit_query> query_of(const audit_options& o) {
  store::audit_query q;
  if (!o.session.empty() && !agent::valid_session_id(o.session)) {
    std::fprintf(stderr, "warden: --session must be 1 to 64 characters from A-Z, a-z, 0-9, '_' and '-'\n");
    return std::nullopt;
  }
  q.session_id = o.session;
  q.owner = o.owner;
  if (!o.since.empty()) {
    const auto ms = api::control::parse_audit_time(o.since);
    if (!ms) {
      std::fprintf(stderr, "warden: --since must be Unix milliseconds or an RFC 3339 time such as 2026-12-01T10:00:00Z\n");
      return std::nullopt;
    }
    q.since_unix_ms = *ms;
  }
  return q;
}

/// Prints what verify() found: 0 when the chain holds, 1 naming the first broken row.
int print_verdict(const store::chain_report& r) {
  if (!r.ok) {
    const std::string row = r.broken_row > 0 ? std::to_string(r.broken_row) : "?";
    std::printf("row %s: %s\n", row.c_str(), visible(r.problem).c_str());
    return 1;
  }
  std::printf("ok: %lld rows, %lld events", static_cast<long long>(r.rows), static_cast<long long>(r.events));
  if (!r.head.empty()) std::printf(", chain head %s", r.head.c_str());
  if (r.legacy_rows > 0) {
    std::printf("; %lld older rows were written before the chain began and are not checked",
                static_cast<long long>(r.legacy_rows));
  }
  std::printf("\n");
  return 0;
}

/// The database of `cfg.home`, or nullptr after printing why (rc: 0 when there is none yet).
std::unique_ptr<store::database> open_log(const config& cfg, int& rc) {
  const std::string path = (std::filesystem::path(cfg.home) / "warden.db").string();
  std::error_code ec;
  rc = 0;
  if (!std::filesystem::exists(path, ec)) {
    std::printf("no audit log yet at %s\n", path.c_str());
    return nullptr;
  }
  auto db = store::database::open(path);
  if (!db) {
    std::fprintf(stderr, "warden: %s\n", db.error().message.c_str());
    rc = 1;
    return nullptr;
  }
  return std::move(*db);
}

}  // namespace

int run_audit_verify(const config& cfg) {
  int rc = 0;
  auto db = open_log(cfg, rc);
  if (!db) return rc;
  const store::call_log log(*db);
  auto report = log.verify();
  if (!report) {
    std::fprintf(stderr, "warden: %s\n", report.error().message.c_str());
    return 1;
  }
  return print_verdict(*report);
}

int run_audit(const config& cfg, const audit_options& o) {
  const auto q = query_of(o);
  if (!q) return 2;
  int rc = 0;
  auto db = open_log(cfg, rc);
  if (!db) return rc;
  const store::call_log log(*db);
  auto rows = last_rows(log, *q, static_cast<std::size_t>(o.limit > 0 ? o.limit : 1));
  if (!rows) {
    std::fprintf(stderr, "warden: %s\n", rows.error().message.c_str());
    return 1;
  }
  for (const auto& [id, r] : *rows) {
    std::string line = o.json ? dump_safe(api::control::audit_record_json(id, r)) : text_line(r);
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), stdout);
  }
  return 0;
}

}  // namespace warden::app
