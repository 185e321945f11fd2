// head_screen — the judgement of a request head before any body is read (server.h: framing, then
// router::screen, then a body on a method that takes none), as a pure function of the head Beast
// parsed, so it is table-tested (head_screen_test.cpp) and fuzzed (fuzz/http_head.cpp) without a
// socket. server.cpp answers what it decides; it and head_screen.cpp are the TUs that see Beast's
// message types (this header includes only the message, not the stream or parser code).
//
// Order (server.h):
//   1. framing: any Transfer-Encoding (RFC 9112 §6.1): chunked → 411 (send Content-Length), any
//      other coding → 400 (no knowable length: request smuggling); a body on GET, HEAD or
//      OPTIONS → 400 unexpected_body. The head is not turned into a request then.
//   2. router::screen on the head as the router sees it (request_head: names lower-cased, the
//      query split off): Host, Origin, route (404, 405 with Allow), API key (401), Content-Type.
//   3. a body on any method but POST and PUT (PUT /api/mcp/servers/{id}) → 400 unexpected_body.
// Thread-safety: pure functions (request_head draws a fresh request id).
#pragma once

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/error.h"
#include "common/http_types.h"
#include "http/router.h"

namespace warden::http {

/// The message type the server's parser fills (its body empty until read).
using beast_request = boost::beast::http::request<boost::beast::http::string_body>;

/// What to answer a head with, or that it may proceed.
struct head_verdict {
  /// The head as the router sees it (request_head); when `framing`, only `path` is set (it picks
  /// the error dialect).
  http_request req;
  std::optional<error> refused;  ///< the error to answer; nullopt: read the body and route it
  int status = 0;                ///< HTTP status of `refused`
  bool framing = false;          ///< refused in step 1 (answered with Connection: close)
  /// Headers the answer carries besides the body (router::error_headers: Allow, WWW-Authenticate).
  std::vector<std::pair<std::string, std::string>> headers;
};

/// The request line and headers as the router sees them (names lower-cased, the query split
/// off at the first '?'), with `remote` and a fresh request id; no body.
http_request request_head(const beast_request& head, const std::string& remote);

/// "<METHOD> takes no request body" (400, type_code unexpected_body); the method cut to 20 bytes.
error unexpected_body(std::string_view method);

/// Steps 1–3 above for `head`; `body_done` is the parser's is_done() after the head (no body
/// follows).
head_verdict judge_head(const beast_request& head, bool body_done, const router& routes, const std::string& remote);

}  // namespace warden::http
