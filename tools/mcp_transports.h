// mcp_transports — the two ways warden reaches an MCP server (issue 26; spec "Transports"):
//   stdio — a long-lived child (sandbox/runner.h service_process: jailed by default): one JSON-RPC
//           message per line on its stdin/stdout, its stderr kept (the last 4 KiB) for messages.
//           A line over 16 MiB or the child's exit ends the connection ("the MCP server exited
//           (status N): <stderr tail>"). Writes wait at most 10 s for a server that does not read.
//   http  — Streamable HTTP (2025-06-18 / 2025-11-25): each message is a POST to `url` (Accept:
//           application/json, text/event-stream; the Mcp-Session-Id the server gave at
//           initialize; MCP-Protocol-Version once negotiated). A request's answer is a JSON body or
//           an SSE stream carrying notifications, the server's requests and the response; a
//           stream that breaks before the response is resumed by GET with Last-Event-ID (3 tries).
//           After initialize a GET stream listens for the server's own messages (405: none).
//           404 on a session → the connection ends ("the MCP server ended the session"); 401/403
//           → send() fails naming the status. close() aborts the transfers and DELETEs the session.
//           Proxies from the environment are ignored; the URL is the user's own entry.
// Thread-safety: see mcp_session.h (transport).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "sandbox/runner.h"
#include "tools/mcp_session.h"

namespace warden::tools::mcp {

/// `label` names the server in messages.
std::unique_ptr<transport> make_stdio_transport(std::unique_ptr<sandbox::service_process> proc, std::string label);

struct http_options {
  std::string url;
  std::map<std::string, std::string> headers;  ///< resolved values (Authorization included)
  std::chrono::milliseconds connect_timeout{10000};
  std::string label;
};
std::unique_ptr<transport> make_http_transport(http_options o);

}  // namespace warden::tools::mcp
