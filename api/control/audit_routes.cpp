#include "api/control/audit_routes.h"

#include <spdlog/spdlog.h>

#include <charconv>
#include <chrono>
#include <exception>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "agent/gate.h"
#include "api/control/routes.h"
#include "common/query.h"

namespace warden::api::control {

namespace asio = boost::asio;

namespace {

constexpr std::int64_t k_default_limit = 100;

error bad(std::string message, std::string param) {
  return make_error(errc::invalid_request, std::move(message), std::move(param), "invalid_value");
}

/// An integer of decimal digits only (no sign, no spaces), or nullopt.
std::optional<std::int64_t> parse_count(std::string_view s) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || s.front() == '-' || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

/// `n` decimal digits at s[at…], or nullopt.
std::optional<int> digits(std::string_view s, std::size_t at, std::size_t n) {
  if (at + n > s.size()) return std::nullopt;
  int v = 0;
  for (std::size_t i = at; i < at + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

/// The fraction after the seconds (".123456"), as milliseconds; `i` moves past it.
std::optional<std::int64_t> fraction_ms(std::string_view s, std::size_t& i) {
  if (i >= s.size() || s[i] != '.') return 0;
  ++i;
  std::int64_t ms = 0;
  std::size_t n = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i, ++n) {
    if (n < 3) ms = ms * 10 + (s[i] - '0');
  }
  if (n == 0) return std::nullopt;
  for (; n < 3; ++n) ms *= 10;
  return ms;
}

/// The UTC offset at s[i…] ("Z" or ±HH:MM, the end of the text), in minutes east.
std::optional<std::int64_t> offset_minutes(std::string_view s, std::size_t i) {
  if (i + 1 == s.size() && (s[i] == 'Z' || s[i] == 'z')) return 0;
  if (i + 6 != s.size() || (s[i] != '+' && s[i] != '-') || s[i + 3] != ':') return std::nullopt;
  const auto h = digits(s, i + 1, 2), m = digits(s, i + 4, 2);
  if (!h || !m || *h > 23 || *m > 59) return std::nullopt;
  return (s[i] == '-' ? -1 : 1) * (*h * 60 + *m);
}

/// RFC 3339 `YYYY-MM-DDTHH:MM:SS[.fff…](Z|±HH:MM)` as Unix milliseconds.
std::optional<std::int64_t> parse_rfc3339_ms(std::string_view s) {
  if (s.size() < 20 || s[4] != '-' || s[7] != '-' || s[13] != ':' || s[16] != ':') return std::nullopt;
  if (s[10] != 'T' && s[10] != 't' && s[10] != ' ') return std::nullopt;
  const auto y = digits(s, 0, 4), mo = digits(s, 5, 2), d = digits(s, 8, 2);
  const auto h = digits(s, 11, 2), mi = digits(s, 14, 2), sec = digits(s, 17, 2);
  if (!y || !mo || !d || !h || !mi || !sec || *h > 23 || *mi > 59 || *sec > 60) return std::nullopt;
  const std::chrono::year_month_day ymd{std::chrono::year{*y}, std::chrono::month{static_cast<unsigned>(*mo)},
                                        std::chrono::day{static_cast<unsigned>(*d)}};
  if (!ymd.ok()) return std::nullopt;
  std::size_t i = 19;
  const auto ms = fraction_ms(s, i);
  if (!ms) return std::nullopt;
  const auto offset = offset_minutes(s, i);
  if (!offset) return std::nullopt;
  const std::int64_t days = std::chrono::sys_days(ymd).time_since_epoch().count();
  const std::int64_t minutes = (days * 24 + *h) * 60 + *mi - *offset;
  return (minutes * 60 + *sec) * 1000 + *ms;
}

/// An integer query parameter in [min, max]; nullopt when absent; the 400 naming it otherwise.
result<std::optional<std::int64_t>> int_param(std::string_view query, std::string_view name, std::int64_t min,
                                              std::int64_t max, std::string_view what) {
  auto raw = query_param(query, name);
  if (!raw) return raw.error();
  if (!*raw) return std::optional<std::int64_t>();
  const auto v = parse_count(**raw);
  if (!v || *v < min || *v > max) {
    std::string message = "'";
    message.append(name).append("' must be ").append(what);
    return bad(std::move(message), std::string(name));
  }
  return std::optional<std::int64_t>(*v);
}

/// The query of GET /api/audit, or the 400.
result<store::audit_query> read_query(std::string_view query) {
  store::audit_query q;
  auto session = query_param(query, "session_id");
  if (!session) return session.error();
  if (*session && !(*session)->empty()) {
    if (!agent::valid_session_id(**session)) {
      return bad("'session_id' must be 1 to 64 characters from A-Z, a-z, 0-9, '_' and '-'", "session_id");
    }
    q.session_id = **session;
  }
  auto since = query_param(query, "since");
  if (!since) return since.error();
  if (*since) {
    const auto ms = parse_audit_time(**since);
    if (!ms) return bad("'since' must be Unix milliseconds or an RFC 3339 time such as 2026-12-01T10:00:00Z", "since");
    q.since_unix_ms = *ms;
  }
  const auto max_page = static_cast<std::int64_t>(store::k_max_audit_page);
  auto limit = int_param(query, "limit", 1, max_page, "an integer from 1 to " + std::to_string(max_page));
  if (!limit) return limit.error();
  q.limit = static_cast<std::size_t>(limit->value_or(k_default_limit));
  auto after = int_param(query, "after", 0, std::numeric_limits<std::int64_t>::max(), "a row id (an integer of 0 or more)");
  if (!after) return after.error();
  q.after_row_id = after->value_or(0);
  return q;
}

struct audit_page {
  std::vector<std::pair<std::int64_t, store::call_record>> rows;
  bool has_more = false;
};

/// One page, and whether a row follows it (blocking).
result<audit_page> read_page(const store::call_log& log, const store::audit_query& q) {
  auto rows = log.list(q);
  if (!rows) return rows.error();
  audit_page page{std::move(*rows), false};
  if (!page.rows.empty() && page.rows.size() >= q.limit) {
    store::audit_query next = q;
    next.after_row_id = page.rows.back().first;
    next.limit = 1;
    auto more = log.list(next);
    if (!more) return more.error();
    page.has_more = !more->empty();
  }
  return page;
}


asio::awaitable<void> audit(const http_request& req, response_writer& out, const store::call_log* log,
                            blocking_pool* pool) {
  if (!log) co_return co_await wire::send_error(out, control_surface(), make_error(errc::upstream_unavailable, "the audit log is not available"));
  auto q = read_query(req.query);
  if (!q) co_return co_await wire::send_error(out, control_surface(), q.error());
  if (!req.caller.admin()) q->owner = req.caller.name;  // a user key reads its own rows only
  auto fetch = [log, query = *q]() { return read_page(*log, query); };  // named: see blocking_pool.h
  result<audit_page> page = make_error(errc::internal, "not read");
  try {
    page = co_await off_thread(pool, fetch);
  } catch (const std::exception& e) {
    page = make_error(errc::internal, e.what());
  }
  if (!page) {
    spdlog::warn("GET /api/audit: {}", page.error().message);
    co_return co_await wire::send_error(out, control_surface(), make_error(errc::internal, "the audit log could not be read"));
  }
  json data = json::array();
  for (const auto& [id, r] : page->rows) data.push_back(audit_record_json(id, r));
  const std::int64_t last = page->rows.empty() ? q->after_row_id : page->rows.back().first;
  const json body = {{"object", "list"}, {"data", std::move(data)}, {"has_more", page->has_more}, {"last_id", last}};
  co_await out.send(200, "application/json", dump_safe(body));
}

}  // namespace

std::optional<std::int64_t> parse_audit_time(std::string_view text) {
  if (auto ms = parse_count(text)) return ms;
  return parse_rfc3339_ms(text);
}

json audit_record_json(std::int64_t row_id, const store::call_record& r) {
  json arguments = r.arguments;
  if (auto parsed = parse_json(r.arguments); parsed && parsed->is_object()) arguments = std::move(*parsed);
  return {
      {"id", row_id},
      {"call_id", r.call_id},
      {"session_id", r.session_id},
      {"owner", r.owner},
      {"surface", r.surface},
      {"tool", r.tool},
      {"arguments", std::move(arguments)},
      {"mode", r.mode},
      {"risk", {{"level", r.risk_level}, {"reasons", r.risk_reasons}}},
      {"decision", r.decision},
      {"decided_by", r.decided_by},
      {"rule_id", r.rule_id},
      {"allowed", r.allowed},
      {"approval_id", r.approval_id},
      {"reason", r.reason},
      {"started_at", r.started_unix_ms},
      {"finished_at", r.finished_unix_ms},
      {"duration_ms", r.duration_ms},
      {"approval_latency_ms", r.approval_latency_ms ? json(*r.approval_latency_ms) : json(nullptr)},
      {"exit_status", r.exit_status ? json(*r.exit_status) : json(nullptr)},
      {"is_error", r.is_error},
      {"output_bytes", r.output_bytes},
      {"status", r.status},
      {"notes", r.notes},
      {"arguments_sha256", r.arguments_sha256},
      {"row_hash", r.row_hash},
  };
}

std::vector<route> audit_routes(const store::call_log* log, blocking_pool* pool) {
  auto handler = [log, pool](const http_request& req, response_writer& out) -> asio::awaitable<void> {
    co_await audit(req, out, log, pool);
  };
  return {{"GET", "/api/audit", false, auth_policy::api_key, &control_surface(), handler}};
}

}  // namespace warden::api::control
