// warden::store::mcp_server_store — the registry of MCP servers (issue 26), so entries added on
// the control surface or imported at start-up (--mcp-config) survive restarts.
//
// Table `mcp_servers` (schema version 9, database.cpp), a keyed_json_store (keyed_json_store.h:
// columns, errors, thread-safety): config is the entry's JSON text (tools/mcp_config.h to_json;
// this table does not read it: the store is below tools/, api/control converts). Inserting an id
// that exists is errc::invalid_request "an MCP server with id X exists" (param "id", type code
// "mcp_server_exists").
#pragma once

#include "store/keyed_json_store.h"

namespace warden::store {

/// One row of `mcp_servers`.
using stored_mcp_server = stored_row;

class mcp_server_store : public keyed_json_store {
 public:
  explicit mcp_server_store(database& db) : keyed_json_store(db, {"mcp_servers", "an MCP server", "mcp_server_exists"}) {}
};

}  // namespace warden::store
