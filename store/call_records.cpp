#include "store/call_records.h"

#include <sqlite3.h>

#include <initializer_list>
#include <limits>
#include <string_view>

namespace warden::store {
namespace {

constexpr const char* k_columns =
    "call_id, session_id, tool, arguments, decision, decided_by, allowed, approval_id, reason, "
    "started_unix_ms, finished_unix_ms, duration_ms, exit_status, is_error, output_bytes";

const std::string k_insert = std::string("INSERT INTO call_records (") + k_columns +
                             ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)";
const std::string k_recent = std::string("SELECT ") + k_columns +
                             " FROM call_records ORDER BY started_unix_ms DESC, id DESC LIMIT ?1";
const std::string k_recent_session = std::string("SELECT ") + k_columns +
                                     " FROM call_records WHERE session_id = ?2"
                                     " ORDER BY started_unix_ms DESC, id DESC LIMIT ?1";
const std::string k_count = "SELECT COUNT(*) FROM call_records";

/// Binds with the length, so quotes and NULs go in intact; `v` outlives the statement's use.
int bind_text(sqlite3_stmt* s, int i, const std::string& v) {
  return sqlite3_bind_text64(s, i, v.data(), v.size(), SQLITE_STATIC, SQLITE_UTF8);
}

int bind_record(sqlite3_stmt* s, const call_record& r) {
  const int codes[] = {
      bind_text(s, 1, r.call_id),
      bind_text(s, 2, r.session_id),
      bind_text(s, 3, r.tool),
      bind_text(s, 4, r.arguments),
      sqlite3_bind_text(s, 5, to_string(r.decision), -1, SQLITE_STATIC),
      sqlite3_bind_text(s, 6, to_string(r.by), -1, SQLITE_STATIC),
      sqlite3_bind_int(s, 7, r.allowed ? 1 : 0),
      bind_text(s, 8, r.approval_id),
      bind_text(s, 9, r.reason),
      sqlite3_bind_int64(s, 10, r.started_unix_ms),
      sqlite3_bind_int64(s, 11, r.finished_unix_ms),
      sqlite3_bind_int64(s, 12, r.duration_ms),
      r.exit_status ? sqlite3_bind_int(s, 13, *r.exit_status) : sqlite3_bind_null(s, 13),
      sqlite3_bind_int(s, 14, r.is_error ? 1 : 0),
      sqlite3_bind_int64(s, 15, static_cast<sqlite3_int64>(r.output_bytes)),  // the bit pattern
  };
  for (int rc : codes) {
    if (rc != SQLITE_OK) return rc;
  }
  return SQLITE_OK;
}

std::string column_string(sqlite3_stmt* s, int i) {
  const auto* p = sqlite3_column_text(s, i);  // before column_bytes, as SQLite requires
  const int n = sqlite3_column_bytes(s, i);
  if (p == nullptr || n <= 0) return {};
  return std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(n));
}

template <class E>
std::optional<E> parse_enum(const std::string& text, std::initializer_list<E> values) {
  for (E v : values) {
    if (text == to_string(v)) return v;
  }
  return std::nullopt;
}

result<call_record> read_row(sqlite3_stmt* s, const std::string& path) {
  call_record r;
  r.call_id = column_string(s, 0);
  r.session_id = column_string(s, 1);
  r.tool = column_string(s, 2);
  r.arguments = column_string(s, 3);
  const std::string decision = column_string(s, 4), by = column_string(s, 5);
  const auto d = parse_enum(decision, {call_decision::run, call_decision::ask, call_decision::refuse,
                                       call_decision::not_enabled, call_decision::sandbox_unavailable});
  const auto b = parse_enum(by, {decided_by::policy, decided_by::user, decided_by::timeout, decided_by::cancel,
                                 decided_by::bypass});
  if (!d || !b) {
    return make_error(errc::internal, path + ": call_records row " + r.call_id + " has unknown decision \"" +
                                          decision + "\" or decided_by \"" + by + "\"");
  }
  r.decision = *d;
  r.by = *b;
  r.allowed = sqlite3_column_int(s, 6) != 0;
  r.approval_id = column_string(s, 7);
  r.reason = column_string(s, 8);
  r.started_unix_ms = sqlite3_column_int64(s, 9);
  r.finished_unix_ms = sqlite3_column_int64(s, 10);
  r.duration_ms = sqlite3_column_int64(s, 11);
  if (sqlite3_column_type(s, 12) != SQLITE_NULL) r.exit_status = sqlite3_column_int(s, 12);
  r.is_error = sqlite3_column_int(s, 13) != 0;
  r.output_bytes = static_cast<std::uint64_t>(sqlite3_column_int64(s, 14));
  return r;
}

}  // namespace

const char* to_string(call_decision d) noexcept {
  switch (d) {
    case call_decision::run: return "run";
    case call_decision::ask: return "ask";
    case call_decision::refuse: return "refuse";
    case call_decision::not_enabled: return "not_enabled";
    case call_decision::sandbox_unavailable: return "sandbox_unavailable";
  }
  return "run";
}

const char* to_string(decided_by b) noexcept {
  switch (b) {
    case decided_by::policy: return "policy";
    case decided_by::user: return "user";
    case decided_by::timeout: return "timeout";
    case decided_by::cancel: return "cancel";
    case decided_by::bypass: return "bypass";
  }
  return "policy";
}

call_log::call_log(database& db) : db_(db) {}

result<void> call_log::insert(const call_record& r) {
  return db_.with_connection([&](connection& c) -> result<void> {
    auto st = c.prepare(k_insert);
    if (!st) return st.error();
    if (bind_record(st->get(), r) != SQLITE_OK) return c.fail("binding a call record");
    if (sqlite3_step(st->get()) != SQLITE_DONE) return c.fail("inserting a call record");
    return {};
  });
}

result<std::vector<call_record>> call_log::recent(std::size_t limit, const std::string& session_id) const {
  return db_.with_connection([&](connection& c) -> result<std::vector<call_record>> {
    auto st = c.prepare(session_id.empty() ? k_recent : k_recent_session);
    if (!st) return st.error();
    constexpr auto k_max = static_cast<std::size_t>(std::numeric_limits<sqlite3_int64>::max());
    int rc = sqlite3_bind_int64(st->get(), 1, static_cast<sqlite3_int64>(limit < k_max ? limit : k_max));
    if (rc == SQLITE_OK && !session_id.empty()) rc = bind_text(st->get(), 2, session_id);
    if (rc != SQLITE_OK) return c.fail("binding the call record query");
    std::vector<call_record> out;
    while ((rc = sqlite3_step(st->get())) == SQLITE_ROW) {
      auto r = read_row(st->get(), db_.path());
      if (!r) return r.error();
      out.push_back(std::move(*r));
    }
    if (rc != SQLITE_DONE) return c.fail("reading call records");
    return out;
  });
}

result<std::int64_t> call_log::count() const {
  return db_.with_connection([&](connection& c) -> result<std::int64_t> {
    auto st = c.prepare(k_count);
    if (!st) return st.error();
    if (sqlite3_step(st->get()) != SQLITE_ROW) return c.fail("counting call records");
    return static_cast<std::int64_t>(sqlite3_column_int64(st->get(), 0));
  });
}

}  // namespace warden::store
