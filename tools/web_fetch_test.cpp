// web_fetch (web_fetch.h), website_policy and the search backends against loopback stubs; the
// resolver is injected where a name must resolve to a chosen address. The network-namespace
// test with a real DNS server and a globally addressed host is tests/integration/test_web_search.py.
#include "tools/web_fetch.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>

#include "common/json_util.h"
#include "tools/testing/http_stub.h"
#include "tools/web_search.h"

namespace warden::tools {
namespace {

using testing::http_stub;
using testing::stub_response;

std::string at(const http_stub& s, const std::string& path, const std::string& host = "127.0.0.1") {
  return "http://" + host + ":" + std::to_string(s.port()) + path;
}

fetch_options private_ok() {
  fetch_options o;
  o.allow_private = true;
  o.timeout = std::chrono::milliseconds(5000);
  return o;
}

resolver fixed(std::vector<std::string> addrs) {
  return [addrs](const std::string&) -> result<std::vector<std::string>> { return addrs; };
}

TEST(WebFetch, ParseUrlKeepsOnlyPlainHttpUrls) {
  EXPECT_FALSE(parse_url("ftp://example.com/x"));
  EXPECT_FALSE(parse_url("file:///etc/passwd"));
  EXPECT_FALSE(parse_url("http://user:pw@example.com/"));
  EXPECT_FALSE(parse_url("http://[fe80::1%25eth0]/"));
  EXPECT_FALSE(parse_url("http://exämple.com/"));
  EXPECT_FALSE(parse_url("http://example.com/" + std::string(3000, 'a')));
  EXPECT_FALSE(parse_url("not a url"));
  auto v6 = parse_url("http://[::FFFF:127.0.0.1]:8080/x");
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->host, "::ffff:127.0.0.1");
  EXPECT_EQ(v6->port, 8080);
  auto rel = parse_url("../b?q=1", "https://Example.COM/a/c/d");
  ASSERT_TRUE(rel);
  EXPECT_EQ(rel->url, "https://example.com/a/b?q=1");
  EXPECT_EQ(rel->port, 443);
}

TEST(WebFetch, AddressRefusalFollowsNetGuardAndAlwaysGuardsTheOwnPort) {
  EXPECT_TRUE(address_refusal("127.0.0.1", 80, false, 0));
  EXPECT_TRUE(address_refusal("169.254.169.254", 80, false, 0));
  EXPECT_TRUE(address_refusal("::ffff:10.0.0.1", 80, false, 0));
  EXPECT_FALSE(address_refusal("93.184.216.34", 80, false, 0));
  EXPECT_FALSE(address_refusal("127.0.0.1", 80, true, 8888));
  EXPECT_TRUE(address_refusal("127.0.0.1", 8888, true, 8888));
  EXPECT_TRUE(address_refusal("0.0.0.0", 8888, true, 8888));
  EXPECT_FALSE(address_refusal("93.184.216.34", 8888, true, 8888));  // not this machine
}

TEST(WebFetch, WebsitePolicyCoversNamesUnderADomainOnly) {
  website_policy p;
  p.allowed_domains = {"example.com", "10.1.2.3"};
  p.blocked_domains = {"private.example.com"};
  EXPECT_FALSE(p.refusal("example.com"));
  EXPECT_FALSE(p.refusal("docs.example.com"));
  EXPECT_FALSE(p.refusal("10.1.2.3"));
  EXPECT_TRUE(p.refusal("notexample.com"));
  EXPECT_TRUE(p.refusal("example.com.evil.net"));
  EXPECT_TRUE(p.refusal("a.private.example.com"));
  EXPECT_TRUE(p.refusal("2.3"));
  EXPECT_TRUE(p.refusal("exämple.com"));
  // the forms of one address, and a trailing dot, are the same site (the breaker's F1, F2)
  website_policy blocks;
  blocks.blocked_domains = {"127.0.0.1", "blocked.example", "::ffff:10.0.0.9"};
  EXPECT_TRUE(blocks.refusal("::ffff:127.0.0.1"));
  EXPECT_TRUE(blocks.refusal("::FFFF:7f00:1"));
  EXPECT_TRUE(blocks.refusal("64:ff9b::7f00:1"));
  EXPECT_TRUE(blocks.refusal("10.0.0.9"));
  EXPECT_TRUE(blocks.refusal("blocked.example."));
  EXPECT_TRUE(blocks.refusal("www.blocked.example.."));
  EXPECT_FALSE(blocks.refusal("127.0.0.2"));
  website_policy ip_block;
  ip_block.blocked_domains = {"3.4"};
  EXPECT_FALSE(ip_block.refusal("1.2.3.4"));  // an address is not a domain suffix
  EXPECT_EQ(normalise_domain("*.Example.COM."), "example.com");
  EXPECT_EQ(normalise_domain("[::1]"), "::1");
  EXPECT_FALSE(normalise_domain("a b"));
  EXPECT_FALSE(normalise_domain("http://x.com"));
  EXPECT_FALSE(normalise_domain(""));
}

TEST(WebFetch, LoopbackIsRefusedByDefaultAndReadWithAllowPrivate) {
  http_stub s;
  s.route("/page", {200, "Content-Type: text/HTML; charset=ISO-8859-1\r\n", "<p>hi</p>"});
  fetch_options o;
  auto refused = fetch_url(at(s, "/page"), o);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, errc::invalid_request);
  EXPECT_NE(refused.error().message.find("loopback"), std::string::npos) << refused.error().message;
  EXPECT_EQ(s.hits("/page"), 0);
  auto ok = fetch_url(at(s, "/page"), private_ok());
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(ok->body, "<p>hi</p>");
  EXPECT_EQ(ok->content_type, "text/html");
  EXPECT_EQ(ok->charset, "iso-8859-1");
  EXPECT_EQ(ok->host, "127.0.0.1");
}

TEST(WebFetch, ANameIsJudgedByEveryAddressAndPinnedToThem) {
  http_stub s;
  s.route("/p", {200, "Content-Type: text/plain\r\n", "pinned"});
  fetch_options o;
  o.resolve = fixed({"93.184.216.34", "127.0.0.1"});  // one public, one loopback: refused
  auto mixed = fetch_url(at(s, "/p", "mixed.test"), o);
  ASSERT_FALSE(mixed);
  EXPECT_EQ(mixed.error().message.find("127.0.0.1"), std::string::npos) << "the address behind a name stays hidden";
  // Pinned: "pinned.invalid" never resolves through the system, so this works only when the
  // connection goes to the checked address; the Host header keeps the name.
  fetch_options p = private_ok();
  p.resolve = fixed({"127.0.0.1"});
  auto ok = fetch_url(at(s, "/p", "pinned.invalid"), p);
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok->body, "pinned");
  EXPECT_NE(s.last_request("/p").find("Host: pinned.invalid:"), std::string::npos);
}

TEST(WebFetch, EachRedirectIsCheckedAgain) {
  http_stub a, own;
  own.route("/secret", {200, "", "secret"});
  a.route("/to-own", {302, "Location: " + at(own, "/secret") + "\r\n", ""});
  a.route("/to-blocked", {301, "Location: http://blocked.example/\r\n", ""});
  a.route("/relative", {303, "Location: ../done\r\n", ""});
  a.route("/done", {200, "", "done"});
  a.route("/no-location", {302, "", ""});
  fetch_options o = private_ok();
  o.own_port = std::make_shared<std::atomic<int>>(own.port());
  auto r = fetch_url(at(a, "/to-own"), o);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("own"), std::string::npos) << r.error().message;
  EXPECT_EQ(own.hits("/secret"), 0);
  website_policy pol;
  pol.blocked_domains = {"blocked.example"};
  o.policy = &pol;
  auto b = fetch_url(at(a, "/to-blocked"), o);
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message.find("block"), std::string::npos);
  auto rel = fetch_url(at(a, "/relative"), o);
  ASSERT_TRUE(rel) << rel.error().message;
  EXPECT_EQ(rel->body, "done");
  EXPECT_FALSE(fetch_url(at(a, "/no-location"), o));
}

TEST(WebFetch, AtMostFiveRedirects) {
  http_stub s;
  for (int i = 0; i < 7; ++i) {
    s.route("/r" + std::to_string(i), {302, "Location: /r" + std::to_string(i + 1) + "\r\n", ""});
  }
  s.route("/r5", {200, "", "five"});
  auto five = fetch_url(at(s, "/r0"), private_ok());
  ASSERT_TRUE(five) << five.error().message;
  EXPECT_EQ(five->body, "five");
  s.route("/r5", {302, "Location: /r6\r\n", ""});
  s.route("/r6", {200, "", "six"});
  auto too_many = fetch_url(at(s, "/r0"), private_ok());
  ASSERT_FALSE(too_many);
  EXPECT_NE(too_many.error().message.find("Too many redirects"), std::string::npos);
  EXPECT_EQ(s.hits("/r6"), 0);
}

TEST(WebFetch, BodiesAreCappedTextCutPdfRefused) {
  http_stub s;
  s.route("/big", {200, "Content-Type: text/html\r\n", std::string(3000, 'x')});
  s.route("/big.pdf", {200, "Content-Type: application/pdf\r\n", "%PDF-" + std::string(3000, 'x')});
  fetch_options o = private_ok();
  o.max_bytes = 1000;
  o.max_pdf_bytes = 2000;
  auto cut = fetch_url(at(s, "/big"), o);
  ASSERT_TRUE(cut) << cut.error().message;
  EXPECT_TRUE(cut->truncated);
  EXPECT_EQ(cut->body.size(), 1000u);
  auto pdf = fetch_url(at(s, "/big.pdf"), o);
  ASSERT_FALSE(pdf);
  EXPECT_NE(pdf.error().message.find("larger than"), std::string::npos);
}

TEST(WebFetch, ASilentServerTimesOutAndACancelStopsTheFetch) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ::listen(fd, 4);  // never accepts: the connection opens and nothing answers
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  const std::string url = "http://127.0.0.1:" + std::to_string(ntohs(a.sin_port)) + "/";
  fetch_options o = private_ok();
  o.timeout = std::chrono::milliseconds(300);
  auto slow = fetch_url(url, o);
  ASSERT_FALSE(slow);
  EXPECT_NE(slow.error().message.find("timed out after 1 s"), std::string::npos) << slow.error().message;
  o.timeout = std::chrono::milliseconds(20000);
  o.cancelled = [] { return true; };
  auto cancelled = fetch_url(url, o);
  ASSERT_FALSE(cancelled);
  EXPECT_EQ(cancelled.error().code, errc::cancelled);
  ::close(fd);
}

TEST(WebFetch, ProxiesFromTheEnvironmentAreIgnored) {
  http_stub s;
  s.route("/", {200, "", "direct"});
  ::setenv("http_proxy", "http://127.0.0.1:1", 1);
  ::setenv("ALL_PROXY", "http://127.0.0.1:1", 1);
  auto r = fetch_url(at(s, "/"), private_ok());
  ::unsetenv("http_proxy");
  ::unsetenv("ALL_PROXY");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->body, "direct");
}

TEST(WebSearch, BackendSpecs) {
  EXPECT_EQ(parse_search_backend("none")->kind, search_kind::none);
  EXPECT_EQ(parse_search_backend("")->kind, search_kind::none);
  EXPECT_EQ(parse_search_backend("duckduckgo")->url, "https://html.duckduckgo.com/html/");
  EXPECT_EQ(parse_search_backend("searxng:http://127.0.0.1:8080/")->url, "http://127.0.0.1:8080");
  EXPECT_FALSE(parse_search_backend("searxng"));
  EXPECT_FALSE(parse_search_backend("searxng:ftp://x"));
  EXPECT_FALSE(parse_search_backend("google"));
}

TEST(WebSearch, SearxngResultsAreReadAndFilteredByThePolicy) {
  http_stub s;
  json results = {{"results",
                   {{{"title", "A"}, {"url", "https://a.example.com/1"}, {"content", "first"}},
                    {{"title", "B"}, {"url", "https://b.other.org/2"}, {"content", "second"}},
                    {{"title", "bad"}, {"url", "javascript:alert(1)"}},
                    {{"title", "C"}, {"url", "https://example.com/3"}, {"content", "third"}}}}};
  s.route("/search?q=cats&format=json", {200, "Content-Type: application/json\r\n", results.dump()});
  s.route("/search?q=cats%20site%3Aexample.com&format=json", {200, "", results.dump()});
  search_backend b{search_kind::searxng, at(s, "")};
  auto all = search_web(b, "cats", 5, nullptr, std::chrono::seconds(5), nullptr);
  ASSERT_TRUE(all) << all.error().message;
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[1].title, "B");
  website_policy p;
  p.allowed_domains = {"example.com"};
  auto scoped = search_web(b, "cats", 5, &p, std::chrono::seconds(5), nullptr);
  ASSERT_TRUE(scoped) << scoped.error().message;
  ASSERT_EQ(scoped->size(), 2u);
  EXPECT_EQ((*scoped)[1].url, "https://example.com/3");
  const std::string text = format_hits(*scoped);
  EXPECT_NE(text.find("Title: A\nURL: https://a.example.com/1\nSnippet: first"), std::string::npos);
  EXPECT_NE(text.find("---"), std::string::npos);
  s.route("/search?q=broken&format=json", {200, "", "<html>no json</html>"});
  auto broken = search_web(b, "broken", 5, nullptr, std::chrono::seconds(5), nullptr);
  ASSERT_FALSE(broken);
  EXPECT_NE(broken.error().message.find("json"), std::string::npos);
  auto missing = search_web(b, "nothing-routed", 5, nullptr, std::chrono::seconds(5), nullptr);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("HTTP 404"), std::string::npos);
}

}  // namespace
}  // namespace warden::tools
