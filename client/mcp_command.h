// `warden mcp`: the MCP server registry of a running warden from the command line (issue 26),
// over the control API (docs/api/control.md "MCP servers"):
//   warden mcp add ID -- COMMAND ARGS...        a stdio server (POST /api/mcp/servers)
//   warden mcp add ID --url URL [--header 'Name: value']... [--bearer-token-env VAR]
//                                               an http server
//     either kind: [--trusted] [--network] [--no-sandbox] [--ro PATH]... [--env NAME=VALUE]...
//   warden mcp list                             id, transport, enabled, state, tools
//   warden mcp rm ID
//   warden mcp test ID                          connects now: state, protocol version, tools
//   warden mcp import FILE [--replace]          a Claude Desktop / Cursor / VS Code file
// warden's own address is --server (default http://127.0.0.1:8888): `--url` is the MCP
// server's. The key: --api-key, --api-key-file, WARDEN_API_KEY or WARDEN_API_KEY_FILE, as
// `warden kb`. Secrets go in as references (`--header 'Authorization: Bearer ${env:TOKEN}'`,
// `--env TOKEN='${env:TOKEN}'`): the server refuses literal ones.
// Exit status: 0 done, 1 the server refused or could not be reached (its message printed), 2 a
// bad argument or an unreadable file.
// Thread-safety: run it once, from the main thread.
#pragma once

#include <string>
#include <vector>

#include "common/json_util.h"
#include "common/result.h"

namespace warden::client {

struct mcp_options {
  std::string server = "http://127.0.0.1:8888";  ///< warden's address (--server)
  std::string api_key;
  std::string api_key_file;
  std::string action;                      ///< add | list | rm | test | import
  std::vector<std::string> args;           ///< the action's words (add: ID then COMMAND ARGS...)
  std::string url;                         ///< add --url: an http server
  std::vector<std::string> headers;        ///< add --header 'Name: value'
  std::string bearer_token_env;            ///< add --bearer-token-env
  bool trusted = false, network = false, no_sandbox = false;
  std::vector<std::string> read_only_paths;  ///< add --ro
  std::vector<std::string> env;              ///< add --env NAME=VALUE
  bool replace = false;                      ///< import --replace
};

/// The body `warden mcp add` sends (pure): the entry, or why the arguments do not make one
/// (errc::invalid_request, the message printed as is).
result<json> mcp_add_body(const mcp_options& o);

int run_mcp(const mcp_options& o);

}  // namespace warden::client
