#include "store/call_records.h"

#include <sqlite3.h>

#include <algorithm>
#include <limits>
#include <string_view>
#include <vector>

#include "common/json_util.h"
#include "secrets/redact.h"
#include "store/call_chain.h"
#include "store/sha256.h"

namespace warden::store {
namespace {

constexpr int k_fields = 25;  // the bound columns: every column but row_hash

std::string placeholders(int from, int n) {
  std::string out;
  for (int i = from; i < from + n; ++i) out += (i > from ? ", ?" : "?") + std::to_string(i);
  return out;
}

/// The columns before row_hash, for INSERT and UPDATE.
std::string written_columns() {
  const std::string& all = chain::columns();
  return all.substr(0, all.rfind(", "));
}

std::string update_sql() {
  std::string sets;
  const std::string cols = written_columns();
  std::size_t pos = 0;
  for (int i = 1; i <= k_fields; ++i) {
    const std::size_t comma = cols.find(", ", pos);
    const std::string name = cols.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    sets += (i > 1 ? ", " : "") + name + " = ?" + std::to_string(i);
    pos = comma == std::string::npos ? cols.size() : comma + 2;
  }
  return "UPDATE call_records SET " + sets + " WHERE id = ?" + std::to_string(k_fields + 1);
}

const std::string k_insert =
    "INSERT INTO call_records (" + written_columns() + ") VALUES (" + placeholders(1, k_fields) + ")";
const std::string k_update = update_sql();
const std::string k_status = "SELECT status, notes FROM call_records WHERE id = ?1";
const std::string k_select = "SELECT id, " + chain::columns() + " FROM call_records";
const std::string k_recent = k_select + " ORDER BY started_unix_ms DESC, id DESC LIMIT ?1";
const std::string k_recent_session = k_select + " WHERE session_id = ?2 ORDER BY started_unix_ms DESC, id DESC LIMIT ?1";
/// The page query of list(): ?1 after, ?2 since, ?3 limit, ?4 session_id, ?5 owner (only the
/// filters asked for are in the text, so each combination keeps its own plan).
std::string list_sql(bool by_session, bool by_owner) {
  std::string sql = k_select + " WHERE id > ?1 AND started_unix_ms >= ?2";
  if (by_session) sql += " AND session_id = ?4";
  if (by_owner) sql += " AND owner = ?5";
  return sql + " ORDER BY id LIMIT ?3";
}
const std::string k_count = "SELECT COUNT(*) FROM call_records";


bool known_status(std::string_view s) { return s == "pending" || s == "ran" || s == "not_run"; }

/// A write may keep a row's status or move it from pending; never back (call_records.h).
std::string json_list(const std::vector<std::string>& items) { return dump_safe(json(items)); }

/// The texts a record is stored as, where they differ from the record's own.
struct stored_texts {
  std::string arguments, reason, risk_reasons, arguments_sha256, status, notes;
  bool allowed = false;
  explicit stored_texts(const call_record& r)
      : arguments(secrets::redact_secrets(r.arguments)),
        reason(secrets::redact_secrets(r.reason)),
        risk_reasons(json_list(redacted(r.risk_reasons))),
        arguments_sha256(sha256_hex(r.arguments)),
        status(r.status.empty() ? (r.allowed ? "ran" : "not_run") : r.status),
        notes(json_list(r.notes)),
        allowed(status == "ran" || (status == "pending" && r.allowed)) {}

  /// Each reason redacted on its own (a reason may quote the command it is about).
  static std::vector<std::string> redacted(const std::vector<std::string>& reasons) {
    std::vector<std::string> out;
    out.reserve(reasons.size());
    for (const auto& x : reasons) out.push_back(secrets::redact_secrets(x));
    return out;
  }
};

/// Binds ?1..?25 (written_columns() order); `t` must outlive the statement's use.
int bind_record(sqlite3_stmt* s, const call_record& r, const stored_texts& t) {
  const int codes[] = {
      bind_text(s, 1, r.call_id),
      bind_text(s, 2, r.session_id),
      bind_text(s, 3, r.tool),
      bind_text(s, 4, t.arguments),
      bind_text(s, 5, r.decision),
      bind_text(s, 6, r.decided_by),
      sqlite3_bind_int(s, 7, t.allowed ? 1 : 0),
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
      bind_text(s, 22, t.arguments_sha256),
      bind_text(s, 23, t.status),
      bind_text(s, 24, t.notes),
      bind_text(s, 25, r.owner),
  };
  for (int rc : codes) {
    if (rc != SQLITE_OK) return rc;
  }
  return SQLITE_OK;
}

/// Runs fn() between BEGIN IMMEDIATE and COMMIT; rolls back when it (or the commit) fails.
template <class F>
auto in_transaction(connection& c, F fn) -> decltype(fn()) {
  if (auto b = c.exec("BEGIN IMMEDIATE"); !b) return b.error();
  auto out = fn();
  if (out) {
    if (auto done = c.exec("COMMIT"); done) return out;
    else out = done.error();
  }
  (void)c.exec("ROLLBACK");
  return out;
}

/// A JSON array of strings column ("" reads as none).
std::optional<std::vector<std::string>> parse_list(const std::string& text) {
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

/// Reads the JSON list column `i` of a row whose call_id is read already.
result<std::vector<std::string>> read_list(sqlite3_stmt* s, int i, const char* what, const call_record& r,
                                           const std::string& path) {
  const std::string text = column_string(s, i);
  auto items = parse_list(text);
  if (!items) {
    return make_error(errc::internal,
                      path + ": call_records row " + r.call_id + " has unreadable " + what + " " + text);
  }
  return std::move(*items);
}

/// A row of chain::columns() starting at column `c`.
result<call_record> read_row(sqlite3_stmt* s, int c, const std::string& path) {
  call_record r;
  r.call_id = column_string(s, c);
  r.session_id = column_string(s, c + 1);
  r.tool = column_string(s, c + 2);
  r.arguments = column_string(s, c + 3);
  r.decision = column_string(s, c + 4);
  r.decided_by = column_string(s, c + 5);
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
  auto reasons = read_list(s, c + 18, "risk_reasons", r, path);
  if (!reasons) return reasons.error();
  r.risk_reasons = std::move(*reasons);
  r.rule_id = column_string(s, c + 19);
  if (sqlite3_column_type(s, c + 20) != SQLITE_NULL) r.approval_latency_ms = sqlite3_column_int64(s, c + 20);
  r.arguments_sha256 = column_string(s, c + 21);
  r.status = column_string(s, c + 22);
  auto notes = read_list(s, c + 23, "notes", r, path);
  if (!notes) return notes.error();
  r.notes = std::move(*notes);
  r.owner = column_string(s, c + 24);
  r.row_hash = column_string(s, c + 25);
  return r;
}

/// Steps a SELECT of (id, chain::columns()…) to its end.
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

/// The status and notes row `row_id` has now; errc::not_found when there is no such row.
result<std::pair<std::string, std::vector<std::string>>> current_state(connection& c, std::int64_t row_id,
                                                                       const std::string& path) {
  auto st = c.prepare(k_status);
  if (!st) return st.error();
  if (sqlite3_bind_int64(st->get(), 1, row_id) != SQLITE_OK) return c.fail("binding the call record query");
  const int rc = sqlite3_step(st->get());
  if (rc == SQLITE_DONE) return make_error(errc::not_found, path + ": no call record with row id " + std::to_string(row_id));
  if (rc != SQLITE_ROW) return c.fail("reading a call record's status");
  auto notes = parse_list(column_string(st->get(), 1));
  return std::pair{column_string(st->get(), 0), notes.value_or(std::vector<std::string>{})};
}

/// `had` followed by the notes of `add` it does not hold yet.
std::vector<std::string> merged(std::vector<std::string> had, const std::vector<std::string>& add) {
  for (const auto& n : add) {
    if (std::find(had.begin(), had.end(), n) == had.end()) had.push_back(n);
  }
  return had;
}

result<void> check_status(const call_record& r) {
  if (r.status.empty() || known_status(r.status)) return {};
  return make_error(errc::invalid_request, "call record status \"" + r.status + "\" is not pending, ran or not_run");
}

}  // namespace

call_log::call_log(database& db) : db_(db) {}

result<std::int64_t> call_log::insert(const call_record& r) {
  if (auto ok = check_status(r); !ok) return ok.error();
  const stored_texts texts(r);
  return db_.with_connection([&](connection& c) -> result<std::int64_t> {
    return in_transaction(c, [&]() -> result<std::int64_t> {
      auto st = c.prepare(k_insert);
      if (!st) return st.error();
      if (bind_record(st->get(), r, texts) != SQLITE_OK) return c.fail("binding a call record");
      if (sqlite3_step(st->get()) != SQLITE_DONE) return c.fail("inserting a call record");
      const auto id = static_cast<std::int64_t>(sqlite3_last_insert_rowid(c.handle()));
      if (auto chained = chain::append_event(c, id); !chained) return chained.error();
      return id;
    });
  });
}

result<void> call_log::update(std::int64_t row_id, const call_record& r) {
  if (auto ok = check_status(r); !ok) return ok.error();
  stored_texts texts(r);
  return db_.with_connection([&](connection& c) -> result<void> {
    return in_transaction(c, [&]() -> result<void> {
      auto now = current_state(c, row_id, db_.path());
      if (!now) return now.error();
      if (!chain::moves_forward(now->first, texts.status)) {
        return make_error(errc::forbidden, db_.path() + ": call record " + std::to_string(row_id) + " says \"" +
                                               now->first + "\"; a later write cannot make it \"" + texts.status +
                                               "\" (rows move forward only)");
      }
      texts.notes = json_list(merged(std::move(now->second), r.notes));
      auto st = c.prepare(k_update);
      if (!st) return st.error();
      if (bind_record(st->get(), r, texts) != SQLITE_OK ||
          sqlite3_bind_int64(st->get(), k_fields + 1, row_id) != SQLITE_OK) {
        return c.fail("binding a call record");
      }
      if (sqlite3_step(st->get()) != SQLITE_DONE) return c.fail("updating a call record");
      return chain::append_event(c, row_id);
    });
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

result<chain_report> call_log::verify() const {
  return db_.with_connection([&](connection& c) -> result<chain_report> {
    if (auto b = c.exec("BEGIN"); !b) return b.error();  // one snapshot, while a server writes
    auto report = chain::verify(c);
    (void)c.exec("COMMIT");
    return report;
  });
}

}  // namespace warden::store
