#include "store/mcp_server_store.h"

#include <sqlite3.h>

namespace warden::store {
namespace {

const std::string k_insert =
    "INSERT INTO mcp_servers (id, owner, config, created_unix_ms, updated_unix_ms) VALUES (?1, ?2, ?3, ?4, ?5)";
const std::string k_exists = "SELECT 1 FROM mcp_servers WHERE id = ?1";
const std::string k_update = "UPDATE mcp_servers SET config = ?2, updated_unix_ms = ?3 WHERE id = ?1";
const std::string k_remove = "DELETE FROM mcp_servers WHERE id = ?1";
const std::string k_columns = "SELECT id, owner, config, created_unix_ms, updated_unix_ms FROM mcp_servers";
const std::string k_list = k_columns + " ORDER BY id";
const std::string k_find = k_columns + " WHERE id = ?1";

stored_mcp_server read_row(sqlite3_stmt* s) {
  stored_mcp_server r;
  r.id = column_string(s, 0);
  r.owner = column_string(s, 1);
  r.config_json = column_string(s, 2);
  r.created_unix_ms = sqlite3_column_int64(s, 3);
  r.updated_unix_ms = sqlite3_column_int64(s, 4);
  return r;
}

/// Whether a row with `id` exists (inside with_connection).
result<bool> exists(connection& c, std::string_view id) {
  auto st = c.prepare(k_exists);
  if (!st) return st.error();
  if (bind_text(st->get(), 1, id) != SQLITE_OK) return c.fail("binding an MCP server id");
  const int rc = sqlite3_step(st->get());
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) return c.fail("looking up an MCP server");
  return rc == SQLITE_ROW;
}

}  // namespace

mcp_server_store::mcp_server_store(database& db) : db_(db) {}

result<void> mcp_server_store::insert(const stored_mcp_server& r) {
  return db_.with_connection([&](connection& c) -> result<void> {
    auto there = exists(c, r.id);
    if (!there) return there.error();
    if (*there) {
      return make_error(errc::invalid_request, "an MCP server with id " + r.id + " exists", "id", "mcp_server_exists");
    }
    auto st = c.prepare(k_insert);
    if (!st) return st.error();
    sqlite3_stmt* s = st->get();
    const int codes[] = {bind_text(s, 1, r.id), bind_text(s, 2, r.owner), bind_text(s, 3, r.config_json),
                         sqlite3_bind_int64(s, 4, r.created_unix_ms), sqlite3_bind_int64(s, 5, r.updated_unix_ms)};
    for (int rc : codes) {
      if (rc != SQLITE_OK) return c.fail("binding an MCP server");
    }
    if (sqlite3_step(s) != SQLITE_DONE) return c.fail("inserting MCP server " + r.id);
    return {};
  });
}

result<bool> mcp_server_store::update(const stored_mcp_server& r) {
  return db_.with_connection([&](connection& c) -> result<bool> {
    auto st = c.prepare(k_update);
    if (!st) return st.error();
    sqlite3_stmt* s = st->get();
    const int codes[] = {bind_text(s, 1, r.id), bind_text(s, 2, r.config_json),
                         sqlite3_bind_int64(s, 3, r.updated_unix_ms)};
    for (int rc : codes) {
      if (rc != SQLITE_OK) return c.fail("binding an MCP server");
    }
    if (sqlite3_step(s) != SQLITE_DONE) return c.fail("updating MCP server " + r.id);
    return sqlite3_changes(c.handle()) > 0;
  });
}

result<bool> mcp_server_store::remove(std::string_view id) {
  return db_.with_connection([&](connection& c) -> result<bool> {
    auto st = c.prepare(k_remove);
    if (!st) return st.error();
    if (bind_text(st->get(), 1, id) != SQLITE_OK) return c.fail("binding an MCP server id");
    if (sqlite3_step(st->get()) != SQLITE_DONE) return c.fail("deleting an MCP server");
    return sqlite3_changes(c.handle()) > 0;
  });
}

result<std::vector<stored_mcp_server>> mcp_server_store::list() const {
  return db_.with_connection([&](connection& c) -> result<std::vector<stored_mcp_server>> {
    auto st = c.prepare(k_list);
    if (!st) return st.error();
    std::vector<stored_mcp_server> out;
    int rc = SQLITE_OK;
    while ((rc = sqlite3_step(st->get())) == SQLITE_ROW) out.push_back(read_row(st->get()));
    if (rc != SQLITE_DONE) return c.fail("reading MCP servers");
    return out;
  });
}

result<std::optional<stored_mcp_server>> mcp_server_store::find(std::string_view id) const {
  return db_.with_connection([&](connection& c) -> result<std::optional<stored_mcp_server>> {
    auto st = c.prepare(k_find);
    if (!st) return st.error();
    if (bind_text(st->get(), 1, id) != SQLITE_OK) return c.fail("binding an MCP server id");
    const int rc = sqlite3_step(st->get());
    if (rc == SQLITE_DONE) return std::optional<stored_mcp_server>();
    if (rc != SQLITE_ROW) return c.fail("reading an MCP server");
    return std::optional<stored_mcp_server>(read_row(st->get()));
  });
}

}  // namespace warden::store
