#include "tools/html_text.h"

#include <libxml/HTMLparser.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/uri.h>

#include <algorithm>
#include <climits>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "common/utf8.h"

namespace warden::tools {
namespace {

// ---- libxml2 plumbing ---------------------------------------------------------------------

struct doc_deleter {
  void operator()(xmlDoc* d) const noexcept { xmlFreeDoc(d); }
};
using doc_ptr = std::unique_ptr<xmlDoc, doc_deleter>;

struct xml_free {
  void operator()(xmlChar* p) const noexcept { xmlFree(p); }
};
using xml_string = std::unique_ptr<xmlChar, xml_free>;

doc_ptr parse_html(std::string_view html) {
  static std::once_flag init;
  std::call_once(init, [] { xmlInitParser(); });
  if (html.empty()) return nullptr;
  const int size = static_cast<int>(std::min<std::size_t>(html.size(), INT_MAX));
  constexpr int options = HTML_PARSE_RECOVER | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING | HTML_PARSE_NONET;
  return doc_ptr(htmlReadMemory(html.data(), size, nullptr, nullptr, options));
}

std::string_view as_view(const xmlChar* s) {
  return s == nullptr ? std::string_view{} : std::string_view(reinterpret_cast<const char*>(s));
}

bool is_element(const xmlNode* n, std::string_view name) {
  return n->type == XML_ELEMENT_NODE && as_view(n->name) == name;
}

/// The value of attribute `name` (libxml2 keeps an HTML attribute's value as one text child),
/// or nullopt when the element has no such attribute.
std::optional<std::string_view> attribute(const xmlNode* n, const char* name) {
  for (const xmlAttr* a = n->properties; a != nullptr; a = a->next) {
    if (as_view(a->name) != name) continue;
    if (a->children == nullptr) return std::string_view{};
    return as_view(a->children->content);
  }
  return std::nullopt;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

bool has_class(const xmlNode* n, std::string_view cls) {
  auto list = attribute(n, "class");
  if (!list) return false;
  std::string_view rest = *list;
  while (!rest.empty()) {
    while (!rest.empty() && is_space(rest.front())) rest.remove_prefix(1);
    std::size_t end = 0;
    while (end < rest.size() && !is_space(rest[end])) ++end;
    if (rest.substr(0, end) == cls) return true;
    rest.remove_prefix(end);
  }
  return false;
}

/// Pre-order walk of `top`'s descendants without recursion, through the parent pointers.
/// `enter(node)` says whether to go into the node's children (descend), not (skip), or to end
/// the walk (stop); `leave(node)` runs after the children of a node that was descended into.
enum class step { descend, skip, stop };

template <class Enter, class Leave>
void walk(xmlNode* top, Enter&& enter, Leave&& leave) {
  xmlNode* n = top->children;
  while (n != nullptr) {
    const step s = enter(n);
    if (s == step::stop) return;
    if (s == step::descend && n->children != nullptr) {
      n = n->children;
      continue;
    }
    if (s == step::descend) leave(n);
    while (n->next == nullptr) {
      n = n->parent;
      if (n == nullptr || n == top) return;
      leave(n);
    }
    n = n->next;
  }
}

/// The first element named `name` among `parent`'s children, or null.
xmlNode* child_element(xmlNode* parent, std::string_view name) {
  if (parent == nullptr) return nullptr;
  for (xmlNode* c = parent->children; c != nullptr; c = c->next) {
    if (is_element(c, name)) return c;
  }
  return nullptr;
}

// ---- the text sink: whitespace collapsing, block separation, the byte cap -------------------

/// Appends text under a byte cap. Whitespace in `text()` collapses to one space; `block(n)`
/// asks for n line breaks (1: new line, 2: blank line) before the next content; separators are
/// only written when content follows, never at the start. Once the cap is reached, `full()`.
class text_sink {
 public:
  explicit text_sink(std::size_t cap) : cap_(cap) { full_ = cap == 0; }

  bool full() const { return full_; }
  std::size_t size() const { return out_.size(); }
  std::string take() { return std::move(out_); }

  /// Text whose whitespace collapses (an element's text node outside <pre>).
  void text(std::string_view s) {
    // U+00A0 (&nbsp;) counts as whitespace too: it is layout, not content.
    const auto space_at = [&s](std::size_t at) -> std::size_t {
      if (is_space(s[at])) return 1;
      return s[at] == '\xC2' && at + 1 < s.size() && s[at + 1] == '\xA0' ? 2 : 0;
    };
    std::size_t i = 0;
    while (i < s.size() && !full_) {
      if (const std::size_t n = space_at(i); n > 0) {
        pending_space_ = true;
        i += n;
        continue;
      }
      std::size_t end = i;
      while (end < s.size() && space_at(end) == 0) ++end;
      flush();
      put(s.substr(i, end - i));
      glue_ = false;
      i = end;
    }
  }

  /// Text kept as it is (inside <pre>).
  void verbatim(std::string_view s) {
    if (s.empty()) return;
    flush();
    put(s);
    glue_ = false;
  }

  /// Markup that opens something ("# ", "- ", "["): pending separators first, and no space
  /// between it and the content that follows. Returns where the markup starts.
  std::size_t open_mark(std::string_view s) {
    flush();
    const std::size_t at = out_.size();
    put(s);
    glue_ = true;
    return at;
  }

  /// Markup that closes something ("](url)"): right after the content, pending separators
  /// kept for after it.
  void close_mark(std::string_view s) { put(s); }

  /// A separator between cells (" | "): replaces a pending space.
  void separator(std::string_view s) {
    pending_space_ = false;
    open_mark(s);
  }

  void block(int newlines) {
    if (glue_) return;  // "- " then <p>: the paragraph's text goes right after the mark
    if (flatten_ > 0) {
      pending_space_ = true;
      return;
    }
    pending_nl_ = std::max(pending_nl_, newlines);
  }
  void line_break() {
    if (glue_) return;
    if (flatten_ > 0) {
      pending_space_ = true;
      return;
    }
    pending_nl_ = std::min(pending_nl_ + 1, 2);
  }

  /// Inside a table cell, block breaks become spaces so that a row stays on one line.
  void flatten(int delta) { flatten_ += delta; }

  /// Drops everything from `at` on (an empty link's "[").
  void truncate(std::size_t at) {
    if (at >= out_.size()) return;
    out_.resize(at);
    glue_ = false;
    trailing_nl_ = 0;
    for (auto it = out_.rbegin(); it != out_.rend() && *it == '\n' && trailing_nl_ < 2; ++it) ++trailing_nl_;
  }

  /// Makes sure the output ends with a line break (before a closing ``` fence).
  void end_line() {
    if (!out_.empty() && trailing_nl_ == 0) put("\n");
  }

 private:
  void flush() {
    if (out_.empty()) {
      pending_nl_ = 0;
      pending_space_ = false;
      return;
    }
    const auto wanted = static_cast<std::size_t>(pending_nl_);
    if (wanted > trailing_nl_) {
      while (trailing_nl_ == 0 && !out_.empty() && out_.back() == ' ') out_.pop_back();  // no space at a line's end
      put(std::string(wanted - trailing_nl_, '\n'));
    } else if (pending_space_ && !glue_ && pending_nl_ == 0 && trailing_nl_ == 0 && out_.back() != ' ') {
      put(" ");
    }
    pending_nl_ = 0;
    pending_space_ = false;
  }

  void put(std::string_view s) {
    if (full_ || s.empty()) return;
    std::string repaired;
    if (!is_valid_utf8(s)) {
      repaired = to_valid_utf8(s);
      s = repaired;
    }
    const std::size_t room = cap_ - out_.size();
    if (s.size() >= room) {
      std::size_t cut = room;
      // Back off to the start of a sequence (s is well-formed, so that is a boundary).
      while (cut > 0 && cut < s.size() && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
      s = s.substr(0, cut);
      full_ = true;
    }
    if (s.empty()) return;
    out_.append(s);
    std::size_t nl = 0;
    while (nl < s.size() && s[s.size() - 1 - nl] == '\n') ++nl;
    trailing_nl_ = nl == s.size() ? std::min<std::size_t>(trailing_nl_ + nl, 2) : std::min<std::size_t>(nl, 2);
  }

  std::string out_;
  std::size_t cap_;
  std::size_t trailing_nl_ = 0;  // line breaks at the end of out_, counted up to 2
  int pending_nl_ = 0;
  int flatten_ = 0;
  bool pending_space_ = false;
  bool glue_ = false;  // the last thing written was an opening mark
  bool full_ = false;
};

// ---- URLs ---------------------------------------------------------------------------------

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

/// The scheme of an absolute URL ("https" of "https://x"), or "" when `url` has none.
std::string_view scheme_of(std::string_view url) {
  for (std::size_t i = 0; i < url.size(); ++i) {
    const char c = url[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (c == ':') return i == 0 ? std::string_view{} : url.substr(0, i);
    if (!alpha && (i == 0 || !((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.'))) break;
  }
  return {};
}

/// True for an absolute http(s) URL with a host: "http://h…" or "https://h…".
bool is_web_url(std::string_view url) {
  const std::string_view scheme = scheme_of(url);
  if (!iequals(scheme, "http") && !iequals(scheme, "https")) return false;
  const std::string_view rest = url.substr(scheme.size() + 1);
  return rest.size() > 2 && rest.substr(0, 2) == "//" && rest[2] != '/' && rest[2] != '?' && rest[2] != '#';
}

/// `s` with bytes that may not appear in a URI (controls, space, non-ASCII, "<>\"\\^`{|}")
/// percent-encoded; with `for_markdown`, "(" and ")" too, so that "[text](url)" stays whole.
std::string escape_url(std::string_view s, bool for_markdown) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    const bool bad = c <= 0x20 || c >= 0x7F || ch == '"' || ch == '<' || ch == '>' || ch == '\\' ||
                     ch == '^' || ch == '`' || ch == '{' || ch == '|' || ch == '}' ||
                     (for_markdown && (ch == '(' || ch == ')'));
    if (!bad) {
      out.push_back(ch);
      continue;
    }
    out.push_back('%');
    out.push_back(hex[c >> 4]);
    out.push_back(hex[c & 0xF]);
  }
  return out;
}

/// `href` with tabs and line breaks removed and the ends trimmed, as browsers read it.
std::string clean_href(std::string_view href) {
  std::string out;
  for (char c : trim(href)) {
    if (c != '\t' && c != '\n' && c != '\r') out.push_back(c);
  }
  return out;
}

/// How links are resolved: against `base` when `base_ok`; otherwise only absolute hrefs work.
struct link_base {
  std::string base;
  bool base_ok = false;
};

/// `href` resolved into an absolute http(s) URL of at most k_max_link_url_bytes, escaped for a
/// Markdown link, or nullopt (another scheme, a bare #fragment, unparseable, too long).
std::optional<std::string> resolve_link(std::string_view raw_href, const link_base& lb) {
  if (raw_href.size() > 2 * k_max_link_url_bytes) return std::nullopt;
  const std::string href = escape_url(clean_href(raw_href), false);
  if (href.empty() || href.front() == '#' || href.size() > k_max_link_url_bytes) return std::nullopt;
  std::string url;
  if (!scheme_of(href).empty()) {
    url = href;
  } else {
    if (!lb.base_ok) return std::nullopt;
    xml_string built(xmlBuildURI(reinterpret_cast<const xmlChar*>(href.c_str()),
                                 reinterpret_cast<const xmlChar*>(lb.base.c_str())));
    if (!built) return std::nullopt;
    url = std::string(as_view(built.get()));
  }
  if (!is_web_url(url)) return std::nullopt;
  url = escape_url(url, true);
  if (url.size() > k_max_link_url_bytes) return std::nullopt;
  return url;
}

/// The base for links: `<base href>` (resolved against `base_url`) when the page has one that
/// is a usable http(s) URL, else `base_url` when it is one.
link_base find_link_base(xmlNode* head, std::string_view base_url) {
  link_base lb;
  const std::string given = escape_url(clean_href(base_url), false);
  if (given.size() <= k_max_link_url_bytes && is_web_url(given)) lb = {given, true};
  const xmlNode* base_el = child_element(head, "base");
  const auto href = base_el ? attribute(base_el, "href") : std::nullopt;
  if (!href || trim(*href).empty()) return lb;
  if (href->size() > 2 * k_max_link_url_bytes) return {};  // every relative link would be too long
  const std::string cleaned = escape_url(clean_href(*href), false);
  std::string resolved;
  if (!scheme_of(cleaned).empty()) {
    resolved = cleaned;
  } else if (lb.base_ok) {
    xml_string built(xmlBuildURI(reinterpret_cast<const xmlChar*>(cleaned.c_str()),
                                 reinterpret_cast<const xmlChar*>(lb.base.c_str())));
    if (built) resolved = std::string(as_view(built.get()));
  }
  if (resolved.size() > k_max_link_url_bytes) return {};  // every relative link would be too long
  if (!is_web_url(resolved)) return lb;  // as browsers do with a base they cannot use
  return {resolved, true};
}

// ---- HTML → text --------------------------------------------------------------------------

enum class kind { inline_, skip, heading, paragraph, block, br, list, item, pre, table, row, cell, link, img };

kind kind_of(const xmlNode* n) {
  static const std::unordered_map<std::string_view, kind> table = [] {
    std::unordered_map<std::string_view, kind> t;
    for (const char* s : {"script", "style", "noscript", "template", "svg", "math", "iframe", "head", "object",
                          "embed", "canvas", "select", "datalist", "audio", "video", "map"}) {
      t.emplace(s, kind::skip);
    }
    for (const char* s : {"h1", "h2", "h3", "h4", "h5", "h6"}) t.emplace(s, kind::heading);
    for (const char* s : {"p", "blockquote", "hr", "figure", "address", "dl", "form", "fieldset"}) {
      t.emplace(s, kind::paragraph);
    }
    for (const char* s : {"div", "section", "article", "header", "footer", "nav", "main", "aside", "dt", "dd",
                          "figcaption", "details", "summary", "caption", "center", "body", "html", "legend",
                          "textarea", "option", "tbody", "thead", "tfoot"}) {
      t.emplace(s, kind::block);
    }
    t.emplace("br", kind::br);
    t.emplace("ul", kind::list);
    t.emplace("ol", kind::list);
    t.emplace("menu", kind::list);
    t.emplace("li", kind::item);
    t.emplace("pre", kind::pre);
    t.emplace("listing", kind::pre);
    t.emplace("xmp", kind::pre);
    t.emplace("table", kind::table);
    t.emplace("tr", kind::row);
    t.emplace("td", kind::cell);
    t.emplace("th", kind::cell);
    t.emplace("a", kind::link);
    t.emplace("img", kind::img);
    return t;
  }();
  const auto it = table.find(as_view(n->name));
  return it == table.end() ? kind::inline_ : it->second;
}

struct link_frame {
  std::size_t mark_at = 0;     // where "[" starts
  std::size_t text_at = 0;     // where the link's text starts
  std::optional<std::string> url;  // nullopt: not written as a link
};

/// The state of one html_to_text walk; enter/leave are the walk's callbacks.
class text_walker {
 public:
  text_walker(text_sink& out, link_base lb) : out_(out), base_(std::move(lb)) {}

  step enter(xmlNode* n) {
    if (out_.full()) return step::stop;
    if (n->type == XML_TEXT_NODE) {
      if (pre_ > 0) {
        std::string_view t = as_view(n->content);
        if (pre_start_ && t.starts_with('\n')) t.remove_prefix(1);  // as browsers do
        pre_start_ = false;
        out_.verbatim(t);
      } else {
        out_.text(as_view(n->content));
      }
      return step::skip;
    }
    if (n->type != XML_ELEMENT_NODE) return step::skip;
    if (attribute(n, "hidden")) return step::skip;
    const kind k = kind_of(n);
    if (k == kind::skip) return step::skip;
    open(n, k);
    return step::descend;
  }

  void leave(xmlNode* n) { close(n, kind_of(n)); }

 private:
  /// A block break; inside a list item, at most a line break (a tight list).
  void block(int newlines) { out_.block(items_ > 0 ? 1 : newlines); }

  void open(xmlNode* n, kind k) {
    switch (k) {
      case kind::heading: {
        block(2);
        const auto level = static_cast<std::size_t>(n->name[1] - '0');
        out_.open_mark(std::string(level, '#') + " ");
        break;
      }
      case kind::paragraph:
      case kind::table: block(2); break;
      case kind::block:
      case kind::row: block(1); break;
      case kind::br: out_.line_break(); break;
      case kind::list:
        block(lists_ == 0 ? 2 : 1);
        ++lists_;
        break;
      case kind::item:
        block(1);
        ++items_;
        out_.open_mark(std::string(2 * static_cast<std::size_t>(std::max(lists_ - 1, 0)), ' ') + "- ");
        break;
      case kind::pre:
        block(2);
        out_.open_mark("```\n");
        ++pre_;
        pre_start_ = true;
        break;
      case kind::cell:
        open_cell(n);
        break;
      case kind::link: open_link(n); break;
      case kind::img:
        if (!links_.empty()) {
          if (auto alt = attribute(n, "alt")) out_.text(*alt);
        }
        break;
      case kind::inline_:
      case kind::skip: break;
    }
  }

  void close(xmlNode*, kind k) {
    switch (k) {
      case kind::heading:
      case kind::paragraph:
      case kind::table: block(2); break;
      case kind::block:
      case kind::row: block(1); break;
      case kind::list:
        --lists_;
        block(lists_ == 0 ? 2 : 1);
        break;
      case kind::item:
        --items_;
        block(1);
        break;
      case kind::pre:
        --pre_;
        out_.end_line();
        out_.close_mark("```");
        block(2);
        break;
      case kind::cell: out_.flatten(-1); break;
      case kind::link: close_link(); break;
      case kind::br:
      case kind::img:
      case kind::inline_:
      case kind::skip: break;
    }
  }

  void open_cell(const xmlNode* n) {
    for (const xmlNode* prev = n->prev; prev != nullptr; prev = prev->prev) {
      if (prev->type != XML_ELEMENT_NODE) continue;
      if (is_element(prev, "td") || is_element(prev, "th")) out_.separator(" | ");
      break;
    }
    out_.flatten(+1);
  }

  void open_link(const xmlNode* n) {
    link_frame f;
    if (auto href = attribute(n, "href")) f.url = resolve_link(*href, base_);
    if (f.url) {
      f.mark_at = out_.open_mark("[");
      f.text_at = out_.size();
    }
    links_.push_back(std::move(f));
  }

  void close_link() {
    if (links_.empty()) return;
    link_frame f = std::move(links_.back());
    links_.pop_back();
    if (!f.url || out_.full()) return;
    if (out_.size() == f.text_at) {
      out_.truncate(f.mark_at);  // no text: no link
      return;
    }
    out_.close_mark("](" + *f.url + ")");
  }

  text_sink& out_;
  link_base base_;
  std::vector<link_frame> links_;
  int lists_ = 0;
  int items_ = 0;  // open <li> elements
  int pre_ = 0;
  bool pre_start_ = false;  // no text seen yet in the innermost <pre>
};

/// The collapsed text of `n`'s descendants, at most `cap` bytes.
std::string text_of(xmlNode* n, std::size_t cap) {
  text_sink sink(cap);
  walk(
      n,
      [&](xmlNode* c) {
        if (sink.full()) return step::stop;
        if (c->type == XML_TEXT_NODE) sink.text(as_view(c->content));
        if (c->type != XML_ELEMENT_NODE || kind_of(c) == kind::skip) return step::skip;
        return step::descend;
      },
      [](xmlNode*) {});
  return sink.take();
}

// ---- DuckDuckGo -----------------------------------------------------------------------------

std::string percent_decode(std::string_view s) {
  const auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2])));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

/// The value of query parameter `name` in `query` ("a=1&b=2"), still percent-encoded.
std::optional<std::string_view> query_param(std::string_view query, std::string_view name) {
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    if (pair.size() > name.size() && pair.substr(0, name.size()) == name && pair[name.size()] == '=') {
      return pair.substr(name.size() + 1);
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return std::nullopt;
}

/// The target of a DuckDuckGo result href, or nullopt (an ad, not http(s), too long).
std::optional<std::string> ddg_target(std::string_view raw_href) {
  std::string href = clean_href(raw_href);
  if (href.size() > 4 * k_max_link_url_bytes) return std::nullopt;
  if (href.starts_with("//")) {
    href = "https:" + href;
  } else if (href.starts_with("/")) {
    href = "https://duckduckgo.com" + href;
  }
  if (!is_web_url(href)) return std::nullopt;
  const std::size_t host_at = href.find("//") + 2;
  const std::size_t host_end = std::min(href.find_first_of("/?#", host_at), href.size());
  std::string host = href.substr(host_at, host_end - host_at);
  std::transform(host.begin(), host.end(), host.begin(), [](char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  });
  std::string target = href;
  if (host == "duckduckgo.com" || host.ends_with(".duckduckgo.com")) {
    const std::string_view rest = std::string_view(href).substr(host_end);
    if (rest.starts_with("/y.js")) return std::nullopt;  // an ad's click-through
    if (!rest.starts_with("/l/")) return std::nullopt;
    const std::size_t q = rest.find('?');
    if (q == std::string_view::npos) return std::nullopt;
    const auto uddg = query_param(rest.substr(q + 1, rest.find('#') - q - 1), "uddg");
    if (!uddg) return std::nullopt;
    target = percent_decode(*uddg);
  }
  target = escape_url(trim(target), false);
  if (target.size() > k_max_link_url_bytes || !is_web_url(target)) return std::nullopt;
  return target;
}

/// The hit of one `.result` block, or nullopt when it has no usable `a.result__a`.
std::optional<search_hit> read_hit(xmlNode* block) {
  xmlNode* title_link = nullptr;
  xmlNode* snippet = nullptr;
  walk(
      block,
      [&](xmlNode* n) {
        if (n->type != XML_ELEMENT_NODE) return step::skip;
        if (!title_link && is_element(n, "a") && has_class(n, "result__a")) title_link = n;
        if (!snippet && has_class(n, "result__snippet")) snippet = n;
        return title_link && snippet ? step::stop : step::descend;
      },
      [](xmlNode*) {});
  if (!title_link) return std::nullopt;
  const auto href = attribute(title_link, "href");
  auto url = href ? ddg_target(*href) : std::nullopt;
  if (!url) return std::nullopt;
  search_hit hit{text_of(title_link, 512), std::move(*url), snippet ? text_of(snippet, 2048) : std::string{}};
  if (hit.title.empty()) hit.title = hit.url;
  return hit;
}

}  // namespace

std::string html_to_text(std::string_view html, std::string_view base_url, std::size_t max_bytes) {
  text_sink out(max_bytes);
  if (out.full()) return {};
  doc_ptr doc = parse_html(html);
  if (!doc) return {};
  xmlNode* root = xmlDocGetRootElement(doc.get());
  xmlNode* head = root != nullptr && is_element(root, "html") ? child_element(root, "head") : nullptr;
  if (xmlNode* title = child_element(head, "title")) {
    const std::string t = text_of(title, max_bytes);
    if (!t.empty()) {
      out.open_mark("# ");
      out.text(t);
      out.block(2);
    }
  }
  text_walker walker(out, find_link_base(head, base_url));
  walk(
      reinterpret_cast<xmlNode*>(doc.get()), [&](xmlNode* n) { return walker.enter(n); },
      [&](xmlNode* n) { walker.leave(n); });
  return out.take();
}

std::vector<search_hit> parse_duckduckgo_html(std::string_view html, std::size_t max_results) {
  std::vector<search_hit> hits;
  if (max_results == 0) return hits;
  doc_ptr doc = parse_html(html);
  if (!doc) return hits;
  walk(
      reinterpret_cast<xmlNode*>(doc.get()),
      [&](xmlNode* n) {
        if (n->type != XML_ELEMENT_NODE) return step::skip;
        if (!has_class(n, "result")) return step::descend;
        if (!has_class(n, "result--ad")) {
          if (auto hit = read_hit(n)) hits.push_back(std::move(*hit));
        }
        return hits.size() >= max_results ? step::stop : step::skip;
      },
      [](xmlNode*) {});
  return hits;
}

}  // namespace warden::tools
