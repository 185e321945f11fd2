#include "web/assets.h"

namespace warden::web {

namespace detail {
extern const asset k_files[];
extern const std::size_t k_file_count;
}  // namespace detail

namespace {

// The UI: its own scripts, styles and API only; data:/blob: images (pasted or generated); the
// render_html frame is /ui/sandbox.html ('self'), and a frame navigating elsewhere is refused.
constexpr std::string_view k_app_csp =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
    "connect-src 'self'; frame-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'";

// A model's HTML page: its inline scripts and styles run, nothing reaches the network (no
// connect-src, no remote images, fonts or media, no form posts), an opaque origin.
constexpr std::string_view k_sandbox_csp =
    "default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline'; "
    "img-src data: blob:; media-src data: blob:; font-src data:; form-action 'none'; base-uri 'none'; "
    "frame-ancestors 'self'; sandbox allow-scripts";

}  // namespace

std::span<const asset> all_assets() { return {detail::k_files, detail::k_file_count}; }

const asset* find_asset(std::string_view url_path) {
  if (url_path == "/" || url_path == "/ui" || url_path == "/ui/") url_path = "/ui/index.html";
  for (const auto& a : all_assets()) {
    if (a.path == url_path) return &a;
  }
  return nullptr;
}

std::vector<std::pair<std::string, std::string>> response_headers(std::string_view url_path) {
  std::vector<std::pair<std::string, std::string>> h = {
      {"X-Content-Type-Options", "nosniff"},
      {"Referrer-Policy", "no-referrer"},
      {"Cache-Control", "no-cache"},
      {"Cross-Origin-Resource-Policy", "same-origin"},
  };
  if (url_path == k_sandbox_page) {
    h.emplace_back("Content-Security-Policy", std::string(k_sandbox_csp));
  } else {
    h.emplace_back("Content-Security-Policy", std::string(k_app_csp));
    h.emplace_back("X-Frame-Options", "DENY");
    h.emplace_back("Cross-Origin-Opener-Policy", "same-origin");
  }
  return h;
}

}  // namespace warden::web
