#include "http/router.h"

#include "api/openai/chat_handler.h"
#include "api/openai/errors.h"
#include "common/json_util.h"

#include <cctype>

namespace warden::http {

namespace asio = boost::asio;

namespace {
bool equal_constant_time(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const std::size_t n = std::max(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    const char ca = i < a.size() ? a[i] : 0;
    const char cb = i < b.size() ? b[i] : 0;
    diff = static_cast<unsigned char>(diff | (ca ^ cb));
  }
  return diff == 0;
}
}  // namespace

bool router::authorized(const http_request& req) const {
  if (opts_.api_key.empty()) return true;
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
    if (scheme_ok && equal_constant_time(token, opts_.api_key)) return true;
  }
  std::string_view key = req.header("x-api-key");
  return !key.empty() && equal_constant_time(key, opts_.api_key);
}

const router::route_entry router::k_routes[] = {
    {"/health", false, "GET", auth_policy::open, &router::health},
    {"/v1/chat/completions", false, "POST", auth_policy::api_key, &router::chat_completions},
    {"/v1/models", false, "GET", auth_policy::api_key, &router::models},
    {"/v1/models/", true, "GET", auth_policy::api_key, &router::models},
    {"/api/inference/tool-confirm", false, "POST", auth_policy::api_key, &router::tool_confirm},
    {"/api/inference/cancel", false, "POST", auth_policy::api_key, &router::cancel},
};

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

const router::route_entry* router::find_route(const std::string& path) {
  for (const auto& r : k_routes) {
    if (r.prefix ? path.rfind(r.path, 0) == 0 : path == r.path) return &r;
  }
  return nullptr;
}

std::optional<error> router::screen(const http_request& req) const {
  // 1–2: who the request is addressed to and which page sent it.
  if (auto e = check_host(req, opts_.guard)) return e;
  if (auto o = check_origin(req, opts_.guard); o.refused) return o.refused;
  if (req.method == "OPTIONS") return std::nullopt;  // a preflight: answered by route()
  const route_entry* match = find_route(req.path);
  if (!match) {
    return make_error(errc::not_found, "no route for " + req.method + " " + req.path.substr(0, 200), "", "unknown_route");
  }
  const bool head_ok = match->method == "GET" && req.method == "HEAD";
  if (req.method != match->method && !head_ok) {
    return make_error(errc::method_not_allowed, "use " + std::string(match->method) + " " + req.path);
  }
  if (match->auth == auth_policy::api_key && !authorized(req)) {
    return make_error(errc::unauthorized,
                      "missing or invalid API key: send 'Authorization: Bearer <key>' or 'X-Api-Key: <key>'", "",
                      "invalid_api_key");
  }
  if (match->method == "POST") return check_json_content_type(req);
  return std::nullopt;
}

asio::awaitable<void> router::route(const http_request& req, response_writer& out) {
  if (auto e = screen(req)) {
    co_await api::openai::send_error(out, *e);
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
  co_await (this->*(find_route(req.path)->fn))(req, out);
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

asio::awaitable<void> router::health(const http_request&, response_writer& out) {
  const health_report h = health_();
  json body = {{"status", h.status}};
  if (!h.ready) body["message"] = h.message;
  co_await out.send(h.ready ? 200 : 503, "application/json", dump_safe(body));
}

asio::awaitable<void> router::chat_completions(const http_request& req, response_writer& out) {
  co_await api::openai::handle_chat_completions(req, out, chat_, opts_.tools);
}

asio::awaitable<void> router::models(const http_request& req, response_writer& out) {
  const std::string id = chat_.upstream().model_id();
  if (id.empty()) {  // an upstream that has not answered yet: no model to name
    co_await api::openai::send_error(out, make_error(errc::upstream_unavailable, chat_.upstream().status_message()));
    co_return;
  }
  co_await api::openai::handle_models(req, out, id, opts_.started_unix_s);
}

namespace {
/// The body as a JSON object, or the 400 to send.
result<json> object_body(const http_request& req) {
  if (!is_valid_utf8(req.body)) return make_error(errc::invalid_request, "the body is not valid UTF-8", "", "invalid_json");
  if (json_nesting_depth(req.body, k_max_json_depth) > k_max_json_depth) {
    return make_error(errc::invalid_request, "the body nests JSON too deeply", "", "invalid_json");
  }
  std::string duplicate;
  std::optional<json> j = parse_json_checking_keys(req.body, duplicate);
  if (j->is_discarded()) return make_error(errc::invalid_request, "the body is not valid JSON", "", "invalid_json");
  if (!duplicate.empty()) {
    return make_error(errc::invalid_request, "the body repeats the key '" + duplicate.substr(0, 100) + "'",
                      duplicate.substr(0, 100), "duplicate_key");
  }
  if (!j->is_object()) return make_error(errc::invalid_request, "the body must be a JSON object", "", "invalid_type");
  return std::move(*j);
}

std::optional<error> optional_string(const json& j, const char* key, std::optional<std::string>& out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (!it->is_string()) {
    std::string msg = "'";
    msg.append(key).append("' must be a string");
    return make_error(errc::invalid_request, std::move(msg), key, "invalid_type");
  }
  out = it->get<std::string>();
  return std::nullopt;
}
}  // namespace

asio::awaitable<void> router::tool_confirm(const http_request& req, response_writer& out) {
  if (!opts_.tools) {
    co_await api::openai::send_error(out, make_error(errc::upstream_unavailable, "the tool loop is not available"));
    co_return;
  }
  auto body = object_body(req);
  if (!body) {
    co_await api::openai::send_error(out, body.error());
    co_return;
  }
  std::optional<std::string> id, decision, session;
  for (auto [key, slot] : {std::pair{"approval_id", &id}, {"decision", &decision}, {"session_id", &session}}) {
    if (auto e = optional_string(*body, key, *slot)) {
      co_await api::openai::send_error(out, *e);
      co_return;
    }
  }
  if (!id || id->empty()) {
    co_await api::openai::send_error(out, make_error(errc::invalid_request, "'approval_id' is required", "approval_id",
                                                     "missing_required_parameter"));
    co_return;
  }
  if (!decision || (*decision != "allow" && *decision != "deny")) {
    co_await api::openai::send_error(
        out, make_error(errc::invalid_request, "'decision' must be \"allow\" or \"deny\"", "decision", "invalid_value"));
    co_return;
  }
  const bool ok = opts_.tools->approvals.resolve(
      *id, *decision == "allow" ? agent::approval_decision::allow : agent::approval_decision::deny,
      session ? std::optional<std::string_view>(*session) : std::nullopt);
  if (!ok) {
    co_await api::openai::send_error(
        out, make_error(errc::not_found, "no pending tool call with this approval_id (unknown, already decided, or another session)",
                        "approval_id", "approval_not_found"));
    co_return;
  }
  co_await out.send(200, "application/json", R"({"resolved":true})");
}

asio::awaitable<void> router::cancel(const http_request& req, response_writer& out) {
  if (!opts_.tools) {
    co_await api::openai::send_error(out, make_error(errc::upstream_unavailable, "the tool loop is not available"));
    co_return;
  }
  auto body = object_body(req);
  if (!body) {
    co_await api::openai::send_error(out, body.error());
    co_return;
  }
  std::optional<std::string> cancel_id, session;
  for (auto [key, slot] : {std::pair{"cancel_id", &cancel_id}, {"session_id", &session}}) {
    if (auto e = optional_string(*body, key, *slot)) {
      co_await api::openai::send_error(out, *e);
      co_return;
    }
  }
  if ((!cancel_id || cancel_id->empty()) && (!session || session->empty())) {
    co_await api::openai::send_error(out, make_error(errc::invalid_request, "send 'cancel_id' or 'session_id'", "cancel_id",
                                                     "missing_required_parameter"));
    co_return;
  }
  std::size_t n = 0;
  if (cancel_id && !cancel_id->empty()) n += opts_.tools->cancels.cancel("cancel_id", *cancel_id, "cancelled by request");
  if (session && !session->empty()) n += opts_.tools->cancels.cancel("session_id", *session, "cancelled by request");
  co_await out.send(200, "application/json", "{\"cancelled\":" + std::to_string(n) + "}");
}

}  // namespace warden::http
