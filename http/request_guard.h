// request_guard — the checks every request passes before any route sees it: who it is addressed
// to (Host), which web page sent it (Origin, Sec-Fetch-Site), and what its body is (Content-Type).
// They close the browser and network doors of issue 8 (pure functions; table-tested).
//
// Host (DNS rebinding): HTTP/1.1 requires a Host header (RFC 9112 §3.2). It must be exactly one
// header naming warden by an allowed name: localhost, 127.0.0.1, [::1], the bound address (when
// it is not 0.0.0.0/::), and each --allowed-hosts entry. A name without a port matches any valid
// port (1..65535); an entry "name:port" matches only that port. Names are compared
// case-insensitively and literally (no trailing dot, no percent-encoding). Missing, empty,
// duplicated or malformed (":8888", "a b", "host:99999", userinfo) → 403.
// Origin (CSRF): browsers send Origin on every cross-origin request and on every POST, `fetch`
// with mode "no-cors" and HTML forms included. A request with an Origin is refused (403) unless
// the origin is warden's own (`http://<allowed name>:<port>` for the names above; also without
// the port when it is 80) or an --allowed-origins entry; `null`, a duplicated header, and
// anything that is not a serialized origin are refused. Without Origin, a browser's
// `Sec-Fetch-Site: cross-site|same-site` is refused too (e.g. a link from another site); curl and
// SDKs send neither header and pass.
// Content-Type: a POST to a JSON route must say `application/json` (case-insensitive, optional
// parameters; a charset parameter must be utf-8); anything else, a missing header or two of them
// → 415, and the body is never parsed. Browsers can only send text/plain,
// application/x-www-form-urlencoded and multipart/form-data without a CORS preflight, so this
// alone keeps a web page's "simple request" from reaching a handler.
// Errors: errc::forbidden (403) or errc::unsupported_media_type (415) with a message saying what
// to change; the router renders them in the surface's envelope.
// Thread-safety: guard_policy is immutable after construction; functions are pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "common/http_types.h"

namespace warden::http {

struct guard_policy {
  std::vector<std::string> names_any_port;  ///< lower-case host names / literals ("[::1]")
  std::vector<std::string> names_with_port; ///< lower-case "name:port" entries
  std::vector<std::string> origins;         ///< lower-case serialized origins allowed to call
};

/// Builds the policy for a server bound to `bind_host`:`port` with the operator's extra hosts
/// and origins (already validated and lower-cased by common/config).
guard_policy make_guard_policy(const std::string& bind_host, int port, const std::vector<std::string>& allowed_hosts,
                               const std::vector<std::string>& allowed_origins);

/// nullopt when the Host header names warden; otherwise the 403.
std::optional<error> check_host(const http_request& req, const guard_policy& p);

struct origin_check {
  std::optional<error> refused;  ///< the 403, when refused
  std::string allowed_origin;    ///< the request's Origin when it is allowed ("" when none was sent)
};
/// Origin and Sec-Fetch-Site.
origin_check check_origin(const http_request& req, const guard_policy& p);

/// nullopt when the request says its body is JSON; otherwise the 415.
std::optional<error> check_json_content_type(const http_request& req);

}  // namespace warden::http
