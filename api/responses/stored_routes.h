// Stored-response routes of the Responses surface (internal to api/responses/):
//   GET    /v1/responses/{id}                 the object (a live background run: as it stands)
//   GET    /v1/responses/{id}?stream=true[&starting_after=N]  a live run followed, a finished
//          background run's stored events replayed (a foreground one: 400, param stream)
//   GET    /v1/responses/{id}/input_items     the request's input items, paged (below)
//   DELETE /v1/responses/{id}                 {"id","object":"response.deleted","deleted":true};
//          a running one: 400 (cancel it first)
//   POST   /v1/responses/{id}/cancel          a live background run is stopped ("cancelled");
//          a finished one is returned as it is; a foreground one: 400
// An unknown id (or no store) is 404 not_found; so is another key's response (named keys: a user
// key reaches only the rows it owns, store::stored_response::owner; an admin key all of them).
// Any other path or method is 404 unknown_route.
// Paging (input_items): limit 1–100 (default 20), order asc | desc (default desc: newest
// first), after = an item id (the page starts after it; unknown: an empty page). The answer is
// {"object":"list","data":[…],"has_more","first_id","last_id"} (ids null on an empty page).
// Thread-safety: pure functions; handle_item runs on the connection's strand.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <cstddef>
#include <string>
#include <string_view>

#include "api/responses/responses_handler.h"
#include "common/http_types.h"
#include "common/json_util.h"
#include "common/result.h"

namespace warden::api::responses {

struct page_request {
  std::size_t limit = 20;
  bool asc = false;   ///< oldest first
  std::string after;  ///< "" = from the start
};

/// limit, order and after from a query string; 400 naming the parameter ("query" when the
/// string itself is malformed).
result<page_request> parse_page(std::string_view query);

/// One page of `items` (a JSON array as stored, oldest first; anything else reads as empty).
json page_items(const json& items, const page_request& p);

/// GET, DELETE and POST …/cancel under /v1/responses/{id}.
boost::asio::awaitable<void> handle_item(const http_request& req, response_writer& out, responses_deps& deps);

}  // namespace warden::api::responses
