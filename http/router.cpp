#include "http/router.h"

#include "api/openai/chat_handler.h"
#include "api/openai/errors.h"
#include "common/json_util.h"

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
  constexpr std::string_view bearer = "Bearer ";
  if (auth.size() > bearer.size() && auth.substr(0, bearer.size()) == bearer &&
      equal_constant_time(auth.substr(bearer.size()), opts_.api_key)) {
    return true;
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
      co_await api::openai::handle_models(req, out, chat_.upstream().model_id(), opts_.started_unix_s);
      co_return;
    }
  }
  co_await api::openai::send_error(
      out, make_error(errc::not_found, "no route for " + req.method + " " + p, "", "unknown_route"));
}

}  // namespace warden::http
