#include "http/router.h"

#include "common/error.h"

#include <algorithm>
#include <cctype>

namespace warden::http {

namespace asio = boost::asio;

std::optional<principal> router::identify(const http_request& req) const {
  if (!opts_.keys.required()) return single_user();
  std::string_view auth = req.header("authorization");
  // The scheme name is case-insensitive (RFC 9110 §11.1); spaces around the token are not part of it.
  constexpr std::string_view bearer = "bearer ";
  if (auth.size() > bearer.size()) {
    bool scheme_ok = true;
    for (std::size_t i = 0; i < bearer.size(); ++i) {
      if (std::tolower(static_cast<unsigned char>(auth[i])) != bearer[i]) scheme_ok = false;
    }
    std::string_view token = auth.substr(bearer.size());
    while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
    while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
    if (scheme_ok) {
      if (auto who = opts_.keys.resolve(token)) return who;
    }
  }
  std::string_view key = req.header("x-api-key");
  if (key.empty()) return std::nullopt;
  return opts_.keys.resolve(key);
}

namespace {
/// Methods and headers a browser page of an allowed origin may use (CORS preflight answer).
constexpr const char* k_cors_methods = "GET, POST, OPTIONS";
constexpr const char* k_cors_max_age_s = "600";

/// Header names a preflight may ask for: tokens only (RFC 9110 §5.6.2), echoed back.
bool header_list_ok(std::string_view v) {
  for (char c : v) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == ',' || c == ' ';
    if (!ok) return false;
  }
  return v.size() <= 2048;
}
}  // namespace

const warden::route* router::find_route(const std::string& path, std::string_view method) const {
  const warden::route* first = nullptr;  // the path's first route: what a wrong method is told to use
  for (const auto& r : routes_) {
    if (!(r.prefix ? path.rfind(r.path, 0) == 0 : path == r.path)) continue;
    if (r.method == method || (r.method == "GET" && method == "HEAD")) return &r;
    if (!first) first = &r;
  }
  return first;
}

std::string router::allowed_methods(const std::string& path) const {
  std::vector<std::string_view> methods;
  auto add = [&methods](std::string_view m) {
    if (std::find(methods.begin(), methods.end(), m) == methods.end()) methods.push_back(m);
  };
  for (const auto& r : routes_) {
    if (!(r.prefix ? path.rfind(r.path, 0) == 0 : path == r.path)) continue;
    add(r.method);
    if (r.method == "GET") add("HEAD");
  }
  if (methods.empty()) return "";
  add("OPTIONS");  // route() answers a preflight on every path
  std::string out;
  for (auto m : methods) out += (out.empty() ? "" : ", ") + std::string(m);
  return out;
}

std::vector<std::pair<std::string, std::string>> router::error_headers(const http_request& req, const error& e) const {
  if (e.code == errc::method_not_allowed) return {{"Allow", allowed_methods(req.path)}};
  if (e.code == errc::unauthorized) return {{"WWW-Authenticate", "Bearer realm=\"warden\""}};
  return {};
}

const surface& router::surface_for(const std::string& path) const {
  const warden::route* r = find_route(path);
  return r ? *r->surface : fallback_;
}

std::optional<error> router::screen(const http_request& req) const {
  // 1–2: who the request is addressed to and which page sent it.
  if (auto e = check_host(req, opts_.guard)) return e;
  if (auto o = check_origin(req, opts_.guard); o.refused) return o.refused;
  if (req.method == "OPTIONS") return std::nullopt;  // a preflight: answered by route()
  const warden::route* match = find_route(req.path, req.method);
  if (!match) {
    std::string hint;
    if (req.path.rfind("/v1/v1/", 0) == 0) {
      hint = " (the base URL already ends in /v1: OpenAI SDKs take http://HOST:PORT/v1, Anthropic SDKs http://HOST:PORT)";
    }
    return make_error(errc::not_found, "no route for " + req.method + " " + req.path.substr(0, 200) + hint, "",
                      "unknown_route");
  }
  const bool head_ok = match->method == "GET" && req.method == "HEAD";
  if (req.method != match->method && !head_ok) {
    std::string allowed = allowed_methods(req.path);
    allowed = allowed.substr(0, allowed.rfind(", OPTIONS"));
    return make_error(errc::method_not_allowed,
                      req.method.substr(0, 20) + " is not allowed on " + req.path.substr(0, 200) + "; use " + allowed);
  }
  if (match->auth == auth_policy::api_key && !authorized(req)) {
    return make_error(errc::unauthorized,
                      "missing or invalid API key: send 'Authorization: Bearer <key>' or 'X-Api-Key: <key>'", "",
                      "invalid_api_key");
  }
  if (match->method == "POST" || match->method == "PUT") return check_json_content_type(req);
  return std::nullopt;
}

asio::awaitable<void> router::route(http_request& req, response_writer& out) {
  if (auto e = screen(req)) {
    for (auto& [name, value] : error_headers(req, *e)) out.add_header(std::move(name), std::move(value));
    co_await out.send(http_status(e->code), "application/json", surface_for(req.path).error_body(*e, req.request_id));
    co_return;
  }
  const std::string origin = check_origin(req, opts_.guard).allowed_origin;
  if (!origin.empty()) {
    out.add_header("Access-Control-Allow-Origin", origin);
    out.add_header("Vary", "Origin");
  }
  if (req.method == "OPTIONS") {
    co_await preflight(req, out, origin);
    co_return;
  }
  const warden::route* match = find_route(req.path, req.method);
  // An open route carries the default principal (it owns nothing); a keyed one, its key's.
  req.caller = match->auth == auth_policy::api_key ? identify(req).value_or(principal{}) : principal{};
  co_await match->handler(req, out);
}

asio::awaitable<void> router::preflight(const http_request& req, response_writer& out, const std::string& origin) {
  if (origin.empty()) {  // not a browser preflight: say what the server allows
    out.add_header("Allow", k_cors_methods);
    co_await out.send(204, "", "");
    co_return;
  }
  out.add_header("Access-Control-Allow-Methods", k_cors_methods);
  const std::string_view asked = req.header("access-control-request-headers");
  out.add_header("Access-Control-Allow-Headers",
                 header_list_ok(asked) && !asked.empty() ? std::string(asked) : "authorization, content-type, x-api-key");
  out.add_header("Access-Control-Max-Age", k_cors_max_age_s);
  // Chrome's Private Network Access: a page asking to reach a loopback/private server says so in
  // the preflight; only an allowed origin (checked before) gets the yes.
  if (req.header("access-control-request-private-network") == "true") {
    out.add_header("Access-Control-Allow-Private-Network", "true");
  }
  co_await out.send(204, "", "");
}

}  // namespace warden::http
