// html_text — what the web_search tool shows the model of a fetched page: HTML turned into
// readable Markdown-ish text, and DuckDuckGo's HTML results page turned into hits.
//
// Both parse with libxml2's HTML parser (recovering, silent, no network; HTML_PARSE_HUGE is not
// set, so libxml2's own limits on depth and text size apply) and walk the tree without recursion,
// so a page nested 20,000 elements deep costs no stack.
//
// Thread-safety: both functions are pure and may run on many threads at once (libxml2 is
// initialised once, on first use, through std::call_once; nothing else is shared).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace warden::tools {

/// Longest link target kept, in bytes (a longer one is written as its text alone).
inline constexpr std::size_t k_max_link_url_bytes = 2048;

/// `html` (a whole page, as fetched) as Markdown-ish text of at most `max_bytes` bytes:
/// - `# Title` from <title> first, then the body; headings as `#`..`######`;
/// - paragraphs and other blocks separated by a blank line, `<br>` as a line break, list items
///   as `- ` (indented two spaces per nesting level), table rows one per line with their cells
///   joined by ` | ` (line breaks inside a cell become spaces, so a row stays one line; blocks
///   inside a list item are separated by a line break, not a blank line), `<pre>` verbatim
///   between ``` fences;
/// - links as `[text](absolute-url)`: hrefs are resolved against `<base href>` (itself resolved
///   against `base_url`; an unusable one is ignored, one too long to resolve against makes
///   relative links plain text) or else `base_url`; only http and https targets of at most
///   k_max_link_url_bytes are kept as links, other links (javascript:, mailto:, #fragment,
///   too long) keep only their text; a link without text is dropped;
/// - script, style, noscript, template, svg, math, iframe, object, canvas, head (but its title)
///   and elements with the `hidden` attribute are skipped; comments are dropped;
/// - runs of whitespace collapse to one space (not inside <pre>); entities are decoded.
/// The charset is the page's <meta> one when it names one, else UTF-8 (libxml2 falls back to
/// ISO-8859-1 for a page that is not UTF-8); the result is always well-formed UTF-8 (ill-formed
/// bytes become U+FFFD). The walk stops as soon as `max_bytes` is reached, and the text is cut
/// on a UTF-8 boundary (so it may be up to 3 bytes shorter than `max_bytes`); nothing marks the
/// cut. Input beyond 2 GiB is ignored. Never fails: unparseable input gives "" or what could
/// be recovered.
std::string html_to_text(std::string_view html, std::string_view base_url, std::size_t max_bytes);

/// One result of a search.
struct search_hit {
  std::string title;    ///< the result's link text, whitespace collapsed, at most 512 bytes
  std::string url;      ///< an absolute http(s) URL (DuckDuckGo's redirect already undone)
  std::string snippet;  ///< the result's excerpt, whitespace collapsed, "" when none, ≤ 2048 bytes
};

/// The results of a DuckDuckGo HTML results page (https://html.duckduckgo.com/html/), in page
/// order, at most `max_results`: every element whose class list has `result` (but not
/// `result--ad`) holding an `a.result__a` link gives one hit; its snippet is the text of the
/// first `.result__snippet` inside it. A redirect href (`//duckduckgo.com/l/?uddg=<target>&…`)
/// is replaced by its percent-decoded `uddg` target; ad redirects (`/y.js`) and targets that
/// are not absolute http(s) URLs (or are longer than k_max_link_url_bytes) are skipped.
/// A page with no results (or not DuckDuckGo's) gives an empty vector. Never fails.
std::vector<search_hit> parse_duckduckgo_html(std::string_view html, std::size_t max_results);

}  // namespace warden::tools
