// web — the browser UI's files, embedded into the binary at build time (web/CMakeLists.txt,
// web/embed.cmake): web/*.{html,js,css,svg} at /ui/<name>, index.html also at /, and the vendor
// libraries web/package.json pins (marked, DOMPurify, highlight.js) at /ui/vendor/….
//
// Which response headers each file gets is decided here too (a pure function), so the policy is
// table-tested without a server:
//   - every file: X-Content-Type-Options nosniff, Referrer-Policy no-referrer, Cache-Control
//     no-cache, Cross-Origin-Resource-Policy same-origin;
//   - the app's pages: a CSP that allows only warden's own scripts, styles, API calls and
//     frames (no inline script, no other origin, nothing may frame the UI: frame-ancestors 'none');
//   - /ui/sandbox.html, the page render_html results are shown in: a CSP with no network at all
//     (default-src 'none', no connect-src, images/fonts/media only from data:/blob:), inline
//     scripts allowed, `sandbox allow-scripts` (an opaque origin even when opened on its own),
//     framable only by the UI. The UI's own CSP (frame-src 'self') stops the frame from
//     navigating to another origin.
// Thread-safety: everything is immutable static data.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace warden::web {

struct asset {
  std::string_view path;          ///< url path, e.g. "/ui/app.js"
  std::string_view content_type;  ///< e.g. "text/javascript; charset=utf-8"
  std::string_view body;          ///< the file's bytes
};

/// The url path of the page render_html results are shown in.
inline constexpr std::string_view k_sandbox_page = "/ui/sandbox.html";

/// The asset served at `url_path` ("/" and "/ui/" are index.html); nullptr when none.
const asset* find_asset(std::string_view url_path);

/// Every embedded file, in build order.
std::span<const asset> all_assets();

/// The response headers for the asset at `url_path` (as find_asset names it), CSP included.
std::vector<std::pair<std::string, std::string>> response_headers(std::string_view url_path);

}  // namespace warden::web
