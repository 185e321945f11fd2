#include "store/keyed_json_store.h"

#include <sqlite3.h>

namespace warden::store {
namespace {

std::string columns(const keyed_table& t) {
  return "SELECT id, owner, config, created_unix_ms, updated_unix_ms FROM " + t.table;
}

stored_row read_row(sqlite3_stmt* s) {
  stored_row r;
  r.id = column_string(s, 0);
  r.owner = column_string(s, 1);
  r.config_json = column_string(s, 2);
  r.created_unix_ms = sqlite3_column_int64(s, 3);
  r.updated_unix_ms = sqlite3_column_int64(s, 4);
  return r;
}

/// Whether a row with `id` exists (inside with_connection).
result<bool> exists(connection& c, const keyed_table& t, std::string_view id) {
  auto st = c.prepare("SELECT 1 FROM " + t.table + " WHERE id = ?1");
  if (!st) return st.error();
  if (bind_text(st->get(), 1, id) != SQLITE_OK) return c.fail("binding " + t.noun + " id");
  const int rc = sqlite3_step(st->get());
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) return c.fail("looking up " + t.noun);
  return rc == SQLITE_ROW;
}

}  // namespace

keyed_json_store::keyed_json_store(database& db, keyed_table t) : db_(db), t_(std::move(t)) {}

result<void> keyed_json_store::insert(const stored_row& r) {
  return db_.with_connection([&](connection& c) -> result<void> {
    auto there = exists(c, t_, r.id);
    if (!there) return there.error();
    if (*there) return make_error(errc::invalid_request, t_.noun + " with id " + r.id + " exists", "id", t_.exists_code);
    auto st = c.prepare("INSERT INTO " + t_.table +
                        " (id, owner, config, created_unix_ms, updated_unix_ms) VALUES (?1, ?2, ?3, ?4, ?5)");
    if (!st) return st.error();
    sqlite3_stmt* s = st->get();
    const int codes[] = {bind_text(s, 1, r.id), bind_text(s, 2, r.owner), bind_text(s, 3, r.config_json),
                         sqlite3_bind_int64(s, 4, r.created_unix_ms), sqlite3_bind_int64(s, 5, r.updated_unix_ms)};
    for (int rc : codes) {
      if (rc != SQLITE_OK) return c.fail("binding " + t_.noun);
    }
    if (sqlite3_step(s) != SQLITE_DONE) return c.fail("inserting " + t_.noun + " " + r.id);
    return {};
  });
}

result<bool> keyed_json_store::update(const stored_row& r) {
  return db_.with_connection([&](connection& c) -> result<bool> {
    auto st = c.prepare("UPDATE " + t_.table + " SET config = ?2, updated_unix_ms = ?3 WHERE id = ?1");
    if (!st) return st.error();
    sqlite3_stmt* s = st->get();
    const int codes[] = {bind_text(s, 1, r.id), bind_text(s, 2, r.config_json),
                         sqlite3_bind_int64(s, 3, r.updated_unix_ms)};
    for (int rc : codes) {
      if (rc != SQLITE_OK) return c.fail("binding " + t_.noun);
    }
    if (sqlite3_step(s) != SQLITE_DONE) return c.fail("updating " + t_.noun + " " + r.id);
    return sqlite3_changes(c.handle()) > 0;
  });
}

result<bool> keyed_json_store::remove(std::string_view id) {
  return db_.with_connection([&](connection& c) -> result<bool> {
    auto st = c.prepare("DELETE FROM " + t_.table + " WHERE id = ?1");
    if (!st) return st.error();
    if (bind_text(st->get(), 1, id) != SQLITE_OK) return c.fail("binding " + t_.noun + " id");
    if (sqlite3_step(st->get()) != SQLITE_DONE) return c.fail("deleting " + t_.noun);
    return sqlite3_changes(c.handle()) > 0;
  });
}

result<std::vector<stored_row>> keyed_json_store::list() const {
  return db_.with_connection([&](connection& c) -> result<std::vector<stored_row>> {
    auto st = c.prepare(columns(t_) + " ORDER BY id");
    if (!st) return st.error();
    std::vector<stored_row> out;
    int rc = SQLITE_OK;
    while ((rc = sqlite3_step(st->get())) == SQLITE_ROW) out.push_back(read_row(st->get()));
    if (rc != SQLITE_DONE) return c.fail("reading " + t_.table);
    return out;
  });
}

result<std::optional<stored_row>> keyed_json_store::find(std::string_view id) const {
  return db_.with_connection([&](connection& c) -> result<std::optional<stored_row>> {
    auto st = c.prepare(columns(t_) + " WHERE id = ?1");
    if (!st) return st.error();
    if (bind_text(st->get(), 1, id) != SQLITE_OK) return c.fail("binding " + t_.noun + " id");
    const int rc = sqlite3_step(st->get());
    if (rc == SQLITE_DONE) return std::optional<stored_row>();
    if (rc != SQLITE_ROW) return c.fail("reading " + t_.noun);
    return std::optional<stored_row>(read_row(st->get()));
  });
}

}  // namespace warden::store
