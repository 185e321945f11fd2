// router — maps a parsed request to its handler; checks the API key; renders 404/405/401.
//
// Routes:
//   GET  /health                      public; 200 {"status":"ok"} when the model is ready,
//                                     503 {"status":"loading"|"error","message":…} otherwise
//   GET  /v1/models, /v1/models/{id}  OpenAI model list / one model
//   POST /v1/chat/completions         OpenAI chat (api/openai/chat_handler.h)
//   POST /api/inference/tool-confirm  {session_id?, approval_id, decision:"allow"|"deny"} →
//                                     200 {"resolved":true}; 404 for an unknown, already decided
//                                     or other-session id; 400 for a malformed body
//   POST /api/inference/cancel        {cancel_id?, session_id?} (one at least) → 200
//                                     {"cancelled": n}: running tool loops stopped (pending
//                                     approvals denied, tools killed)
// Order of checks for every request (request_guard.h), before any route parses anything:
//   1. Host names warden (DNS rebinding) → else 403;
//   2. Origin / Sec-Fetch-Site is absent, warden's own or --allowed-origins (CSRF) → else 403;
//      an allowed origin gets `Access-Control-Allow-Origin: <that origin>` and `Vary: Origin`;
//   3. OPTIONS (a CORS preflight) → 204 with the CORS headers for an allowed origin (methods,
//      the requested header names, max-age, and Private Network Access when asked); never `*`,
//      never for another origin (refused in step 2); without Origin, 204 with `Allow`;
//   4. the route table: unknown path → 404, known path with another method → 405;
//   5. the API key (when configured; every route but /health): `Authorization: Bearer KEY` or
//      `X-Api-Key: KEY` (compared in constant time) → else 401;
//   6. a POST route takes JSON: `Content-Type: application/json` → else 415, body not parsed.
// Errors use the surface's envelope (the OpenAI one: /v1/* and /api/* are OpenAI-shaped today).
// Thread-safety: route() may run concurrently on many strands; the router is immutable once
// set_guard() has been called (before the server starts accepting).
#pragma once

#include <boost/asio/awaitable.hpp>
#include <functional>
#include <optional>
#include <string>

#include "agent/chat_service.h"
#include "agent/tool_loop.h"
#include "common/http_types.h"
#include "http/request_guard.h"

namespace warden::http {

struct health_report {
  bool ready = false;
  std::string status;   ///< "ok", "loading" or "error"
  std::string message;  ///< why not ready
};

struct router_options {
  std::string api_key;        ///< "" = no authentication
  long long started_unix_s = 0;
  agent::tool_runtime* tools = nullptr;  ///< null: the tool endpoints answer 503
  /// Host/Origin policy; the default is a loopback server on 8888 with nothing extra.
  guard_policy guard = make_guard_policy("127.0.0.1", 8888, {}, {});
};

class router {
 public:
  router(router_options opts, agent::chat_service& chat, std::function<health_report()> health)
      : opts_(std::move(opts)), chat_(chat), health_(std::move(health)) {}

  boost::asio::awaitable<void> route(const http_request& req, response_writer& out);

  /// Steps 1–6 above on the request head alone (method, path, headers; the body is not needed):
  /// the error to answer, or nullopt when the request may proceed. The server calls it before it
  /// reads a body, so nobody unauthorized makes warden buffer one; route() calls it again.
  std::optional<error> screen(const http_request& head) const;

  /// Replaces the Host/Origin policy (once the bound port is known); call before serving.
  void set_guard(guard_policy g) { opts_.guard = std::move(g); }

  /// True when the request carries the configured key (or none is configured).
  bool authorized(const http_request& req) const;

 private:
  enum class auth_policy { open, api_key };
  using handler = boost::asio::awaitable<void> (router::*)(const http_request&, response_writer&);
  struct route_entry {
    std::string_view path;    ///< exact path, or a prefix when `prefix`
    bool prefix;
    std::string_view method;  ///< GET routes also answer HEAD
    auth_policy auth;
    handler fn;
  };
  static const route_entry k_routes[];
  /// The route for a path (prefix routes included); nullptr when none.
  static const route_entry* find_route(const std::string& path);

  boost::asio::awaitable<void> health(const http_request& req, response_writer& out);
  boost::asio::awaitable<void> chat_completions(const http_request& req, response_writer& out);
  boost::asio::awaitable<void> models(const http_request& req, response_writer& out);
  boost::asio::awaitable<void> tool_confirm(const http_request& req, response_writer& out);
  boost::asio::awaitable<void> cancel(const http_request& req, response_writer& out);
  /// The CORS preflight (OPTIONS) answer.
  boost::asio::awaitable<void> preflight(const http_request& req, response_writer& out, const std::string& origin);

  router_options opts_;
  agent::chat_service& chat_;
  std::function<health_report()> health_;
};

}  // namespace warden::http
