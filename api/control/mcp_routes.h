// The MCP server registry on the control surface (issue 26; reference unsloth-studio.md §4.8).
//
//   GET    /api/mcp/servers                 → {"object":"list","data":[entry + "status"…]} (id order)
//   POST   /api/mcp/servers                 {entry} → 201 entry + "status"
//   GET    /api/mcp/servers/{id}            → entry + "status" + "tools":[tool…]
//   PUT    /api/mcp/servers/{id}            {entry} → 200 entry + "status" (replaces it; owner and
//                                           created_at_ms kept; a body "id" must be {id})
//   DELETE /api/mcp/servers/{id}            → {"deleted":true,"id"}
//   POST   /api/mcp/servers/{id}/refresh    → status (connects or reconnects now, lists the tools)
//   POST   /api/mcp/servers/{id}/test       → status, or 502 with why it failed
//   POST   /api/mcp/servers/test            {entry} → the same for an entry not saved ("id" may
//                                           be left out: "test")
//   POST   /api/mcp/import                  {"document": {"mcpServers"|"servers": {…}} | {name:
//                                           {…}}, "replace"?: bool} → {"object":"list","data":
//                                           [entry…]} (the entries added or replaced)
//   GET    /api/mcp/servers/{id}/prompts    → {"object":"list","data":[prompt…]} (the server's
//                                           prompts/list; 502 when it cannot be reached)
// entry = tools/mcp_config.h to_json (owner, created_at_ms and updated_at_ms are the server's:
// what a body says there is replaced). status = tools/mcp_control.h to_json(mcp_server_status)
// as control->statuses() reports it; without "tools" and with "tool_count" inside an entry (the
// tools of GET {id} are its top-level "tools"); {"id","state":"idle"|"disabled",…} before the
// manager reports one. refresh and test answer the whole status, tools included.
// After every change the whole registry is handed to control->configure() (reload()).
// Who may: every key reads (GET); POST, PUT and DELETE need the single user or an admin key
// (a named user key: 403 admin_only — an entry may start a program on this machine). An entry
// with "sandbox": false runs its server outside the jail: refused (403
// permission_mode_not_allowed) unless warden runs with --max-permission full.
// Errors: the control surface's OpenAI envelope; 400 for a bad entry (tools/mcp_config.h: param
// names the field, "document.servers.<name>.<field>" in imports) or an id that exists
// (mcp_server_exists; an import answers it unless "replace": true, writing nothing); 404
// mcp_server_not_found; 502 mcp_server_error when a server cannot be reached; 503 without a
// store or a manager. SQLite calls run on deps.pool (inline when null, as in tests).
// Thread-safety: handlers run concurrently; the store and the control are thread-safe.
#pragma once

#include <string>
#include <vector>

#include "api/control/routes.h"
#include "common/blocking_pool.h"
#include "common/permission_mode.h"
#include "common/result.h"
#include "store/mcp_server_store.h"
#include "tools/mcp_config.h"
#include "tools/mcp_control.h"

namespace warden::api::control {

struct mcp_deps {
  store::mcp_server_store* store = nullptr;  ///< null: 503
  tools::mcp_control* control = nullptr;     ///< null: 503
  permission_mode max_permission = permission_mode::full;  ///< --max-permission: "sandbox": false needs full
  blocking_pool* pool = nullptr;             ///< where SQLite runs (null: inline)
};

/// The routes above. `deps` must outlive them.
std::vector<route> mcp_routes(mcp_deps& deps);

/// Every stored entry, parsed, in id order (what control->configure() gets); a stored entry
/// that no longer parses is left out with a warning in the log. Blocking.
result<std::vector<tools::mcp_server_config>> load_mcp_servers(store::mcp_server_store& store);

/// --mcp-config FILE at start-up: reads the file (an mcpServers / servers document,
/// tools/mcp_config.h parse_mcp_servers_document) and writes each entry to the store, owner "",
/// replacing an entry with the same id (its created_at_ms kept). An entry with "sandbox": false
/// is refused unless `max_permission` is full. Errors (errc::invalid_request, nothing written)
/// name the file: unreadable, not JSON, or the first bad entry. Blocking.
result<void> import_mcp_config_file(const std::string& path, store::mcp_server_store& store,
                                    permission_mode max_permission = permission_mode::full);

}  // namespace warden::api::control
