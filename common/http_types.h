// The seam between the HTTP server (http/) and the API surfaces (api/*): a parsed request and
// an abstract writer, so no API code includes Beast.
//
// A route (method, path, auth policy, surface, handler) is declared by the API surface that owns
// it (api/openai/chat_handler.h routes(), api/control/routes.h) and served by http/router.h. A `surface` is a
// dialect's way of writing errors, used for the route's own errors and for transport-level
// ones (413, malformed requests, 500) on its paths.
//
// response_writer: either one `send` (a whole response), or `begin_stream` then any number of
// `write_stream` then `end_stream` (a chunked text/event-stream response). Every call returns
// false once the client is gone; callers then stop producing. All calls must be made from the
// connection's own strand (the coroutine the handler runs in).
#pragma once

#include <boost/asio/awaitable.hpp>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/principal.h"

namespace warden {

struct http_request {
  std::string method;   ///< "GET", "POST", …
  std::string path;     ///< target without the query string, e.g. "/v1/chat/completions"
  std::string query;    ///< after '?', "" when none
  std::vector<std::pair<std::string, std::string>> headers;  ///< names lower-cased
  std::string body;
  std::string remote;   ///< peer address, for logs
  std::string request_id;  ///< "req_…", minted by the server for every request; sent as the `request-id` header
  /// Who sent it (common/principal.h): set by the router from the API key before the handler
  /// runs; the default (name "", role user) until then and on open routes.
  principal caller;

  /// First header with this (lower-case) name; "" when absent.
  std::string_view header(std::string_view name) const {
    for (const auto& [k, v] : headers) {
      if (k == name) return v;
    }
    return {};
  }
};

class response_writer {
 public:
  virtual ~response_writer() = default;
  /// Sends a complete response with the given status, content type and body.
  virtual boost::asio::awaitable<bool> send(int status, std::string content_type,
                                            std::string body) = 0;
  /// Sends 200 with `Content-Type: text/event-stream` and chunked encoding.
  virtual boost::asio::awaitable<bool> begin_stream() = 0;
  /// Sends bytes as one chunk, flushed at once (no batching).
  virtual boost::asio::awaitable<bool> write_stream(std::string bytes) = 0;
  /// Sends the final empty chunk.
  virtual boost::asio::awaitable<bool> end_stream() = 0;
  /// True once any response bytes went out (errors must then go in-band).
  virtual bool started() const = 0;
  /// Adds a header to the response that send() or begin_stream() will write (e.g. CORS
  /// headers); ignored once started().
  virtual void add_header(std::string name, std::string value) = 0;
};

/// Who may call a route: anyone, or only with the server's API key (when one is configured).
enum class auth_policy { open, api_key };

struct error;

/// An API surface's error dialect.
struct surface {
  std::string_view name;                          ///< "openai", "control", "anthropic"
  /// The JSON body of an error response; `request_id` is the request's (the `request-id` header).
  std::string (*error_body)(const error& e, std::string_view request_id);
  std::string (*inband_error)(const error& e);    ///< what ends a stream that already started
};

using route_handler = std::function<boost::asio::awaitable<void>(const http_request&, response_writer&)>;

struct route {
  std::string_view method;  ///< "GET" routes also answer HEAD
  std::string_view path;    ///< exact path, or a prefix when `prefix`
  bool prefix = false;
  auth_policy auth = auth_policy::api_key;
  const warden::surface* surface = nullptr;  ///< never null
  route_handler handler;
};

}  // namespace warden
