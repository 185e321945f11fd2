// warden::store::mcp_server_store — the registry of MCP servers (issue 26), so entries added on
// the control surface or imported at start-up (--mcp-config) survive restarts.
//
// Table `mcp_servers` (schema version 9, database.cpp): id TEXT PRIMARY KEY, owner ("" = the
// single user), config (the entry's JSON text, tools/mcp_config.h to_json; this table does not
// read it: the store is below tools/, api/control converts), created_unix_ms, updated_unix_ms.
// Strings are stored byte for byte with their length. Times are Unix epoch milliseconds.
// Errors: inserting an id that exists is errc::invalid_request ("an MCP server with id X exists",
// param "id", type code "mcp_server_exists"); everything else errc::internal naming the
// database file and sqlite3_errmsg (database.h). Nothing throws for SQLite errors.
// Thread-safety: thread-safe (it serializes on the database); it only borrows the database,
// which must outlive it. Calls block: run them off the io threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "store/database.h"

namespace warden::store {

/// One row of `mcp_servers`.
struct stored_mcp_server {
  std::string id;           ///< the entry's id (tools::valid_mcp_server_id; not checked here)
  std::string owner;        ///< the API key name that added it ("" = the single user)
  std::string config_json;  ///< the entry as JSON text
  std::int64_t created_unix_ms = 0;
  std::int64_t updated_unix_ms = 0;
  bool operator==(const stored_mcp_server&) const = default;
};

class mcp_server_store {
 public:
  explicit mcp_server_store(database& db);

  /// Adds a server; an existing id is the invalid_request error above.
  result<void> insert(const stored_mcp_server& s);
  /// Replaces config_json and updated_unix_ms of the row with s.id (owner and created_unix_ms
  /// are kept); false when there is none.
  result<bool> update(const stored_mcp_server& s);
  /// Deletes the server with this id; false when there was none.
  result<bool> remove(std::string_view id);
  /// Every server, in id order.
  result<std::vector<stored_mcp_server>> list() const;
  /// The server with this id, or nullopt.
  result<std::optional<stored_mcp_server>> find(std::string_view id) const;

 private:
  database& db_;
};

}  // namespace warden::store
