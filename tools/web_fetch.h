// web_fetch — the guarded HTTP(S) GET behind web_search's `url` mode and the knowledge base's URL
// documents (issue 25; reference unsloth-studio.md §4.7's SSRF guard).
//
// fetch_url(url, options) for each hop (at most k_max_redirects redirects, followed by hand):
//   1. parses the URL with libcurl's URL API: only http and https, a host, no user:password;
//      a host that is not ASCII is refused (write it in its xn-- form);
//   2. checks the host against the request's website_policy (website_policy.h);
//   3. resolves the name ONCE (getaddrinfo, or the literal address) and refuses the hop when ANY
//      address is not globally routable (net_guard.h) unless options.allow_private; an address
//      of this machine at warden's own port (options.own_port) is refused even then;
//   4. connects only to the checked addresses: CURLOPT_RESOLVE pins host:port to them (the name
//      stays in the URL, so TLS SNI and certificate checks use it) and an open-socket callback
//      refuses any other address; no proxy from the environment is used;
//   5. reads at most options.max_bytes of body (options.max_pdf_bytes when the response says
//      application/pdf), within options.timeout for the whole fetch, every hop together; a
//      cancelled token stops it. Past the cap the transfer stops: a PDF is then an error ("larger
//      than"), any other body comes back cut, with `truncated` set.
// A 3xx with a Location is a redirect (the Location resolved against the hop's URL and checked
// from step 1 again); a 3xx without one is an error. Other statuses come back as they are.
// Errors (errc::invalid_request for what the URL or the guard refuses, errc::upstream_error for
// network failures and timeouts) carry a message for the model that names the URL's host, never
// the private address a name resolved to. Message texts are capped at 300 bytes.
// Thread-safety: fetch_url blocks (DNS, network): call it on a blocking pool; any number of calls
// may run at once (each has its own curl handle).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "tools/website_policy.h"

namespace warden::tools {

/// Redirects followed by hand (reference §4.7).
inline constexpr int k_max_redirects = 5;

/// The addresses a name resolves to (literal texts, no brackets), or why it does not resolve.
using resolver = std::function<result<std::vector<std::string>>(const std::string& host)>;
/// getaddrinfo(host), every address of every family, deduplicated, in the order given.
result<std::vector<std::string>> resolve_system(const std::string& host);

struct fetch_options {
  bool allow_private = false;                      ///< --allow-private-fetch
  std::shared_ptr<const std::atomic<int>> own_port;  ///< warden's listening port (0 / null: not yet known)
  std::size_t max_bytes = 512 * 1024;              ///< body bytes read at most (reference §4.7)
  std::size_t max_pdf_bytes = 10 * 1024 * 1024;    ///< the same for application/pdf (reference §4.7)
  std::chrono::milliseconds timeout{60000};        ///< the whole fetch, every hop
  const website_policy* policy = nullptr;          ///< null: every site
  std::function<bool()> cancelled;                 ///< polled during the transfer; null = never
  resolver resolve = resolve_system;
  std::string user_agent = "Mozilla/5.0 (compatible; warden/0.1; +https://github.com/warden)";
};

struct fetched {
  std::string url;           ///< the final URL (after redirects)
  std::string host;          ///< its host, for status lines
  long status = 0;           ///< HTTP status of the final hop
  std::string content_type;  ///< lower-cased media type without parameters ("" when none)
  std::string charset;       ///< the Content-Type's charset parameter, lower-cased ("" when none)
  std::string body;          ///< at most max_bytes (max_pdf_bytes for a PDF)
  bool truncated = false;    ///< the body was cut at max_bytes
};

/// The guarded GET described above.
result<fetched> fetch_url(const std::string& url, const fetch_options& options);

/// The parts of a URL the guard judges, from libcurl's URL parser.
struct url_parts {
  std::string scheme;  ///< "http" | "https"
  std::string host;    ///< lower-cased, without brackets
  int port = 0;        ///< explicit or the scheme's default
  std::string url;     ///< the normalised URL
};
/// Parses `url` (relative to `base` when `base` is not empty) for the guard: http(s) only, a host,
/// no credentials, ASCII host, at most 2048 bytes. errc::invalid_request naming what is wrong.
result<url_parts> parse_url(std::string_view url, std::string_view base = {});

/// Why the guard refuses to connect to `address` at `port`: a non-global address (unless
/// allow_private), or an address of this machine at warden's own port; nullopt when allowed.
std::optional<std::string> address_refusal(const std::string& address, int port, bool allow_private, int own_port);

}  // namespace warden::tools
