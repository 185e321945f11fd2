// Fuzzes the request head as warden reads it (http/server.h): Beast's request parser with the
// server's header limit, then judge_head (http/head_screen.h: framing, request_head, the router's
// Host / Origin / route / key / Content-Type screen, a body on a method that takes none) and the
// Host / Origin / Content-Type checks of http/request_guard.h on their own.
// Invariants: a head that proceeds is a POST or carries no body; a refusal has a 4xx status and,
// for 405 and 401, the header that goes with it; the router's path never holds the query.
#include <boost/asio/buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include "common/error.h"
#include "fuzz/fuzz_support.h"
#include "http/head_screen.h"
#include "http/request_guard.h"
#include "http/router.h"
#include "http/server.h"

namespace warden::fuzz {
namespace {

namespace bhttp = boost::beast::http;

std::string fallback_body(const error& e, std::string_view) { return e.message; }
std::string fallback_inband(const error& e) { return e.message; }
const surface k_surface{"fuzz", &fallback_body, &fallback_inband};

/// A route table shaped like warden's (app/serve.cpp): exact and prefix paths, open and keyed
/// routes, GET and POST. Handlers are never run (only screen() is).
http::router& fuzz_router() {
  static http::router r = [] {
    std::vector<route> table = {
        {"GET", "/health", false, auth_policy::open, &k_surface, {}},
        {"POST", "/v1/chat/completions", false, auth_policy::api_key, &k_surface, {}},
        {"GET", "/v1/models", false, auth_policy::api_key, &k_surface, {}},
        {"GET", "/v1/models/", true, auth_policy::api_key, &k_surface, {}},
        {"POST", "/v1/responses", false, auth_policy::api_key, &k_surface, {}},
        {"DELETE", "/v1/responses/", true, auth_policy::api_key, &k_surface, {}},
        {"GET", "/v1/responses/", true, auth_policy::api_key, &k_surface, {}},
    };
    http::router_options opts{std::string("sk-fuzz"),
                              http::make_guard_policy("127.0.0.1", 8888, {"warden.lan", "proxy.example:443"},
                                                      {"https://app.example"})};
    return http::router(std::move(opts), std::move(table), k_surface);
  }();
  return r;
}

bool has_header(const std::vector<std::pair<std::string, std::string>>& headers, std::string_view name) {
  for (const auto& [k, v] : headers) {
    if (k == name) return true;
  }
  return false;
}

void check_verdict(const http::head_verdict& v, bool body_done) {
  if (!v.refused) {
    check(v.req.method == "POST" || body_done, "a body on a method but POST proceeded");
    check(v.status == 0, "a head that proceeds has no status");
    return;
  }
  check(v.status >= 400 && v.status < 500, "a refused head is answered 4xx");
  check(v.req.path.find('?') == std::string::npos, "the router's path holds no query");
  if (v.status == 405) check(has_header(v.headers, "Allow"), "405 without Allow");
  if (v.status == 401) check(has_header(v.headers, "WWW-Authenticate"), "401 without WWW-Authenticate");
}

}  // namespace
}  // namespace warden::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace warden;
  namespace bhttp = boost::beast::http;
  bhttp::request_parser<bhttp::string_body> parser;
  parser.header_limit(http::k_max_header_bytes);
  parser.body_limit(1u << 20);
  boost::system::error_code ec;
  std::size_t used = 0;
  while (used < size && !parser.is_header_done()) {
    const std::size_t n = parser.put(boost::asio::buffer(data + used, size - used), ec);
    if (ec) break;
    used += n;
    if (n == 0) break;
  }
  if (ec || !parser.is_header_done()) return 0;
  const bool body_done = parser.is_done();
  const http::head_verdict v = http::judge_head(parser.get(), body_done, fuzz::fuzz_router(), "127.0.0.1:1");
  fuzz::check_verdict(v, body_done);
  if (!v.framing) {
    (void)http::check_json_content_type(v.req);
    (void)fuzz::fuzz_router().surface_for(v.req.path);
  }
  return 0;
}
