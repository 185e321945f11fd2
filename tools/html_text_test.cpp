#include "tools/html_text.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "common/utf8.h"

namespace warden::tools {
namespace {


constexpr std::size_t k_big = std::size_t{1} << 24;

TEST(HtmlText, TitleHeadingsAndParagraphs) {
  const std::string html =
      "<html><head><title>The  Title</title></head><body>"
      "<h1>Main   heading</h1><p>First\n   paragraph with <b>bold</b> and <i>italic</i> words.</p>"
      "<h3>Third</h3><p>Line one<br>line two<br><br>after a blank line</p><h6>six</h6></body></html>";
  EXPECT_EQ(html_to_text(html, "https://example.com/", k_big),
            "# The Title\n\n# Main heading\n\nFirst paragraph with bold and italic words.\n\n### Third\n\n"
            "Line one\nline two\n\nafter a blank line\n\n###### six");
}

TEST(HtmlText, LinksBecomeAbsolute) {
  const std::string html =
      "<p><a href=\"page.html\">relative</a>, <a href=\"/root?a=1&amp;b=2\">rooted</a>, "
      "<a href=\"//cdn.example.org/x\">scheme-relative</a>, <a href=\"https://other.org/\">absolute</a>, "
      "<a href=\"../up\">up</a>, <a href=\" /spaced path(1) \">spaces</a></p>";
  EXPECT_EQ(html_to_text(html, "https://example.com/dir/index.html", k_big),
            "[relative](https://example.com/dir/page.html), [rooted](https://example.com/root?a=1&b=2), "
            "[scheme-relative](https://cdn.example.org/x), [absolute](https://other.org/), "
            "[up](https://example.com/up), [spaces](https://example.com/spaced%20path%281%29)");
}

TEST(HtmlText, BaseHrefIsUsed) {
  const std::string html =
      "<html><head><base href=\"/docs/v2/\"></head><body><a href=\"intro.html\">Intro</a> "
      "<a href=\"https://abs.org/a\">Abs</a></body></html>";
  EXPECT_EQ(html_to_text(html, "http://example.com/index.html", k_big),
            "[Intro](http://example.com/docs/v2/intro.html) [Abs](https://abs.org/a)");
}

TEST(HtmlText, OnlyWebLinksAreKept) {
  const std::string html =
      "<p><a href=\"javascript:alert(1)\">js</a> <a href=\"mailto:a@b.c\">mail</a> <a href=\"#top\">top</a> "
      "<a href=\"ftp://f.org/\">ftp</a> <a>no href</a> <a href=\"data:text/html,hi\">data</a> "
      "<a href=\"https://ok.org/\"></a><a href=\"https://ok.org/img\"><img src=x alt=\"Logo\"></a></p>";
  EXPECT_EQ(html_to_text(html, "https://example.com/", k_big), "js mail top ftp no href data [Logo](https://ok.org/img)");
}

TEST(HtmlText, RelativeLinksNeedAWebBase) {
  EXPECT_EQ(html_to_text("<a href=\"x.html\">x</a> <a href=\"http://a.org/\">a</a>", "", k_big),
            "x [a](http://a.org/)");
  EXPECT_EQ(html_to_text("<a href=\"x.html\">x</a>", "file:///etc/", k_big), "x");
}

TEST(HtmlText, ScriptStyleAndHiddenAreDropped) {
  const std::string html =
      "<html><head><title>T</title><style>p { color: red }</style><script>var inHead = 1;</script></head>"
      "<body><script>alert('x')</script><p>visible</p><style>.a{}</style><noscript>enable js</noscript>"
      "<template><p>tpl</p></template><svg><text>svg text</text></svg><iframe src=x>frame</iframe>"
      "<div hidden>hidden text</div><!-- a comment --><p>also visible</p></body></html>";
  EXPECT_EQ(html_to_text(html, "https://example.com/", k_big), "# T\n\nvisible\n\nalso visible");
}

TEST(HtmlText, EntitiesAreDecoded) {
  EXPECT_EQ(html_to_text("<p>caf&eacute; &amp; cr&#232;me &lt;b&gt; &#x1F600; &quot;q&quot; a&nbsp;&nbsp;b</p>", "", k_big),
            "caf\xC3\xA9 & cr\xC3\xA8me <b> \xF0\x9F\x98\x80 \"q\" a b");
}

TEST(HtmlText, ListsTablesAndPre) {
  const std::string html =
      "<ul><li>one</li><li>two<ul><li>nested</li></ul></li></ul>"
      "<table><tr><th>Name</th><th>Value</th></tr><tr><td>a</td><td><p>1</p></td></tr></table>"
      "<pre>\n  code  line\n    indented\n</pre><p>after</p>";
  EXPECT_EQ(html_to_text(html, "", k_big),
            "- one\n- two\n  - nested\n\nName | Value\na | 1\n\n```\n  code  line\n    indented\n```\n\nafter");
}

TEST(HtmlText, BlocksInsideItemsCellsAndLinks) {
  EXPECT_EQ(html_to_text("<ul><li><p>para in item</p></li><li><div>div</div> tail</li></ul>", "", k_big),
            "- para in item\n- div\ntail");
  EXPECT_EQ(html_to_text("<table><tr><td>a<br>b</td><td><div>c</div><div>d</div></td></tr></table>", "", k_big),
            "a b | c d");
  EXPECT_EQ(html_to_text("<p><a href=\"https://x.org/\"></a></p><p>next</p>", "", k_big), "next");
  EXPECT_EQ(html_to_text("<p>one <a href=\"https://x.org/\"> </a></p><p>two</p>", "", k_big), "one\n\ntwo");
  EXPECT_EQ(html_to_text("<a href=\"https://x.org/\"><div>Card title</div></a>", "", k_big),
            "[Card title](https://x.org/)");
}

TEST(HtmlText, ManyThreadsAtOnce) {
  std::string html = "<html><head><title>T</title></head><body>";
  for (int i = 0; i < 2000; ++i) html += "<p>para <a href=\"/l" + std::to_string(i) + "\">link</a></p>";
  const std::string want = html_to_text(html, "https://example.com/", k_big);
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int round = 0; round < 5; ++round) {
        if (html_to_text(html, "https://example.com/", k_big) != want) ++mismatches;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(HtmlText, CharsetFromMetaAndRepair) {
  EXPECT_EQ(html_to_text("<meta charset=\"iso-8859-1\"><p>caf\xE9</p>", "", k_big), "caf\xC3\xA9");
  EXPECT_EQ(html_to_text("<p>ok \xC3\xA9</p>", "", k_big), "ok \xC3\xA9");
  const std::string bad = html_to_text("<p>bad \xFF\xFE bytes \xC3\xA9 \xED\xA0\x80</p>", "", k_big);
  EXPECT_TRUE(is_valid_utf8(bad)) << bad;
  EXPECT_NE(bad.find("bytes"), std::string::npos);
}

TEST(HtmlText, CapIsRespectedOnUtf8Boundary) {
  std::string html = "<p>";
  for (int i = 0; i < 1000; ++i) html += "\xE2\x82\xAC";  // € is 3 bytes
  html += "</p>";
  for (std::size_t cap : {0, 1, 2, 3, 4, 5, 100, 101, 102}) {
    const std::string out = html_to_text(html, "", cap);
    EXPECT_LE(out.size(), cap);
    EXPECT_EQ(out.size(), cap / 3 * 3) << cap;
    EXPECT_TRUE(is_valid_utf8(out));
  }
}

TEST(HtmlText, CapStopsTheWalkEarly) {
  std::string html;
  for (int i = 0; i < 200000; ++i) html += "<p>paragraph number " + std::to_string(i) + "</p>";
  std::string out;
  out = html_to_text(html, "", 100);  // bounded output below (its speed: bench, not a unit test)
  EXPECT_EQ(out.size(), 100u);
  EXPECT_TRUE(out.starts_with("paragraph number 0\n\nparagraph number 1\n\n"));
}

TEST(HtmlText, DeepNestingIsFastAndBounded) {
  std::string html = "<p>before</p>";
  for (int i = 0; i < 20000; ++i) html += "<div>";
  html += "deep";
  for (int i = 0; i < 20000; ++i) html += "</div>";
  std::string out;
  out = html_to_text(html, "https://example.com/", k_big);  // bounded output below (its speed: bench, not a unit test)
  // libxml2 stops at its depth limit (256 without HTML_PARSE_HUGE): what came before is kept.
  EXPECT_TRUE(out.starts_with("before")) << out.substr(0, 100);
  EXPECT_LT(out.size(), 1000u);

  std::string spans;
  for (int i = 0; i < 80; ++i) spans += "<div><span><b>";  // 240 deep: under the limit
  spans += "inner";
  EXPECT_EQ(html_to_text(spans, "", k_big), "inner");
}

TEST(HtmlText, ManyLinksAreFast) {
  std::string html = "<body>";
  for (int i = 0; i < 100000; ++i) html += "<a href=\"/p" + std::to_string(i) + "\">l</a> ";
  std::string out;
  out = html_to_text(html, "https://example.com/", k_big);  // bounded output below (its speed: bench, not a unit test)
  EXPECT_TRUE(out.starts_with("[l](https://example.com/p0) [l](https://example.com/p1) ")) << out.substr(0, 100);
  EXPECT_NE(out.find("[l](https://example.com/p99999)"), std::string::npos);
  // and with a cap, bounded
  const std::string capped = html_to_text(html, "https://example.com/", 4096);
  EXPECT_LE(capped.size(), 4096u);
  EXPECT_GE(capped.size(), 4000u);
}

TEST(HtmlText, LongUrlsAreDroppedNotMultiplied) {
  // A long <base href> times many relative links once made gigabytes of output.
  const std::string long_base = "https://example.com/" + std::string(3000, 'b') + "/";
  std::string html = "<html><head><base href=\"" + long_base + "\"></head><body>";
  for (int i = 0; i < 100000; ++i) html += "<a href=\"p" + std::to_string(i) + "\">l</a>";
  html += "<a href=\"https://short.org/\">short</a></body></html>";
  std::string out;
  out = html_to_text(html, "https://example.com/", k_big);  // bounded output below (its speed: bench, not a unit test)
  EXPECT_EQ(out.find("bbbb"), std::string::npos);
  EXPECT_TRUE(out.ends_with("[short](https://short.org/)")) << out.substr(out.size() - std::min<std::size_t>(out.size(), 80));
  EXPECT_LT(out.size(), 200000u + 100u);

  // A single overlong href keeps its text only; one just at the limit stays a link.
  const std::string at_limit = "https://a.org/" + std::string(k_max_link_url_bytes - 14, 'x');
  const std::string over = at_limit + "y";
  EXPECT_EQ(html_to_text("<a href=\"" + over + "\">too long</a>", "", k_big), "too long");
  EXPECT_EQ(html_to_text("<a href=\"" + at_limit + "\">fits</a>", "", k_big), "[fits](" + at_limit + ")");
}

TEST(HtmlText, EmptyAndOdd) {
  EXPECT_EQ(html_to_text("", "https://example.com/", 100), "");
  EXPECT_EQ(html_to_text("<p>x</p>", "https://example.com/", 0), "");
  EXPECT_EQ(html_to_text("plain text, no tags", "", 100), "plain text, no tags");
  EXPECT_EQ(html_to_text(std::string("a\0b", 3), "", 100).substr(0, 1), "a");
  EXPECT_EQ(html_to_text("<<<>>><p>unclosed <b>tags", "", 100), ">>>\n\nunclosed tags");  // libxml2 drops the "<"s
}

// ---- DuckDuckGo -----------------------------------------------------------------------------

// The shape of https://html.duckduckgo.com/html/?q=example (2024): an ad first, then results.
constexpr const char* k_ddg_page = R"HTML(<!DOCTYPE html>
<html><head><title>example at DuckDuckGo</title></head>
<body class="body--html">
<div id="links" class="results">
  <div class="result results_links results_links_deep result--ad result--ad--small">
    <div class="links_main links_deep result__body">
      <h2 class="result__title">
        <a rel="nofollow" class="result__a" href="https://duckduckgo.com/y.js?ad_domain=shop.example&amp;ad_provider=bing&amp;u3=https%3A%2F%2Fwww.bing.com">Buy Example Now</a>
      </h2>
      <a class="result__snippet" href="https://duckduckgo.com/y.js?ad_domain=shop.example">An ad.</a>
    </div>
  </div>
  <div class="result results_links results_links_deep web-result ">
    <div class="links_main links_deep result__body">
      <h2 class="result__title">
        <a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fwww.example.com%2Fpath%3Fq%3D1%26lang%3Den&amp;rut=0a1b2c">Example <b>Domain</b></a>
      </h2>
      <div class="result__extras">
        <div class="result__extras__url">
          <span class="result__icon"><a rel="nofollow" href="//duckduckgo.com/l/?uddg=x"><img class="result__icon__img" src="//external-content.duckduckgo.com/ip3/www.example.com.ico" alt=""></a></span>
          <a class="result__url" href="//duckduckgo.com/l/?uddg=x">www.example.com</a>
        </div>
      </div>
      <a class="result__snippet" href="//duckduckgo.com/l/?uddg=x">This domain is for use in <b>illustrative</b>
        examples in documents &amp; more.</a>
      <div class="clear"></div>
    </div>
  </div>
  <div class="result results_links results_links_deep web-result ">
    <div class="links_main links_deep result__body">
      <h2 class="result__title"><a rel="nofollow" class="result__a" href="https://www.iana.org/help/example-domains">Example Domains</a></h2>
      <a class="result__snippet" href="https://www.iana.org/help/example-domains">As described in RFC 2606&#8230;</a>
    </div>
  </div>
  <div class="result results_links web-result ">
    <div class="links_main result__body">
      <h2 class="result__title"><a class="result__a" href="//duckduckgo.com/l/?uddg=javascript%3Aalert(1)">Bad scheme</a></h2>
    </div>
  </div>
  <div class="result results_links web-result ">
    <div class="links_main result__body">
      <h2 class="result__title"><a class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fcaf%C3%A9.example%2F%C3%A9t%C3%A9&amp;rut=z">Unicode</a></h2>
    </div>
  </div>
  <div class="nav-link"><form action="/html/" method="post"><input type="submit" class="btn btn--alt" value="Next"></form></div>
</div>
</body></html>)HTML";

TEST(HtmlDuckDuckGo, ParsesResults) {
  const auto hits = parse_duckduckgo_html(k_ddg_page, 10);
  ASSERT_EQ(hits.size(), 3u);
  EXPECT_EQ(hits[0].title, "Example Domain");
  EXPECT_EQ(hits[0].url, "https://www.example.com/path?q=1&lang=en");
  EXPECT_EQ(hits[0].snippet, "This domain is for use in illustrative examples in documents & more.");
  EXPECT_EQ(hits[1].title, "Example Domains");
  EXPECT_EQ(hits[1].url, "https://www.iana.org/help/example-domains");
  EXPECT_EQ(hits[1].snippet, "As described in RFC 2606\xE2\x80\xA6");
  EXPECT_EQ(hits[2].title, "Unicode");
  EXPECT_EQ(hits[2].url, "https://caf%C3%A9.example/%C3%A9t%C3%A9");
  EXPECT_EQ(hits[2].snippet, "");
}

TEST(HtmlDuckDuckGo, MaxResults) {
  EXPECT_EQ(parse_duckduckgo_html(k_ddg_page, 1).size(), 1u);
  EXPECT_EQ(parse_duckduckgo_html(k_ddg_page, 1)[0].title, "Example Domain");
  EXPECT_TRUE(parse_duckduckgo_html(k_ddg_page, 0).empty());
}

TEST(HtmlDuckDuckGo, OtherPagesGiveNothing) {
  EXPECT_TRUE(parse_duckduckgo_html("", 10).empty());
  EXPECT_TRUE(parse_duckduckgo_html("<html><body><p class=\"results\">No results.</p></body></html>", 10).empty());
  EXPECT_TRUE(parse_duckduckgo_html("<div class=\"result\"><a href=\"https://x.org/\">no result__a</a></div>", 10).empty());
}

TEST(HtmlDuckDuckGo, ManyResultsAreFast) {
  std::string page = "<div class=\"results\">";
  for (int i = 0; i < 20000; ++i) {
    page += "<div class=\"result web-result\"><a class=\"result__a\" href=\"//duckduckgo.com/l/?uddg=https%3A%2F%2Fe" +
            std::to_string(i) + ".org%2F\">t</a><a class=\"result__snippet\">s</a></div>";
  }
  std::vector<search_hit> hits;
  hits = parse_duckduckgo_html(page, 100000);  // bounded output below (its speed: bench, not a unit test)
  ASSERT_EQ(hits.size(), 20000u);
  EXPECT_EQ(hits[19999].url, "https://e19999.org/");
}

}  // namespace
}  // namespace warden::tools
