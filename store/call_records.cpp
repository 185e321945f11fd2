#include "store/call_records.h"

#include <sqlite3.h>

#include <algorithm>
#include <limits>
#include <string_view>
#include <vector>

#include "common/json_util.h"
#include "secrets/redact.h"

namespace warden::store {
namespace {

constexpr const char* k_columns =
    "call_id, session_id, tool, arguments, decision, decided_by, allowed, approval_id, reason, "
    "started_unix_ms, finished_unix_ms, duration_ms, exit_status, is_error, output_bytes, "
    "surface, mode, risk_level, risk_reasons, rule_id, approval_latency_ms, owner";

const std::string k_insert = std::string("INSERT INTO call_records (") + k_columns +
                             ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,"
                             " ?18, ?19, ?20, ?21, ?22)";
const std::string k_update =
    "UPDATE call_records SET call_id = ?1, session_id = ?2, tool = ?3, arguments = ?4, decision = ?5,"
    " decided_by = ?6, allowed = ?7, approval_id = ?8, reason = ?9, started_unix_ms = ?10, finished_unix_ms = ?11,"
    " duration_ms = ?12, exit_status = ?13, is_error = ?14, output_bytes = ?15, surface = ?16, mode = ?17,"
    " risk_level = ?18, risk_reasons = ?19, rule_id = ?20, approval_latency_ms = ?21, owner = ?22 WHERE id = ?23";
const std::string k_recent = std::string("SELECT id, ") + k_columns +
                             " FROM call_records ORDER BY started_unix_ms DESC, id DESC LIMIT ?1";
const std::string k_recent_session = std::string("SELECT id, ") + k_columns +
                                     " FROM call_records WHERE session_id = ?2"
                                     " ORDER BY started_unix_ms DESC, id DESC LIMIT ?1";
/// The page query of list(): ?1 after, ?2 since, ?3 limit, ?4 session_id, ?5 owner (only the
/// filters asked for are in the text, so each combination keeps its own plan).
std::string list_sql(bool by_session, bool by_owner) {
  std::string sql = std::string("SELECT id, ") + k_columns + " FROM call_records WHERE id > ?1 AND started_unix_ms >= ?2";
  if (by_session) sql += " AND session_id = ?4";
  if (by_owner) sql += " AND owner = ?5";
  return sql + " ORDER BY id LIMIT ?3";
}
const std::string k_count = "SELECT COUNT(*) FROM call_records";

/// Binds with the length, so quotes and NULs go in intact; `v` outlives the statement's use.
int bind_text(sqlite3_stmt* s, int i, const std::string& v) {
  return sqlite3_bind_text64(s, i, v.data(), v.size(), SQLITE_STATIC, SQLITE_UTF8);
}

/// The texts a record is stored as, where they differ from the record's own.
struct stored_texts {
  std::string arguments, reason, risk_reasons;
  explicit stored_texts(const call_record& r)
      : arguments(secrets::redact_secrets(r.arguments)),
        reason(secrets::redact_secrets(r.reason)),
        risk_reasons(dump_safe(json(redacted(r.risk_reasons)))) {}

  /// Each reason redacted on its own (a reason may quote the command it is about).
  static std::vector<std::string> redacted(const std::vector<std::string>& reasons) {
    std::vector<std::string> out;
    out.reserve(reasons.size());
    for (const auto& x : reasons) out.push_back(secrets::redact_secrets(x));
    return out;
  }
};

/// Binds ?1..?22; `t` must outlive the statement's use.
int bind_record(sqlite3_stmt* s, const call_record& r, const stored_texts& t) {
  const int codes[] = {
      bind_text(s, 1, r.call_id),
      bind_text(s, 2, r.session_id),
      bind_text(s, 3, r.tool),
      bind_text(s, 4, t.arguments),
      bind_text(s, 5, r.decision),
      bind_text(s, 6, r.decided_by),
      sqlite3_bind_int(s, 7, r.allowed ? 1 : 0),
      bind_text(s, 8, r.approval_id),
      bind_text(s, 9, t.reason),
      sqlite3_bind_int64(s, 10, r.started_unix_ms),
      sqlite3_bind_int64(s, 11, r.finished_unix_ms),
      sqlite3_bind_int64(s, 12, r.duration_ms),
      r.exit_status ? sqlite3_bind_int(s, 13, *r.exit_status) : sqlite3_bind_null(s, 13),
      sqlite3_bind_int(s, 14, r.is_error ? 1 : 0),
      sqlite3_bind_int64(s, 15, static_cast<sqlite3_int64>(r.output_bytes)),  // the bit pattern
      bind_text(s, 16, r.surface),
      bind_text(s, 17, r.mode),
      bind_text(s, 18, r.risk_level),
      bind_text(s, 19, t.risk_reasons),
      bind_text(s, 20, r.rule_id),
      r.approval_latency_ms ? sqlite3_bind_int64(s, 21, *r.approval_latency_ms) : sqlite3_bind_null(s, 21),
      bind_text(s, 22, r.owner),
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

/// The risk_reasons column: a JSON array of strings ("" reads as none).
std::optional<std::vector<std::string>> parse_reasons(const std::string& text) {
  if (text.empty()) return std::vector<std::string>{};
  const auto j = parse_json(text);
  if (!j || !j->is_array()) return std::nullopt;
  std::vector<std::string> out;
  for (const auto& e : *j) {
    if (!e.is_string()) return std::nullopt;
    out.push_back(e.get<std::string>());
  }
  return out;
}

/// Reads the risk_reasons of a row whose call_id is read already.
result<void> read_checked(sqlite3_stmt* s, int c, call_record& r, const std::string& path) {
  const std::string reasons = column_string(s, c + 18);
  auto rs = parse_reasons(reasons);
  if (!rs) {
    return make_error(errc::internal,
                      path + ": call_records row " + r.call_id + " has unreadable risk_reasons " + reasons);
  }
  r.risk_reasons = std::move(*rs);
  return {};
}

/// A row of k_columns starting at column `c`.
result<call_record> read_row(sqlite3_stmt* s, int c, const std::string& path) {
  call_record r;
  r.call_id = column_string(s, c);
  r.session_id = column_string(s, c + 1);
  r.tool = column_string(s, c + 2);
  r.arguments = column_string(s, c + 3);
  r.decision = column_string(s, c + 4);
  r.decided_by = column_string(s, c + 5);
  if (auto checked = read_checked(s, c, r, path); !checked) return checked.error();
  r.allowed = sqlite3_column_int(s, c + 6) != 0;
  r.approval_id = column_string(s, c + 7);
  r.reason = column_string(s, c + 8);
  r.started_unix_ms = sqlite3_column_int64(s, c + 9);
  r.finished_unix_ms = sqlite3_column_int64(s, c + 10);
  r.duration_ms = sqlite3_column_int64(s, c + 11);
  if (sqlite3_column_type(s, c + 12) != SQLITE_NULL) r.exit_status = sqlite3_column_int(s, c + 12);
  r.is_error = sqlite3_column_int(s, c + 13) != 0;
  r.output_bytes = static_cast<std::uint64_t>(sqlite3_column_int64(s, c + 14));
  r.surface = column_string(s, c + 15);
  r.mode = column_string(s, c + 16);
  r.risk_level = column_string(s, c + 17);
  r.rule_id = column_string(s, c + 19);
  if (sqlite3_column_type(s, c + 20) != SQLITE_NULL) r.approval_latency_ms = sqlite3_column_int64(s, c + 20);
  r.owner = column_string(s, c + 21);
  return r;
}

/// Steps a SELECT of (id, k_columns…) to its end.
result<std::vector<std::pair<std::int64_t, call_record>>> read_rows(connection& c, sqlite3_stmt* st,
                                                                     const std::string& path) {
  std::vector<std::pair<std::int64_t, call_record>> out;
  int rc = SQLITE_OK;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    auto r = read_row(st, 1, path);
    if (!r) return r.error();
    out.emplace_back(static_cast<std::int64_t>(sqlite3_column_int64(st, 0)), std::move(*r));
  }
  if (rc != SQLITE_DONE) return c.fail("reading call records");
  return out;
}

sqlite3_int64 clamp_limit(std::size_t limit, std::size_t cap) {
  return static_cast<sqlite3_int64>(std::min(limit, cap));
}

}  // namespace

call_log::call_log(database& db) : db_(db) {}

result<std::int64_t> call_log::insert(const call_record& r) {
  const stored_texts texts(r);
  return db_.with_connection([&](connection& c) -> result<std::int64_t> {
    auto st = c.prepare(k_insert);
    if (!st) return st.error();
    if (bind_record(st->get(), r, texts) != SQLITE_OK) return c.fail("binding a call record");
    if (sqlite3_step(st->get()) != SQLITE_DONE) return c.fail("inserting a call record");
    return static_cast<std::int64_t>(sqlite3_last_insert_rowid(c.handle()));
  });
}

result<void> call_log::update(std::int64_t row_id, const call_record& r) {
  const stored_texts texts(r);
  return db_.with_connection([&](connection& c) -> result<void> {
    auto st = c.prepare(k_update);
    if (!st) return st.error();
    if (bind_record(st->get(), r, texts) != SQLITE_OK || sqlite3_bind_int64(st->get(), 23, row_id) != SQLITE_OK) {
      return c.fail("binding a call record");
    }
    if (sqlite3_step(st->get()) != SQLITE_DONE) return c.fail("updating a call record");
    if (sqlite3_changes(c.handle()) == 0) {
      return make_error(errc::not_found, db_.path() + ": no call record with row id " + std::to_string(row_id));
    }
    return {};
  });
}

result<std::vector<std::pair<std::int64_t, call_record>>> call_log::list(const audit_query& q) const {
  return db_.with_connection([&](connection& c) -> result<std::vector<std::pair<std::int64_t, call_record>>> {
    auto st = c.prepare(list_sql(!q.session_id.empty(), q.owner.has_value()));
    if (!st) return st.error();
    int rc = sqlite3_bind_int64(st->get(), 1, q.after_row_id);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st->get(), 2, q.since_unix_ms);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st->get(), 3, clamp_limit(q.limit, k_max_audit_page));
    if (rc == SQLITE_OK && !q.session_id.empty()) rc = bind_text(st->get(), 4, q.session_id);
    if (rc == SQLITE_OK && q.owner) rc = bind_text(st->get(), 5, *q.owner);
    if (rc != SQLITE_OK) return c.fail("binding the call record query");
    return read_rows(c, st->get(), db_.path());
  });
}

result<std::vector<call_record>> call_log::recent(std::size_t limit, const std::string& session_id) const {
  return db_.with_connection([&](connection& c) -> result<std::vector<call_record>> {
    auto st = c.prepare(session_id.empty() ? k_recent : k_recent_session);
    if (!st) return st.error();
    constexpr auto k_max = static_cast<std::size_t>(std::numeric_limits<sqlite3_int64>::max());
    int rc = sqlite3_bind_int64(st->get(), 1, clamp_limit(limit, k_max));
    if (rc == SQLITE_OK && !session_id.empty()) rc = bind_text(st->get(), 2, session_id);
    if (rc != SQLITE_OK) return c.fail("binding the call record query");
    auto rows = read_rows(c, st->get(), db_.path());
    if (!rows) return rows.error();
    std::vector<call_record> out;
    out.reserve(rows->size());
    for (auto& [id, r] : *rows) out.push_back(std::move(r));
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
