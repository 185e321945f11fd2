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

asio::awaitable<void> router::route(const http_request& req, response_writer& out) {
  const std::string& p = req.path;
  if (p == "/health") {
    if (req.method != "GET" && req.method != "HEAD") {
      co_await api::openai::send_error(out, make_error(errc::method_not_allowed, "use GET /health"));
      co_return;
    }
    const health_report h = health_();
    json body = {{"status", h.status}};
    if (!h.ready) body["message"] = h.message;
    co_await out.send(h.ready ? 200 : 503, "application/json", dump_safe(body));
    co_return;
  }
  if (p.rfind("/api/", 0) == 0) {
    if (!authorized(req)) {
      co_await api::openai::send_error(
          out, make_error(errc::unauthorized,
                          "missing or invalid API key: send 'Authorization: Bearer <key>' or 'X-Api-Key: <key>'",
                          "", "invalid_api_key"));
      co_return;
    }
    if (p == "/api/inference/tool-confirm" || p == "/api/inference/cancel") {
      if (req.method != "POST") {
        co_await api::openai::send_error(out, make_error(errc::method_not_allowed, "use POST " + p));
        co_return;
      }
      if (!opts_.tools) {
        co_await api::openai::send_error(out, make_error(errc::upstream_unavailable, "the tool loop is not available"));
        co_return;
      }
      if (p == "/api/inference/tool-confirm") co_await tool_confirm(req, out);
      else co_await cancel(req, out);
      co_return;
    }
  }
  if (p.rfind("/v1/", 0) == 0) {
    if (!authorized(req)) {
      co_await api::openai::send_error(
          out, make_error(errc::unauthorized,
                          "missing or invalid API key: send 'Authorization: Bearer <key>' or 'X-Api-Key: <key>'",
                          "", "invalid_api_key"));
      co_return;
    }
    if (p == "/v1/chat/completions") {
      if (req.method != "POST") {
        co_await api::openai::send_error(out, make_error(errc::method_not_allowed,
                                                         "use POST /v1/chat/completions"));
        co_return;
      }
      co_await api::openai::handle_chat_completions(req, out, chat_, opts_.tools);
      co_return;
    }
    if (p == "/v1/models" || p.rfind("/v1/models/", 0) == 0) {
      if (req.method != "GET") {
        co_await api::openai::send_error(out, make_error(errc::method_not_allowed, "use GET " + p));
        co_return;
      }
      const std::string id = chat_.upstream().model_id();
      if (id.empty()) {  // an upstream that has not answered yet: no model to name
        co_await api::openai::send_error(out, make_error(errc::upstream_unavailable,
                                                         chat_.upstream().status_message()));
        co_return;
      }
      co_await api::openai::handle_models(req, out, id, opts_.started_unix_s);
      co_return;
    }
  }
  co_await api::openai::send_error(
      out, make_error(errc::not_found, "no route for " + req.method + " " + p, "", "unknown_route"));
}

namespace {
/// The body as a JSON object, or the 400 to send.
result<json> object_body(const http_request& req) {
  if (!is_valid_utf8(req.body)) return make_error(errc::invalid_request, "the body is not valid UTF-8", "", "invalid_json");
  auto j = parse_json(req.body);
  if (!j) return make_error(errc::invalid_request, "the body is not valid JSON", "", "invalid_json");
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
