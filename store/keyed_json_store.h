// warden::store::keyed_json_store — a table of entries kept as JSON text under an id, with their
// owner and times: the MCP server registry (issue 26, table `mcp_servers`) and the external
// providers (issue 28, table `providers`). The store does not read the JSON (the layers above
// convert it).
//
// Columns: id TEXT PRIMARY KEY, owner ("" = the single user), config (the entry's JSON text),
// created_unix_ms, updated_unix_ms (Unix epoch milliseconds). Strings are stored byte for byte.
// Errors: inserting an id that exists is errc::invalid_request ("<noun> with id X exists", param
// "id", the table's type code); everything else errc::internal naming the database file and
// sqlite3_errmsg (database.h). Nothing throws for SQLite errors.
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

/// One row.
struct stored_row {
  std::string id;
  std::string owner;        ///< the API key name that added it ("" = the single user)
  std::string config_json;  ///< the entry as JSON text
  std::int64_t created_unix_ms = 0;
  std::int64_t updated_unix_ms = 0;
  bool operator==(const stored_row&) const = default;
};

/// Which table, and how its errors name an entry.
struct keyed_table {
  std::string table;        ///< a table of the schema (database.cpp), never user input
  std::string noun;         ///< "an MCP server"
  std::string exists_code;  ///< "mcp_server_exists"
};

class keyed_json_store {
 public:
  keyed_json_store(database& db, keyed_table t);

  /// Adds a row; an existing id is the invalid_request error above.
  result<void> insert(const stored_row& r);
  /// Replaces config_json and updated_unix_ms of the row with r.id (owner and created_unix_ms
  /// are kept); false when there is none.
  result<bool> update(const stored_row& r);
  /// Deletes the row with this id; false when there was none.
  result<bool> remove(std::string_view id);
  /// Every row, in id order.
  result<std::vector<stored_row>> list() const;
  /// The row with this id, or nullopt.
  result<std::optional<stored_row>> find(std::string_view id) const;

 private:
  database& db_;
  keyed_table t_;
};

}  // namespace warden::store
