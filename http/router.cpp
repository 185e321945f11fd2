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
      co_await api::openai::handle_chat_completions(req, out, chat_);
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

}  // namespace warden::http
