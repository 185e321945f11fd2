// web_search backends — where web_search's `query` mode gets its results (issue 25; reference
// unsloth-studio.md §4.7, which uses DuckDuckGo).
//
// `--search-backend`:
//   none (the default)  — no search; the tool says how to turn it on (a url still works);
//   duckduckgo[:URL]    — DuckDuckGo's HTML endpoint (https://html.duckduckgo.com/html/ unless a
//                         URL is given), results parsed by parse_duckduckgo_html (html_text.h);
//   searxng:URL         — a SearXNG instance's JSON API (GET URL/search?q=…&format=json; the
//                         instance must enable the json format).
// The backend's URL is the operator's, so it is fetched directly (it may be on this machine); no
// proxy from the environment; 2 MiB and the given timeout at most.
// Errors: errc::invalid_request for a bad spec (parse_search_backend); errc::upstream_error for a
// backend that fails or answers something unreadable, with a message for the model.
// Thread-safety: search() blocks (network): call it on a blocking pool; calls may run at once.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "tools/html_text.h"
#include "tools/website_policy.h"

namespace warden::tools {

/// Results a search returns (reference §4.7: max_results = 5).
inline constexpr std::size_t k_search_results = 5;

enum class search_kind { none, duckduckgo, searxng };

struct search_backend {
  search_kind kind = search_kind::none;
  std::string url;  ///< the endpoint ("" for none)
};

/// The backend a --search-backend value names; errc::invalid_request with the accepted forms.
result<search_backend> parse_search_backend(std::string_view spec);

/// Up to `max_results` hits for `query`, within the website policy (hits outside it are dropped;
/// it over-fetches ×4 when the policy has entries, and a single allowed domain narrows the
/// query with site:). Never called with kind none.
result<std::vector<search_hit>> search_web(const search_backend& backend, const std::string& query,
                                           std::size_t max_results, const website_policy* policy,
                                           std::chrono::milliseconds timeout, const std::function<bool()>& cancelled);

/// The hits as the model reads them: "Title: …\nURL: …\nSnippet: …" blocks separated by "---",
/// and a hint to call again with a url (reference §4.7).
std::string format_hits(const std::vector<search_hit>& hits);

}  // namespace warden::tools
