// mcp_config — one MCP server entry of the registry (issue 26; reference unsloth-studio.md §4.8),
// its JSON form on the control surface and in the store, and the import of the common
// `mcpServers` files (Claude Desktop, Cursor) and VS Code's `servers` (pure; table-tested).
//
// An entry is `stdio` (a long-lived child: command, args, env, cwd) or `http` (Streamable HTTP:
// url, headers, bearer_token_env). Secrets are never stored in clear: a header value or an env
// value may be a reference `${env:NAME}` (also `${NAME}`), resolved from warden's own environment
// when the server is started (resolve_references); `bearer_token_env` names the variable whose
// value becomes `Authorization: Bearer …`. An `Authorization` header, or any header or env value
// the secret detector flags, given literally is refused (400) with a message telling how to
// write the reference. to_json() shows names and references, never resolved values.
//
// Fields (JSON, snake_case; unknown fields → 400):
//   id            ^[A-Za-z0-9_-]{1,32}$, no "__", not ending in "_" — the prefix of its tools'
//                 names (`<id>__<tool>`)
//   name          display name (≤ 100 chars; default: id)
//   transport     "stdio" | "http" (default: "http" when `url` is given, else "stdio")
//   command, args, env {NAME: value}, cwd     — stdio (command required, ≤ 4096 chars each)
//   url, headers {Name: value}, bearer_token_env — http (url http:// or https:// required)
//   enabled (true), timeout_ms (60000; 1000..3600000), allowed_tools ([names] or null = all),
//   trusted (false: tool annotations are ignored, MCP spec "untrusted hints"),
//   network (false: a jailed stdio server has no network), sandbox (true: a stdio server runs in
//   the bubblewrap jail; false needs the server's --max-permission full),
//   read_only_paths ([absolute host paths] bound read-only into the jail at the same place: the
//   package the server runs from; nothing else of the host is visible)
// Errors: errc::invalid_request with `param` naming the field ("servers.<name>.<field>" in imports).
// Thread-safety: pure functions on values.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/json_util.h"
#include "common/result.h"

namespace warden::tools {

enum class mcp_transport { stdio, http };
/// "stdio" / "http".
const char* to_string(mcp_transport t) noexcept;

struct mcp_server_config {
  std::string id;
  std::string name;
  mcp_transport transport = mcp_transport::stdio;
  // stdio
  std::string command;
  std::vector<std::string> args;
  std::map<std::string, std::string> env;  ///< values as written (may hold ${env:NAME} references)
  std::string cwd;                          ///< "" = the server's own workspace
  // http
  std::string url;
  std::map<std::string, std::string> headers;  ///< values as written (may hold references)
  std::string bearer_token_env;                ///< a variable name, "" = none
  // both
  bool enabled = true;
  int timeout_ms = 60000;
  std::optional<std::vector<std::string>> allowed_tools;  ///< the server's own tool names; nullopt = all
  bool trusted = false;
  bool network = false;
  bool sandbox = true;
  std::vector<std::string> read_only_paths;
  std::string owner;                 ///< who added it (API key name; "" = the single user)
  std::int64_t created_unix_ms = 0;
  std::int64_t updated_unix_ms = 0;
  bool operator==(const mcp_server_config&) const = default;
};

/// True for `^[A-Za-z0-9_-]{1,32}$` without "__" and not ending in "_" (so `<id>__<tool>` names
/// of two servers cannot coincide).
bool valid_mcp_server_id(std::string_view id) noexcept;

/// Parses and validates one entry (the body of POST /api/mcp/servers). `id` fills a missing
/// "id" (PUT /api/mcp/servers/{id}; a body id that differs is an error).
result<mcp_server_config> parse_server_config(const json& j, std::string_view id = "");
/// The entry as JSON (the fields above plus owner, created_at_ms, updated_at_ms).
json to_json(const mcp_server_config& c);

/// The servers of an `mcpServers` document ({"mcpServers": {name: {command, args, env, cwd?}
/// | {url | serverUrl, headers?, type?: "http"|"streamable-http"|"sse"}}}; VS Code's {"servers":
/// {...}} too; a bare {name: {...}} map is also taken). The id is the name sanitised to the id
/// alphabet (other characters → '_', cut to 32). An entry may carry warden's own fields
/// (trusted, network, …). Errors name the entry.
result<std::vector<mcp_server_config>> parse_mcp_servers_document(const json& doc);

/// `value` with each ${env:NAME} / ${NAME} replaced from `lookup` (nullopt: unset → error naming
/// the variable, errc::invalid_request).
result<std::string> resolve_references(std::string_view value,
                                       const std::function<std::optional<std::string>(const std::string&)>& lookup);

}  // namespace warden::tools
