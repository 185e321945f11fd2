// mcp_transports — the two ways warden reaches an MCP server (issue 26; spec "Transports"):
//   stdio — a long-lived child (sandbox/runner.h service_process: jailed by default): one JSON-RPC
//           message per line on its stdin/stdout, its stderr kept (the last 4 KiB) for messages.
//           A line over 16 MiB or the child's exit ends the connection ("the MCP server exited
//           (status N): <stderr tail>"). send() queues for a writer thread of the transport and
//           never blocks; past 64 MiB waiting for a server that does not read, it fails.
//   http  — Streamable HTTP (2025-06-18 / 2025-11-25): each message is a POST to `url` (Accept:
//           application/json, text/event-stream; the Mcp-Session-Id the server gave at
//           initialize; MCP-Protocol-Version once negotiated). A request's answer is a JSON body or
//           an SSE stream carrying notifications, the server's requests and the response; a
//           stream that breaks before the response is resumed by GET with Last-Event-ID (3 tries).
//           After initialize a GET stream listens for the server's own messages (405: none).
//           404 on a session → the connection ends ("the MCP server ended the session"). send()
//           never blocks: each POST runs on a thread of the transport, in order (each waits for
//           the previous one's answer headers); a request whose POST fails (unreachable, 401/403
//           "refused the credentials", another status) or whose answer never comes (a body
//           without it, a stream cut and not resumed) gets a JSON-RPC error in its place at once.
//           A server's request on a POST's stream is marked with that POST's request id
//           (k_related_request). The session id is taken once, from initialize's answer, and
//           only as visible ASCII of at most 256 characters. close() aborts the transfers and
//           DELETEs the session.
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
