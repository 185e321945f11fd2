// web_search {query?, url?} (reference unsloth-studio.md §4.7; builtins.h): a query goes to the
// configured backend (web_search.h); a url is fetched through the guard (web_fetch.h) and comes
// back as text: HTML through libxml2 (html_text.h), PDF through poppler in a child (pdf_text.h),
// text types as they are; other content is refused.
#include <atomic>
#include <chrono>

#include "common/text.h"
#include "common/utf8.h"
#include "tools/builtins.h"
#include "tools/html_text.h"
#include "tools/pdf_text.h"
#include "tools/program.h"
#include "tools/web_fetch.h"
#include "tools/web_search.h"

namespace warden::tools {

namespace {

constexpr std::chrono::milliseconds k_fetch_limit{60000};  // reference §4.7: min(timeout, 60) s
constexpr int k_max_pdf_pages = 50;                        // reference §4.7
constexpr std::size_t k_html_text_bytes = 256 * 1024;      // text made from a page, before the result cap

const char* const k_no_backend =
    "Error: web search is not set up on this server. The operator can start warden with "
    "--search-backend duckduckgo or --search-backend searxng:URL. A page can still be read by calling "
    "web_search with a url.";

json schema() {
  return {{"type", "object"},
          {"properties",
           {{"query", {{"type", "string"}, {"description", "What to search the web for."}}},
            {"url", {{"type", "string"}, {"description", "An http(s) URL to read instead of searching."}}}}},
          {"required", json::array()}};
}

bool is_text_type(const std::string& t) {
  return t.rfind("text/", 0) == 0 || t == "application/json" || t == "application/xml" || t == "application/xhtml+xml" ||
         t == "application/javascript" || t.ends_with("+json") || t.ends_with("+xml");
}

/// Whether the bytes look like a binary file (a NUL in the first KiB).
bool looks_binary(const std::string& body) { return body.substr(0, 1024).find('\0') != std::string::npos; }

/// The page as text for the model, or why not.
result<std::string> page_text(const fetched& f) {
  const bool html = f.content_type == "text/html" || f.content_type == "application/xhtml+xml";
  const bool pdf = f.content_type == "application/pdf" ||
                   (!html && !is_text_type(f.content_type) && f.body.rfind("%PDF-", 0) == 0);
  if (pdf) return pdf_to_text(f.body, k_max_pdf_pages, k_html_text_bytes, std::chrono::seconds(30));
  if (html || (f.content_type.empty() && !looks_binary(f.body))) return html_to_text(f.body, f.url, k_html_text_bytes);
  if (is_text_type(f.content_type) && !looks_binary(f.body)) return to_valid_utf8(f.body);
  const std::string type = f.content_type.empty() ? std::string("unknown") : f.content_type;
  return make_error(errc::invalid_request, "The page at " + f.host + " is binary content (" +
                                               std::string(utf8_prefix(to_valid_utf8(type), 80)) + "), which is not read.");
}

std::string cap_result(std::string text) {
  if (utf8_length(text) <= k_max_result_chars) return text;
  return std::string(utf8_prefix(text, k_max_result_chars)) + "\n[… the page was cut at " +
         std::to_string(k_max_result_chars) + " characters]";
}

/// One line for a status text: control characters as spaces, at most `chars` characters.
std::string one_line(std::string_view s, std::size_t chars) {
  std::string v = to_valid_utf8(s);
  for (char& c : v) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  std::string out(utf8_prefix(v, chars));
  if (out.size() < v.size()) out += "…";
  return out;
}

class web_search_tool : public tool {
 public:
  explicit web_search_tool(web_options o) : o_(std::move(o)) {
    info_ = {"web_search", "web search",
             "Search the web (query) and get titles, URLs and snippets, or read one page (url) as text. Use it for "
             "current information and to check facts.",
             schema(),
             {.runs_code = false, .reads_network = true, .writes_files = false, .once_per_answer = false,
              .read_only = true}};
  }
  const tool_info& info() const override { return info_; }
  std::optional<std::string> unavailable(isolation) const override { return std::nullopt; }

  std::string status_text(const json& args) const override {
    if (auto u = url_of(args)) {
      auto p = parse_url(*u);
      return "Reading: " + (p ? one_line(p->host, 100) : std::string("a page"));
    }
    return "Searching: " + one_line(query_of(args).value_or(""), 100);
  }

  boost::asio::awaitable<tool_result> run(const json& args, tool_context& ctx) override {
    auto work = job(args, ctx);
    if (o_.pool == nullptr) co_return work();
    co_return co_await o_.pool->run_blocking(std::move(work));
  }

 private:
  static std::optional<std::string> url_of(const json& a) {
    auto it = a.find("url");
    if (it == a.end() || !it->is_string() || trim(it->get<std::string>()).empty()) return std::nullopt;
    return std::string(trim(it->get<std::string>()));
  }
  static std::optional<std::string> query_of(const json& a) {
    auto it = a.find("query");
    if (it == a.end() || !it->is_string() || trim(it->get<std::string>()).empty()) return std::nullopt;
    return std::string(trim(it->get<std::string>()));
  }

  /// The blocking work of one call, as a value the pool can run.
  std::function<tool_result()> job(const json& args, const tool_context& ctx) const {
    std::optional<website_policy> policy;
    if (ctx.website != nullptr) policy = *ctx.website;
    std::function<bool()> cancelled = [tok = ctx.cancel] { return tok && tok->cancelled(); };
    auto limit = ctx.timeout.count() > 0 ? std::min(ctx.timeout, k_fetch_limit) : k_fetch_limit;
    auto url = url_of(args);
    auto query = query_of(args);
    return [this, url, query, policy, cancelled, limit]() -> tool_result {
      const website_policy* pol = policy ? &*policy : nullptr;
      if (url) return read_page(*url, pol, cancelled, limit);
      if (!query) return error_result("Error: web_search needs a query (to search) or a url (to read a page).");
      return search(*query, pol, cancelled, limit);
    };
  }

  tool_result read_page(const std::string& url, const website_policy* pol, const std::function<bool()>& cancelled,
                        std::chrono::milliseconds limit) const {
    fetch_options fo;
    fo.allow_private = o_.allow_private_fetch;
    fo.own_port = o_.own_port;
    fo.timeout = limit;
    fo.policy = pol;
    fo.cancelled = cancelled;
    auto f = fetch_url(url, fo);
    if (!f) return error_result("Error: " + f.error().message);
    if (f->status >= 400) {
      return error_result("Error: the page at " + f->host + " answered HTTP " + std::to_string(f->status) + ".");
    }
    auto text = page_text(*f);
    if (!text) return error_result("Error: " + text.error().message);
    std::string head = "Page: " + f->url + "\n";
    if (f->truncated) head += "(only the first " + std::to_string(fo.max_bytes / 1024) + " KiB of the page were read)\n";
    if (trim(*text).empty()) return ok_result(head + "\nThe page has no readable text.");
    return ok_result(cap_result(head + "\n" + *text));
  }

  tool_result search(const std::string& query, const website_policy* pol, const std::function<bool()>& cancelled,
                     std::chrono::milliseconds limit) const {
    if (o_.backend.kind == search_kind::none) return error_result(k_no_backend);
    auto hits = search_web(o_.backend, query, k_search_results, pol, limit, cancelled);
    if (!hits) return error_result("Error: " + hits.error().message);
    if (hits->empty()) {
      return ok_result(pol != nullptr && !pol->empty() ? "No results found within the website access limits."
                                                       : "No results found.");
    }
    return ok_result(cap_result(format_hits(*hits)));
  }

  web_options o_;
  tool_info info_;
};

}  // namespace

std::unique_ptr<tool> make_web_search_tool(web_options o) { return std::make_unique<web_search_tool>(std::move(o)); }

}  // namespace warden::tools
