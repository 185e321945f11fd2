#include "tools/web_search.h"

#include <curl/curl.h>

#include <memory>

#include "common/json_util.h"
#include "common/text.h"
#include "common/utf8.h"
#include "tools/web_fetch.h"

namespace warden::tools {

namespace {

constexpr std::size_t k_max_backend_bytes = 2 * 1024 * 1024;

error backend_error(std::string text) {
  return make_error(errc::upstream_error, std::string(utf8_prefix(to_valid_utf8(text), 300)));
}

struct body_sink {
  std::string body;
  const std::function<bool()>* cancelled = nullptr;
};

std::size_t on_body(char* data, std::size_t size, std::size_t n, void* user) {
  auto* s = static_cast<body_sink*>(user);
  if (s->body.size() + size * n > k_max_backend_bytes) return 0;
  s->body.append(data, size * n);
  return size * n;
}

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* s = static_cast<body_sink*>(user);
  return s->cancelled != nullptr && *s->cancelled && (*s->cancelled)() ? 1 : 0;
}

std::string escape(const std::string& s) {
  char* e = curl_easy_escape(nullptr, s.c_str(), static_cast<int>(s.size()));
  std::string out = e != nullptr ? e : "";
  curl_free(e);
  return out;
}

/// GET (post_fields empty) or POST a form to the backend; the body of a 2xx answer.
result<std::string> call_backend(const std::string& url, const std::string& post_fields,
                                 std::chrono::milliseconds timeout, const std::function<bool()>& cancelled) {
  std::unique_ptr<CURL, void (*)(CURL*)> c(curl_easy_init(), curl_easy_cleanup);
  if (!c) return backend_error("Could not start a transfer (libcurl).");
  body_sink sink{{}, &cancelled};
  curl_easy_setopt(c.get(), CURLOPT_URL, url.c_str());
  curl_easy_setopt(c.get(), CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c.get(), CURLOPT_NOPROXY, "*");
  curl_easy_setopt(c.get(), CURLOPT_PROXY, "");
  curl_easy_setopt(c.get(), CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c.get(), CURLOPT_TIMEOUT_MS, static_cast<long>(std::max<std::int64_t>(1, timeout.count())));
  curl_easy_setopt(c.get(), CURLOPT_ACCEPT_ENCODING, "");
  curl_easy_setopt(c.get(), CURLOPT_USERAGENT, "Mozilla/5.0 (compatible; warden/0.1)");
  if (!post_fields.empty()) curl_easy_setopt(c.get(), CURLOPT_COPYPOSTFIELDS, post_fields.c_str());
  curl_easy_setopt(c.get(), CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(c.get(), CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(c.get(), CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(c.get(), CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(c.get(), CURLOPT_XFERINFODATA, &sink);
  const CURLcode code = curl_easy_perform(c.get());
  if (code == CURLE_ABORTED_BY_CALLBACK) return make_error(errc::cancelled, "The search was cancelled.");
  if (code != CURLE_OK) return backend_error(std::string("The search backend failed: ") + curl_easy_strerror(code) + ".");
  long status = 0;
  curl_easy_getinfo(c.get(), CURLINFO_RESPONSE_CODE, &status);
  if (status < 200 || status >= 300) {
    return backend_error("The search backend answered HTTP " + std::to_string(status) + ".");
  }
  return std::move(sink.body);
}

result<std::vector<search_hit>> parse_searxng(const std::string& body, std::size_t limit) {
  json doc = json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("results") || !doc["results"].is_array()) {
    return backend_error("The SearXNG backend did not answer with JSON results (is its json format enabled?).");
  }
  std::vector<search_hit> hits;
  for (const auto& r : doc["results"]) {
    if (hits.size() >= limit) break;
    if (!r.is_object() || !r.contains("url") || !r["url"].is_string()) continue;
    auto text = [&](const char* k) { return r.contains(k) && r[k].is_string() ? r[k].get<std::string>() : ""; };
    hits.push_back({to_valid_utf8(text("title")), to_valid_utf8(text("url")), to_valid_utf8(text("content"))});
  }
  return hits;
}

/// Whether a hit's URL is an http(s) URL inside the policy.
bool keep(const search_hit& h, const website_policy* policy) {
  auto p = parse_url(h.url);
  if (!p) return false;
  return policy == nullptr || !policy->refusal(p->host);
}

}  // namespace

result<search_backend> parse_search_backend(std::string_view spec) {
  const std::string s(trim(spec));
  if (s.empty() || s == "none") return search_backend{};
  if (s == "duckduckgo") return search_backend{search_kind::duckduckgo, "https://html.duckduckgo.com/html/"};
  if (s.rfind("duckduckgo:", 0) == 0 && has_http_scheme(s.substr(11))) return search_backend{search_kind::duckduckgo, s.substr(11)};
  if (s.rfind("searxng:", 0) == 0 && has_http_scheme(s.substr(8))) {
    std::string url = s.substr(8);
    while (!url.empty() && url.back() == '/') url.pop_back();
    return search_backend{search_kind::searxng, url};
  }
  return make_error(errc::invalid_request,
                    "a search backend is one of none, duckduckgo, duckduckgo:http(s)://URL, searxng:http(s)://URL");
}

result<std::vector<search_hit>> search_web(const search_backend& b, const std::string& query, std::size_t max_results,
                                           const website_policy* policy, std::chrono::milliseconds timeout,
                                           const std::function<bool()>& cancelled) {
  const bool filtered = policy != nullptr && !policy->empty();
  std::string q = query;
  if (filtered && policy->allowed_domains.size() == 1) q += " site:" + policy->allowed_domains.front();
  const std::size_t want = filtered ? max_results * 4 : max_results;
  result<std::string> body = std::string();
  if (b.kind == search_kind::searxng) {
    body = call_backend(b.url + "/search?q=" + escape(q) + "&format=json", "", timeout, cancelled);
  } else {
    body = call_backend(b.url, "q=" + escape(q), timeout, cancelled);
  }
  if (!body) return std::move(body).error();
  result<std::vector<search_hit>> found = std::vector<search_hit>();
  if (b.kind == search_kind::searxng) {
    found = parse_searxng(*body, want);
  } else {
    found = parse_duckduckgo_html(*body, want);
  }
  if (!found) return found;
  std::vector<search_hit> out;
  for (auto& h : *found) {
    if (out.size() < max_results && keep(h, policy)) out.push_back(std::move(h));
  }
  return out;
}

std::string format_hits(const std::vector<search_hit>& hits) {
  std::string out;
  for (const auto& h : hits) {
    if (!out.empty()) out += "\n---\n\n";
    out += "Title: " + std::string(utf8_prefix(h.title, 300)) + "\nURL: " + h.url +
           "\nSnippet: " + std::string(utf8_prefix(h.snippet, 1000)) + "\n";
  }
  out += "\nTo read one of these pages, call web_search again with its url.";
  return out;
}

}  // namespace warden::tools
