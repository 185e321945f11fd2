#include "store/responses_store.h"

#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <limits>

namespace warden::store {
namespace {

constexpr const char* k_columns =
    "id, created_at, updated_at, status, previous_id, background, response_json, input_items_json,"
    " conversation_json, pending_json, request_json, owner, session, bytes";

// An upsert, not INSERT OR REPLACE: REPLACE deletes the old row first, and with foreign_keys ON
// that delete would cascade to the row's events.
const std::string k_put = std::string("INSERT INTO responses (") + k_columns +
                          ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)"
                          " ON CONFLICT (id) DO UPDATE SET created_at = excluded.created_at,"
                          " updated_at = excluded.updated_at, status = excluded.status,"
                          " previous_id = excluded.previous_id, background = excluded.background,"
                          " response_json = excluded.response_json, input_items_json = excluded.input_items_json,"
                          " conversation_json = excluded.conversation_json, pending_json = excluded.pending_json,"
                          " request_json = excluded.request_json, owner = excluded.owner, session = excluded.session,"
                          " bytes = excluded.bytes";
const std::string k_get = std::string("SELECT ") + k_columns + " FROM responses WHERE id = ?1";
const std::string k_remove = "DELETE FROM responses WHERE id = ?1";
const std::string k_append =
    "INSERT INTO response_events (response_id, sequence_number, event_json, created_at) VALUES (?1, ?2, ?3, ?4)";
const std::string k_events_after =
    "SELECT sequence_number, event_json FROM response_events WHERE response_id = ?1 AND sequence_number > ?2"
    " ORDER BY sequence_number LIMIT ?3";
const std::string k_purge = "DELETE FROM response_events WHERE created_at < ?1";
const std::string k_usage =
    "SELECT COALESCE(SUM(bytes + events_bytes), 0), COALESCE(SUM(CASE WHEN owner = ?1 AND session = ?2"
    " THEN bytes + events_bytes ELSE 0 END), 0) FROM responses INDEXED BY responses_usage";
const std::string k_sweep =
    "DELETE FROM responses WHERE updated_at < ?1 AND status NOT IN ('queued', 'in_progress')";
const std::string k_unfinished =
    "SELECT id FROM responses WHERE status IN ('queued', 'in_progress') ORDER BY created_at, id";

/// "" is bound as NULL.
int bind_text_or_null(sqlite3_stmt* s, int i, std::string_view v) {
  return v.empty() ? sqlite3_bind_null(s, i) : bind_text(s, i, v);
}


/// A row at least this large is followed by a truncating checkpoint (put()).
constexpr std::int64_t k_checkpoint_after_bytes = std::int64_t{1} << 20;

/// Bytes of a row's texts (what the bytes column holds).
std::int64_t text_bytes(const stored_response& r) {
  return static_cast<std::int64_t>(r.response_json.size() + r.input_items_json.size() + r.conversation_json.size() +
                                   r.pending_json.size() + r.request_json.size());
}

/// Binds ?1..?14 in k_columns order; `r` outlives the statement's use.
int bind_response(sqlite3_stmt* s, const stored_response& r) {
  const int codes[] = {bind_text(s, 1, r.id),
                       sqlite3_bind_int64(s, 2, r.created_at),
                       sqlite3_bind_int64(s, 3, r.updated_at),
                       bind_text(s, 4, r.status),
                       bind_text_or_null(s, 5, r.previous_id),
                       sqlite3_bind_int(s, 6, r.background ? 1 : 0),
                       bind_text(s, 7, r.response_json),
                       bind_text(s, 8, r.input_items_json),
                       bind_text(s, 9, r.conversation_json),
                       bind_text_or_null(s, 10, r.pending_json),
                       bind_text_or_null(s, 11, r.request_json),
                       bind_text(s, 12, r.owner),
                       bind_text(s, 13, r.session),
                       sqlite3_bind_int64(s, 14, text_bytes(r))};
  for (int rc : codes) {
    if (rc != SQLITE_OK) return rc;
  }
  return SQLITE_OK;
}

/// The current row of a k_columns query.
stored_response read_response(sqlite3_stmt* s) {
  stored_response r;
  r.id = column_string(s, 0);
  r.created_at = sqlite3_column_int64(s, 1);
  r.updated_at = sqlite3_column_int64(s, 2);
  r.status = column_string(s, 3);
  r.previous_id = column_string(s, 4);
  r.background = sqlite3_column_int(s, 5) != 0;
  r.response_json = column_string(s, 6);
  r.input_items_json = column_string(s, 7);
  r.conversation_json = column_string(s, 8);
  r.pending_json = column_string(s, 9);
  r.request_json = column_string(s, 10);
  r.owner = column_string(s, 11);
  r.session = column_string(s, 12);
  return r;
}

std::int64_t now_unix_s() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

/// A size_t limit as SQLite's LIMIT (capped at INT64_MAX).
std::int64_t as_limit(std::size_t limit) {
  constexpr auto k_max = static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max());
  return static_cast<std::int64_t>(limit < k_max ? limit : k_max);
}

}  // namespace

response_store::response_store(database& db) : db_(db) {}

result<void> response_store::put(const stored_response& r) {
  return db_.with_connection([&](connection& c) -> result<void> {
    auto st = c.prepare(k_put);
    if (!st) return st.error();
    if (bind_response(st->get(), r) != SQLITE_OK) return c.fail("binding response " + r.id);
    if (sqlite3_step(st->get()) != SQLITE_DONE) return c.fail("storing response " + r.id);
    // A large row went through the write-ahead log whole: give that space back now, so the files
    // on disk stay near the stored bytes the quota counts (busy readers only make this a no-op).
    if (text_bytes(r) >= k_checkpoint_after_bytes) (void)c.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    return {};
  });
}

result<std::optional<stored_response>> response_store::get(std::string_view id) {
  return db_.with_connection([&](connection& c) -> result<std::optional<stored_response>> {
    auto st = c.prepare(k_get);
    if (!st) return st.error();
    sqlite3_stmt* s = st->get();
    if (bind_text(s, 1, id) != SQLITE_OK) return c.fail("binding a response id");
    const int rc = sqlite3_step(s);
    if (rc == SQLITE_DONE) return std::optional<stored_response>();
    if (rc != SQLITE_ROW) return c.fail("reading response " + std::string(id));
    return std::optional<stored_response>(read_response(s));
  });
}

result<bool> response_store::remove(std::string_view id) {
  return db_.with_connection([&](connection& c) -> result<bool> {
    auto st = c.prepare(k_remove);
    if (!st) return st.error();
    if (bind_text(st->get(), 1, id) != SQLITE_OK) return c.fail("binding a response id");
    if (sqlite3_step(st->get()) != SQLITE_DONE) return c.fail("deleting response " + std::string(id));
    return sqlite3_changes(c.handle()) > 0;  // the row itself; cascaded events are not counted
  });
}

result<void> response_store::append_events(std::string_view id,
                                           const std::vector<std::pair<std::int64_t, std::string>>& events) {
  const std::int64_t now = now_unix_s();
  return db_.with_connection([&](connection& c) -> result<void> {
    if (auto b = c.exec("BEGIN"); !b) return b.error();
    for (const auto& [seq, text] : events) {
      auto st = c.prepare(k_append);
      if (!st) {
        (void)c.exec("ROLLBACK");
        return st.error();
      }
      sqlite3_stmt* s = st->get();
      const bool bound = bind_text(s, 1, id) == SQLITE_OK && sqlite3_bind_int64(s, 2, seq) == SQLITE_OK &&
                         bind_text(s, 3, text) == SQLITE_OK && sqlite3_bind_int64(s, 4, now) == SQLITE_OK;
      if (!bound || sqlite3_step(s) != SQLITE_DONE) {
        auto e = c.fail("appending event " + std::to_string(seq) + " of response " + std::string(id));
        (void)c.exec("ROLLBACK");
        return e;
      }
    }
    return c.exec("COMMIT");
  });
}

result<std::optional<std::string>> response_store::find_pending(std::string_view approval_request_id,
                                                                std::optional<std::string_view> owner) {
  const bool made_by_warden =
      approval_request_id.size() > 5 && approval_request_id.size() <= 128 && approval_request_id.starts_with("mcpr_") &&
      std::all_of(approval_request_id.begin(), approval_request_id.end(),
                  [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-'; });
  if (!made_by_warden) return std::optional<std::string>();
  // An object key: the quoted id followed by ':' (inside a JSON string a quote is escaped).
  const std::string key = "\"" + std::string(approval_request_id) + "\":";
  return db_.with_connection([&](connection& c) -> result<std::optional<std::string>> {
    auto sel = c.prepare(
        "SELECT id FROM responses WHERE pending_json IS NOT NULL AND instr(pending_json, ?1) > 0"
        " AND (?2 IS NULL OR owner = ?2) LIMIT 1");
    if (!sel) return sel.error();
    if (bind_text(sel->get(), 1, key) != SQLITE_OK) return c.fail("binding an approval request id");
    const int bound = owner ? bind_text(sel->get(), 2, *owner) : sqlite3_bind_null(sel->get(), 2);
    if (bound != SQLITE_OK) return c.fail("binding an owner");
    const int rc = sqlite3_step(sel->get());
    if (rc == SQLITE_DONE) return std::optional<std::string>();
    if (rc != SQLITE_ROW) return c.fail("looking up an approval request");
    return std::optional<std::string>(column_string(sel->get(), 0));
  });
}

result<std::string> response_store::take_pending(std::string_view id) {
  return db_.with_connection([&](connection& c) -> result<std::string> {
    auto sel = c.prepare("SELECT pending_json FROM responses WHERE id = ?1");
    if (!sel) return sel.error();
    if (bind_text(sel->get(), 1, id) != SQLITE_OK) return c.fail("binding a response id");
    const int rc = sqlite3_step(sel->get());
    if (rc == SQLITE_DONE) return std::string();
    if (rc != SQLITE_ROW) return c.fail("reading the pending calls of response " + std::string(id));
    std::string pending = column_string(sel->get(), 0);
    if (pending.empty()) return pending;
    auto upd = c.prepare("UPDATE responses SET pending_json = NULL WHERE id = ?1");
    if (!upd) return upd.error();
    if (bind_text(upd->get(), 1, id) != SQLITE_OK) return c.fail("binding a response id");
    if (sqlite3_step(upd->get()) != SQLITE_DONE) return c.fail("clearing the pending calls of response " + std::string(id));
    return pending;
  });
}

result<void> response_store::append_event(std::string_view id, std::int64_t sequence_number,
                                          std::string_view event_json) {
  const std::int64_t now = now_unix_s();
  return db_.with_connection([&](connection& c) -> result<void> {
    auto st = c.prepare(k_append);
    if (!st) return st.error();
    sqlite3_stmt* s = st->get();
    const int codes[] = {bind_text(s, 1, id), sqlite3_bind_int64(s, 2, sequence_number),
                         bind_text(s, 3, event_json), sqlite3_bind_int64(s, 4, now)};
    for (int rc : codes) {
      if (rc != SQLITE_OK) return c.fail("binding a response event");
    }
    if (sqlite3_step(s) != SQLITE_DONE) {
      return c.fail("appending event " + std::to_string(sequence_number) + " of response " + std::string(id));
    }
    return {};
  });
}

result<std::vector<std::pair<std::int64_t, std::string>>> response_store::events_after(std::string_view id,
                                                                                        std::int64_t after,
                                                                                        std::size_t limit) {
  using events = std::vector<std::pair<std::int64_t, std::string>>;
  return db_.with_connection([&](connection& c) -> result<events> {
    auto st = c.prepare(k_events_after);
    if (!st) return st.error();
    sqlite3_stmt* s = st->get();
    const int codes[] = {bind_text(s, 1, id), sqlite3_bind_int64(s, 2, after),
                         sqlite3_bind_int64(s, 3, as_limit(limit))};
    for (int rc : codes) {
      if (rc != SQLITE_OK) return c.fail("binding an event query");
    }
    events out;
    int rc = SQLITE_OK;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) out.emplace_back(sqlite3_column_int64(s, 0), column_string(s, 1));
    if (rc != SQLITE_DONE) return c.fail("reading events of response " + std::string(id));
    return out;
  });
}

result<std::int64_t> response_store::purge_events_before(std::int64_t before_unix_s) {
  return db_.with_connection([&](connection& c) -> result<std::int64_t> {
    auto st = c.prepare(k_purge);
    if (!st) return st.error();
    if (sqlite3_bind_int64(st->get(), 1, before_unix_s) != SQLITE_OK) return c.fail("binding the purge time");
    if (sqlite3_step(st->get()) != SQLITE_DONE) return c.fail("purging response events");
    return static_cast<std::int64_t>(sqlite3_changes64(c.handle()));
  });
}

result<response_store::usage> response_store::bytes_used(std::string_view owner, std::string_view session) {
  return db_.with_connection([&](connection& c) -> result<usage> {
    auto st = c.prepare(k_usage);
    if (!st) return st.error();
    sqlite3_stmt* s = st->get();
    if (bind_text(s, 1, owner) != SQLITE_OK || bind_text(s, 2, session) != SQLITE_OK) {
      return c.fail("binding a usage query");
    }
    if (sqlite3_step(s) != SQLITE_ROW) return c.fail("summing the stored bytes");
    return usage{sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1)};
  });
}

result<std::int64_t> response_store::remove_finished_before(std::int64_t before_unix_s) {
  return db_.with_connection([&](connection& c) -> result<std::int64_t> {
    auto st = c.prepare(k_sweep);
    if (!st) return st.error();
    if (sqlite3_bind_int64(st->get(), 1, before_unix_s) != SQLITE_OK) return c.fail("binding the sweep time");
    if (sqlite3_step(st->get()) != SQLITE_DONE) return c.fail("sweeping expired responses");
    return static_cast<std::int64_t>(sqlite3_changes64(c.handle()));  // rows; their events cascade
  });
}

result<std::vector<std::string>> response_store::unfinished_ids() {
  return db_.with_connection([&](connection& c) -> result<std::vector<std::string>> {
    auto st = c.prepare(k_unfinished);
    if (!st) return st.error();
    sqlite3_stmt* s = st->get();
    std::vector<std::string> out;
    int rc = SQLITE_OK;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) out.push_back(column_string(s, 0));
    if (rc != SQLITE_DONE) return c.fail("listing unfinished responses");
    return out;
  });
}

}  // namespace warden::store
