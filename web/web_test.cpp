#include <gtest/gtest.h>

#include "web/assets.h"

namespace warden::web {
namespace {

std::string header(std::string_view path, std::string_view name) {
  for (const auto& [k, v] : response_headers(path)) {
    if (k == name) return v;
  }
  return "";
}

TEST(WebAssets, IndexIsServedAtRootAndUi) {
  const asset* root = find_asset("/");
  ASSERT_NE(root, nullptr);
  EXPECT_EQ(root, find_asset("/ui/"));
  EXPECT_EQ(root, find_asset("/ui/index.html"));
  EXPECT_EQ(root->content_type, "text/html; charset=utf-8");
  EXPECT_NE(root->body.find("<html"), std::string_view::npos);
}

TEST(WebAssets, VendorLibrariesAreEmbeddedWhole) {
  for (const char* p : {"/ui/vendor/marked.js", "/ui/vendor/purify.js", "/ui/vendor/highlight.js"}) {
    const asset* a = find_asset(p);
    ASSERT_NE(a, nullptr) << p;
    EXPECT_EQ(a->content_type, "text/javascript; charset=utf-8");
    EXPECT_GT(a->body.size(), 10000u) << p;
  }
  ASSERT_NE(find_asset("/ui/vendor/hljs-dark.css"), nullptr);
  EXPECT_EQ(find_asset("/ui/vendor/hljs-dark.css")->content_type, "text/css; charset=utf-8");
}

TEST(WebAssets, UnknownPathsAreNotFound) {
  EXPECT_EQ(find_asset("/ui/nope.js"), nullptr);
  EXPECT_EQ(find_asset("/ui/../CMakeLists.txt"), nullptr);
  EXPECT_EQ(find_asset("/ui/vendor/"), nullptr);
  EXPECT_EQ(find_asset(""), nullptr);
}

TEST(WebAssets, AppPagesGetAStrictSameOriginPolicy) {
  const std::string csp = header("/ui/index.html", "Content-Security-Policy");
  EXPECT_NE(csp.find("default-src 'none'"), std::string::npos);
  EXPECT_NE(csp.find("script-src 'self';"), std::string::npos);
  EXPECT_NE(csp.find("connect-src 'self'"), std::string::npos);
  EXPECT_NE(csp.find("frame-ancestors 'none'"), std::string::npos);
  EXPECT_EQ(csp.find("unsafe-inline"), std::string::npos);
  EXPECT_EQ(csp.find("http"), std::string::npos);
  EXPECT_EQ(header("/ui/index.html", "X-Frame-Options"), "DENY");
  EXPECT_EQ(header("/ui/app.js", "X-Content-Type-Options"), "nosniff");
}

TEST(WebAssets, TheSandboxPageHasNoNetworkAndAnOpaqueOrigin) {
  const std::string csp = header(k_sandbox_page, "Content-Security-Policy");
  EXPECT_NE(csp.find("default-src 'none'"), std::string::npos);
  EXPECT_EQ(csp.find("connect-src"), std::string::npos);  // falls back to default-src 'none'
  EXPECT_NE(csp.find("img-src data: blob:;"), std::string::npos);
  EXPECT_NE(csp.find("sandbox allow-scripts"), std::string::npos);
  EXPECT_EQ(csp.find("allow-same-origin"), std::string::npos);
  EXPECT_EQ(csp.find("'self' data"), std::string::npos);
  EXPECT_EQ(header(k_sandbox_page, "X-Frame-Options"), "");  // the UI frames it
}

TEST(WebAssets, EveryFileHasAKnownContentType) {
  for (const auto& a : all_assets()) {
    EXPECT_NE(a.content_type, "application/octet-stream") << a.path;
    EXPECT_EQ(a.path.rfind("/ui/", 0), 0u) << a.path;
  }
}

}  // namespace
}  // namespace warden::web
