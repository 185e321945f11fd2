#include <gtest/gtest.h>

#include "http/request_guard.h"

namespace warden::http {
namespace {

http_request with_headers(std::vector<std::pair<std::string, std::string>> h) {
  http_request r;
  r.method = "POST";
  r.path = "/v1/chat/completions";
  r.headers = std::move(h);
  return r;
}

struct host_row {
  std::vector<std::pair<std::string, std::string>> headers;
  bool allowed;
};

TEST(RequestGuard, HostTable) {
  const auto p = make_guard_policy("127.0.0.1", 8888, {"warden.lan", "proxy.example:443", "10.0.0.5"}, {});
  const host_row rows[] = {
      {{{"host", "127.0.0.1:8888"}}, true},
      {{{"host", "127.0.0.1"}}, true},
      {{{"host", "localhost:8888"}}, true},
      {{{"host", "LOCALHOST:8888"}}, true},
      {{{"host", "[::1]:8888"}}, true},
      {{{"host", "[::1]"}}, true},
      {{{"host", "warden.lan:8888"}}, true},
      {{{"host", "warden.lan"}}, true},
      {{{"host", "proxy.example:443"}}, true},
      {{{"host", "10.0.0.5:8888"}}, true},
      {{{"host", "proxy.example"}}, false},       // listed with a port: only that port
      {{{"host", "proxy.example:8888"}}, false},
      {{{"host", "evil.example:8888"}}, false},   // DNS rebinding
      {{{"host", "evil.example"}}, false},
      {{{"host", "localhost.:8888"}}, false},     // compared literally
      {{{"host", "127.0.0.1.evil.example"}}, false},
      {{{"host", ""}}, false},                    // empty
      {{}, false},                                // missing
      {{{"host", ":8888"}}, false},               // no name
      {{{"host", "127.0.0.1:"}}, false},          // empty port
      {{{"host", "127.0.0.1:99999"}}, false},     // port out of range
      {{{"host", "127.0.0.1:88a"}}, false},
      {{{"host", "127.0.0.1:+88"}}, false},
      {{{"host", "user@127.0.0.1"}}, false},      // userinfo
      {{{"host", "127.0.0.1 8888"}}, false},
      {{{"host", "[::1"}}, false},
      {{{"host", "[]:8888"}}, false},
      {{{"host", "[::1]x"}}, false},
      {{{"host", "0.0.0.0:8888"}}, false},
      {{{"host", "127.0.0.1:8888"}, {"host", "evil.example"}}, false},  // two Host headers
  };
  for (const auto& row : rows) {
    const std::string shown = row.headers.empty() ? "(none)" : row.headers.front().second;
    EXPECT_EQ(!check_host(with_headers(row.headers), p).has_value(), row.allowed) << shown;
  }
  const auto e = check_host(with_headers({{"host", "evil.example"}}), p);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code, errc::forbidden);
  EXPECT_NE(e->message.find("--allowed-hosts"), std::string::npos);
}

TEST(RequestGuard, BoundAddressCountsUnlessUnspecified) {
  auto p = make_guard_policy("192.168.1.9", 9000, {}, {});
  EXPECT_FALSE(check_host(with_headers({{"host", "192.168.1.9:9000"}}), p));
  p = make_guard_policy("0.0.0.0", 9000, {}, {});
  EXPECT_TRUE(check_host(with_headers({{"host", "0.0.0.0:9000"}}), p));
  EXPECT_TRUE(check_host(with_headers({{"host", "192.168.1.9:9000"}}), p));  // only via --allowed-hosts
  EXPECT_FALSE(check_host(with_headers({{"host", "localhost:9000"}}), p));
  p = make_guard_policy("::", 9000, {}, {});
  EXPECT_TRUE(check_host(with_headers({{"host", "[::]:9000"}}), p));
  p = make_guard_policy("fe80::1", 9000, {}, {});
  EXPECT_FALSE(check_host(with_headers({{"host", "[fe80::1]:9000"}}), p));
}

TEST(RequestGuard, OriginTable) {
  const auto p = make_guard_policy("127.0.0.1", 8888, {"warden.lan"}, {"http://localhost:3000", "https://app.example:443"});
  struct row {
    std::vector<std::pair<std::string, std::string>> headers;
    bool allowed;
  } rows[] = {
      {{}, true},                                                  // curl, SDKs
      {{{"origin", "http://127.0.0.1:8888"}}, true},               // warden's own page
      {{{"origin", "http://localhost:8888"}}, true},
      {{{"origin", "http://[::1]:8888"}}, true},
      {{{"origin", "http://warden.lan:8888"}}, true},
      {{{"origin", "http://localhost:3000"}}, true},               // listed
      {{{"origin", "https://app.example"}}, true},                 // listed with its default port
      {{{"origin", "HTTP://LOCALHOST:3000"}}, true},
      {{{"origin", "http://localhost:3001"}}, false},
      {{{"origin", "https://127.0.0.1:8888"}}, false},             // another scheme is another origin
      {{{"origin", "http://evil.example"}}, false},
      {{{"origin", "http://127.0.0.1:8888.evil.example"}}, false},
      {{{"origin", "null"}}, false},                               // sandboxed iframes, file: pages
      {{{"origin", ""}}, false},
      {{{"origin", "*"}}, false},
      {{{"origin", "http://127.0.0.1:8888/"}}, false},             // not a serialized origin
      {{{"origin", "http://127.0.0.1:8888"}, {"origin", "http://evil.example"}}, false},
      {{{"sec-fetch-site", "cross-site"}}, false},                 // a browser without Origin
      {{{"sec-fetch-site", "same-site"}}, false},
      {{{"sec-fetch-site", "same-origin"}}, true},
      {{{"sec-fetch-site", "none"}}, true},                        // typed into the address bar
      {{{"origin", "http://localhost:3000"}, {"sec-fetch-site", "cross-site"}}, true},
  };
  for (const auto& r : rows) {
    const auto c = check_origin(with_headers(r.headers), p);
    const std::string shown = r.headers.empty() ? "(none)" : r.headers.front().first + ": " + r.headers.front().second;
    EXPECT_EQ(!c.refused.has_value(), r.allowed) << shown;
    if (c.refused) {
      EXPECT_EQ(c.refused->code, errc::forbidden);
    }
  }
  EXPECT_EQ(check_origin(with_headers({{"origin", "HTTP://LOCALHOST:3000"}}), p).allowed_origin, "http://localhost:3000");
  EXPECT_EQ(check_origin(with_headers({}), p).allowed_origin, "");
}

TEST(RequestGuard, ContentTypeTable) {
  struct row {
    std::vector<std::pair<std::string, std::string>> headers;
    bool allowed;
  } rows[] = {
      {{{"content-type", "application/json"}}, true},
      {{{"content-type", "Application/JSON"}}, true},
      {{{"content-type", "application/json; charset=utf-8"}}, true},
      {{{"content-type", "application/json;charset=UTF-8"}}, true},
      {{{"content-type", "application/json; charset=\"utf-8\""}}, true},
      {{{"content-type", "application/json ; foo=bar"}}, true},
      {{{"content-type", "application/json; charset=latin1"}}, false},
      {{{"content-type", "text/plain"}}, false},
      {{{"content-type", "text/plain;charset=UTF-8"}}, false},
      {{{"content-type", "application/x-www-form-urlencoded"}}, false},
      {{{"content-type", "multipart/form-data; boundary=x"}}, false},
      {{{"content-type", "application/jsonx"}}, false},
      {{{"content-type", "application/vnd.api+json"}}, false},
      {{{"content-type", ""}}, false},
      {{}, false},
      {{{"content-type", "application/json"}, {"content-type", "text/plain"}}, false},
  };
  for (const auto& r : rows) {
    const auto e = check_json_content_type(with_headers(r.headers));
    const std::string shown = r.headers.empty() ? "(none)" : r.headers.front().second;
    EXPECT_EQ(!e.has_value(), r.allowed) << shown;
    if (e) {
      EXPECT_EQ(e->code, errc::unsupported_media_type);
    }
  }
}

}  // namespace
}  // namespace warden::http
