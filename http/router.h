// router — serves a route table (common/http_types.h: method, path, auth policy, surface,
// handler), declared by the API surfaces (api/openai/, api/anthropic/, api/responses/,
// api/control/) and assembled in
// app/serve.cpp; checks the API key; renders 404/405/401 and transport errors in the surface's
// own dialect.
//
// Order of checks for every request (request_guard.h), before any route parses anything:
//   1. Host names warden (DNS rebinding) → else 403;
//   2. Origin / Sec-Fetch-Site is absent, warden's own or --allowed-origins (CSRF) → else 403;
//      an allowed origin gets `Access-Control-Allow-Origin: <that origin>` and `Vary: Origin`;
//   3. OPTIONS (a CORS preflight) → 204 with the CORS headers for an allowed origin (methods,
//      the requested header names, max-age, and Private Network Access when asked); never `*`,
//      never for another origin (refused in step 2); without Origin, 204 with `Allow`;
//   4. the route table: unknown path → 404, known path with another method → 405 with
//      `Allow: <the path's methods>` (error_headers());
//   5. the API key (when configured; routes with auth_policy::api_key): `Authorization: Bearer
//      KEY` or `X-Api-Key: KEY` (compared in constant time) → else 401 with
//      `WWW-Authenticate: Bearer realm="warden"` (every surface); the key is resolved to
//      the request's principal (common/principal.h: the single user, or a named key of
//      --api-keys-file with its role, http/api_keys.h), which route() puts in
//      http_request::caller before the handler runs;
//   6. a POST or PUT route takes JSON: `Content-Type: application/json` → else 415, body not parsed.
// Errors use the envelope of the surface that owns the path (surface_for); paths no route owns
// use the default surface given at construction.
// Thread-safety: route() may run concurrently on many strands; the router is immutable once
// set_guard() has been called (before the server starts accepting).
#pragma once

#include <boost/asio/awaitable.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/http_types.h"
#include "http/api_keys.h"
#include "http/request_guard.h"

namespace warden::http {

struct router_options {
  key_ring keys;              ///< the accepted keys; empty = no authentication (http/api_keys.h)
  /// Host/Origin policy; the default is a loopback server on 8888 with nothing extra.
  guard_policy guard = make_guard_policy("127.0.0.1", 8888, {}, {});
};

class router {
 public:
  /// `fallback` renders errors for paths no route owns; it must outlive the router.
  router(router_options opts, std::vector<route> routes, const surface& fallback)
      : opts_(std::move(opts)), routes_(std::move(routes)), fallback_(fallback) {}

  /// Screens `req`, sets req.caller (step 5) and runs the route's handler.
  boost::asio::awaitable<void> route(http_request& req, response_writer& out);

  /// Steps 1–6 above on the request head alone (method, path, headers; the body is not needed):
  /// the error to answer, or nullopt when the request may proceed. The server calls it before it
  /// reads a body, so nobody unauthorized makes warden buffer one; route() calls it again.
  std::optional<error> screen(const http_request& head) const;

  /// The headers an answer to screen()'s error `e` for `req` carries besides the body:
  /// 405 → {"Allow", "GET, HEAD, POST, OPTIONS"}-like (the methods the path's routes take, in
  /// table order, HEAD after GET, OPTIONS last); 401 → {"WWW-Authenticate", "Bearer
  /// realm=\"warden\""}; none for any other error. Pure.
  std::vector<std::pair<std::string, std::string>> error_headers(const http_request& req, const error& e) const;

  /// The methods `path` answers, as an Allow header's value (above); "" for an unknown path.
  std::string allowed_methods(const std::string& path) const;

  /// The error dialect of `path`: its route's surface, or the fallback.
  const surface& surface_for(const std::string& path) const;

  /// Replaces the Host/Origin policy (once the bound port is known); call before serving.
  void set_guard(guard_policy g) { opts_.guard = std::move(g); }

  /// True when the request carries a configured key (or none is configured).
  bool authorized(const http_request& req) const { return identify(req).has_value(); }
  /// Who the request's key stands for: single_user() when no key is configured; nullopt when
  /// keys are configured and it carries none of them. The Bearer token is tried first, then
  /// X-Api-Key.
  std::optional<principal> identify(const http_request& req) const;

 private:
  /// The route for `path` and `method` (HEAD finds GET); else the path's first route (its
  /// method is the one a 405 names); null for an unknown path.
  const warden::route* find_route(const std::string& path, std::string_view method = {}) const;
  /// The CORS preflight (OPTIONS) answer.
  boost::asio::awaitable<void> preflight(const http_request& req, response_writer& out, const std::string& origin);

  router_options opts_;
  std::vector<warden::route> routes_;
  const surface& fallback_;
};

}  // namespace warden::http
