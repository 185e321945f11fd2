#include "store/permission_rules_store.h"

#include <sqlite3.h>

namespace warden::store {
namespace {

const std::string k_insert =
    "INSERT INTO permission_rules (id, scope, session_id, tool, command_prefix, path_prefix, arguments,"
    " created_unix_ms, expires_unix_ms, owner) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)";
const std::string k_list =
    "SELECT id, scope, session_id, tool, command_prefix, path_prefix, arguments, created_unix_ms, expires_unix_ms,"
    " owner FROM permission_rules ORDER BY created_unix_ms, id";
const std::string k_remove = "DELETE FROM permission_rules WHERE id = ?1";
const std::string k_remove_expired =
    "DELETE FROM permission_rules WHERE expires_unix_ms > 0 AND expires_unix_ms <= ?1";

int bind_optional(sqlite3_stmt* s, int i, const std::optional<std::string>& v) {
  return v ? bind_text(s, i, *v) : sqlite3_bind_null(s, i);
}

std::optional<std::string> column_optional(sqlite3_stmt* s, int i) {
  if (sqlite3_column_type(s, i) == SQLITE_NULL) return std::nullopt;
  const auto* p = sqlite3_column_text(s, i);  // before column_bytes, as SQLite requires
  const int n = sqlite3_column_bytes(s, i);
  if (p == nullptr || n <= 0) return std::string();
  return std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(n));
}

}  // namespace

rule_store::rule_store(database& db) : db_(db) {}

result<void> rule_store::insert(const stored_rule& r) {
  return db_.with_connection([&](connection& c) -> result<void> {
    auto st = c.prepare(k_insert);
    if (!st) return st.error();
    sqlite3_stmt* s = st->get();
    const int codes[] = {bind_text(s, 1, r.id),
                         bind_text(s, 2, r.scope),
                         bind_text(s, 3, r.session_id),
                         bind_text(s, 4, r.tool),
                         bind_optional(s, 5, r.command_prefix),
                         bind_optional(s, 6, r.path_prefix),
                         bind_optional(s, 7, r.arguments),
                         sqlite3_bind_int64(s, 8, r.created_unix_ms),
                         sqlite3_bind_int64(s, 9, r.expires_unix_ms),
                         bind_text(s, 10, r.owner)};
    for (int rc : codes) {
      if (rc != SQLITE_OK) return c.fail("binding a permission rule");
    }
    if (sqlite3_step(s) != SQLITE_DONE) return c.fail("inserting permission rule " + r.id);
    return {};
  });
}

result<std::vector<stored_rule>> rule_store::list() const {
  return db_.with_connection([&](connection& c) -> result<std::vector<stored_rule>> {
    auto st = c.prepare(k_list);
    if (!st) return st.error();
    sqlite3_stmt* s = st->get();
    std::vector<stored_rule> out;
    int rc = SQLITE_OK;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
      stored_rule r;
      r.id = column_string(s, 0);
      r.scope = column_string(s, 1);
      r.session_id = column_string(s, 2);
      r.tool = column_string(s, 3);
      r.command_prefix = column_optional(s, 4);
      r.path_prefix = column_optional(s, 5);
      r.arguments = column_optional(s, 6);
      r.created_unix_ms = sqlite3_column_int64(s, 7);
      r.expires_unix_ms = sqlite3_column_int64(s, 8);
      r.owner = column_string(s, 9);
      out.push_back(std::move(r));
    }
    if (rc != SQLITE_DONE) return c.fail("reading permission rules");
    return out;
  });
}

result<bool> rule_store::remove(std::string_view id) {
  return db_.with_connection([&](connection& c) -> result<bool> {
    auto st = c.prepare(k_remove);
    if (!st) return st.error();
    if (bind_text(st->get(), 1, id) != SQLITE_OK) return c.fail("binding a permission rule id");
    if (sqlite3_step(st->get()) != SQLITE_DONE) return c.fail("deleting a permission rule");
    return sqlite3_changes(c.handle()) > 0;
  });
}

result<std::size_t> rule_store::remove_expired(std::int64_t now_ms) {
  return db_.with_connection([&](connection& c) -> result<std::size_t> {
    auto st = c.prepare(k_remove_expired);
    if (!st) return st.error();
    if (sqlite3_bind_int64(st->get(), 1, now_ms) != SQLITE_OK) return c.fail("binding the expiry time");
    if (sqlite3_step(st->get()) != SQLITE_DONE) return c.fail("deleting expired permission rules");
    return static_cast<std::size_t>(sqlite3_changes(c.handle()));
  });
}

}  // namespace warden::store
