// The router over a synthetic table with two surfaces: every error a route's path gets is
// written by that route's surface, transport-level ones included (surface_for).
#include <gtest/gtest.h>

#include "common/testing/recording_writer.h"
#include "http/router.h"
#include "http/testing/route_once.h"

namespace warden::http {
namespace {

namespace asio = boost::asio;

std::string alpha_body(const error& e, std::string_view) { return "alpha:" + e.message; }
std::string alpha_inband(const error& e) { return "alpha-inband:" + e.message; }
std::string beta_body(const error& e, std::string_view) { return "beta:" + std::to_string(http_status(e.code)); }
std::string beta_inband(const error&) { return "beta-inband"; }
const surface k_alpha{"alpha", &alpha_body, &alpha_inband};
const surface k_beta{"beta", &beta_body, &beta_inband};

using writer = warden::testing::recording_writer;

struct RouteTable : ::testing::Test {
  int hits = 0;
  router make() {
    auto ok = [this](const http_request&, response_writer& out) -> asio::awaitable<void> {
      ++hits;
      co_await out.send(200, "text/plain", "ok");
    };
    std::vector<route> table = {
        {"GET", "/a/open", false, auth_policy::open, &k_alpha, ok},
        {"POST", "/a/post", false, auth_policy::api_key, &k_alpha, ok},
        {"GET", "/b/", true, auth_policy::api_key, &k_beta, ok},
    };
    return router({std::string("key")}, std::move(table), k_alpha);
  }
  writer run(router& r, std::string method, std::string path, std::vector<std::pair<std::string, std::string>> h = {}) {
    http_request req;
    req.method = std::move(method);
    req.path = std::move(path);
    h.emplace_back("host", "127.0.0.1:8888");
    req.headers = std::move(h);
    return testing::route_once(r, req);
  }
};

TEST_F(RouteTable, EachPathErrsInItsSurfacesDialect) {
  auto r = make();
  auto w = run(r, "GET", "/b/thing");
  EXPECT_EQ(w.status, 401);
  EXPECT_EQ(w.body, "beta:401");
  w = run(r, "POST", "/b/thing");
  EXPECT_EQ(w.status, 405);
  EXPECT_EQ(w.body, "beta:405");
  w = run(r, "GET", "/a/post");
  EXPECT_EQ(w.status, 405);
  EXPECT_EQ(w.body.rfind("alpha:", 0), 0u);
  w = run(r, "GET", "/nowhere");  // no route: the fallback surface
  EXPECT_EQ(w.status, 404);
  EXPECT_EQ(w.body.rfind("alpha:", 0), 0u);
  EXPECT_EQ(&r.surface_for("/b/x"), &k_beta);
  EXPECT_EQ(&r.surface_for("/a/open"), &k_alpha);
  EXPECT_EQ(&r.surface_for("/zzz"), &k_alpha);
  EXPECT_EQ(hits, 0);
}

TEST_F(RouteTable, AuthPolicyPerRouteAndPrefixRoutes) {
  auto r = make();
  EXPECT_EQ(run(r, "GET", "/a/open").status, 200);  // open: no key needed
  EXPECT_EQ(run(r, "GET", "/b/x", {{"authorization", "Bearer key"}}).status, 200);
  EXPECT_EQ(run(r, "HEAD", "/b/deeper/path", {{"x-api-key", "key"}}).status, 200);  // GET routes answer HEAD
  EXPECT_EQ(hits, 3);
}

std::string header_of(const writer& w, const std::string& name) {
  for (const auto& [k, v] : w.headers) {
    if (k == name) return v;
  }
  return "(none)";
}

TEST_F(RouteTable, A405NamesThePathsMethodsInAllow) {
  auto r = make();
  auto w = run(r, "PUT", "/a/post", {{"authorization", "Bearer key"}});
  EXPECT_EQ(w.status, 405);
  EXPECT_EQ(header_of(w, "Allow"), "POST, OPTIONS");
  EXPECT_NE(w.body.find("PUT is not allowed on /a/post; use POST"), std::string::npos) << w.body;
  w = run(r, "DELETE", "/b/x");
  EXPECT_EQ(w.status, 405);
  EXPECT_EQ(header_of(w, "Allow"), "GET, HEAD, OPTIONS");
  EXPECT_EQ(r.allowed_methods("/nowhere"), "");
  EXPECT_EQ(header_of(run(r, "GET", "/nowhere"), "Allow"), "(none)");  // a 404 has none
  EXPECT_EQ(hits, 0);
}

TEST_F(RouteTable, A401ChallengesWithBearerInEverySurface) {
  auto r = make();
  for (const char* path : {"/a/post", "/b/x"}) {
    auto w = run(r, std::string(path) == "/a/post" ? "POST" : "GET", path, {{"authorization", "Bearer wrong"}});
    EXPECT_EQ(w.status, 401) << path;
    EXPECT_EQ(header_of(w, "WWW-Authenticate"), "Bearer realm=\"warden\"") << path;
  }
  EXPECT_EQ(header_of(run(r, "GET", "/a/open"), "WWW-Authenticate"), "(none)");
}

}  // namespace
}  // namespace warden::http
