#include "api/control/routes.h"

#include "common/metrics.h"

#include <cctype>

#include "api/control/approvals_routes.h"
#include "api/control/extensions.h"
#include "api/wire/errors.h"
#include "common/json_util.h"

namespace warden::api::control {

namespace asio = boost::asio;

namespace {

/// Equal texts, compared in time independent of where they differ.
bool same_secret(std::string_view a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff = static_cast<unsigned char>(diff | (a[i] ^ b[i]));
  return diff == 0;
}

/// The request presents `key` as `Authorization: Bearer <key>` (the scheme in any case) or
/// `X-Api-Key: <key>`, as the API key may be presented (http/router.h).
bool presents_key(const http_request& req, const std::string& key) {
  std::string_view auth = req.header("authorization");
  constexpr std::string_view bearer = "bearer ";
  bool scheme = auth.size() > bearer.size();
  for (std::size_t i = 0; scheme && i < bearer.size(); ++i) {
    scheme = std::tolower(static_cast<unsigned char>(auth[i])) == bearer[i];
  }
  if (scheme) {
    auth.remove_prefix(bearer.size());
    while (!auth.empty() && auth.front() == ' ') auth.remove_prefix(1);
    while (!auth.empty() && auth.back() == ' ') auth.remove_suffix(1);
  }
  return (scheme && same_secret(auth, key)) || same_secret(req.header("x-api-key"), key);
}


std::string field(const string_fields& f, std::string_view key) {
  auto it = f.find(key);
  return it == f.end() ? std::string() : it->second;
}

asio::awaitable<void> health(const http_request&, response_writer& out, control_deps& deps) {
  const health_report h = deps.health();
  json body = {{"status", h.status}};
  if (!h.ready) body["message"] = h.message;
  const int status = h.ready ? 200 : 503;
  co_await out.send(status, "application/json", dump_safe(body));
}

asio::awaitable<void> cancel(const http_request& req, response_writer& out, control_deps& deps) {
  if (!deps.tools) co_return co_await wire::send_error(out, control_surface(), make_error(errc::upstream_unavailable, "the tool loop is not available"));
  auto f = parse_control_body(req.body, {"cancel_id", "session_id"});
  if (!f) co_return co_await wire::send_error(out, control_surface(), f.error());
  const std::string cancel_id = field(*f, "cancel_id"), session = field(*f, "session_id");
  if (cancel_id.empty() && session.empty()) {
    co_return co_await wire::send_error(out, control_surface(), make_error(errc::invalid_request, "send 'cancel_id' or 'session_id'", "cancel_id",
                                                  "missing_required_parameter"));
  }
  std::size_t n = 0;
  // A user key stops only its own loops (another key's count as none, as for an unknown id);
  // an admin stops every loop under the id.
  std::optional<std::string_view> owner;
  if (!req.caller.admin()) owner = req.caller.name;
  const auto by = cancel_reason::by_request;
  if (!cancel_id.empty()) n += deps.tools->cancels.cancel(agent::cancel_key::cancel_id, cancel_id, by, owner);
  if (!session.empty()) n += deps.tools->cancels.cancel(agent::cancel_key::session_id, session, by, owner);
  co_await out.send(200, "application/json", "{\"cancelled\":" + std::to_string(n) + "}");
}

asio::awaitable<void> debug_counts(const http_request& req, response_writer& out, control_deps& deps) {
  if (!req.caller.admin()) {
    co_return co_await wire::send_error(out, control_surface(),
                                        make_error(errc::forbidden, "the counts are for an admin key", "", "admin_only"));
  }
  if (!deps.counts) {
    co_return co_await wire::send_error(out, control_surface(), make_error(errc::upstream_unavailable, "no counts"));
  }
  const live_counts c = deps.counts();
  const json body = {{"connections_open", c.connections_open},     {"handlers_running", c.handlers_running},
                     {"pending_body_bytes", c.pending_body_bytes}, {"approvals_pending", c.approvals_pending},
                     {"tool_loops_running", c.tool_loops_running}, {"background_runs_live", c.background_runs_live}};
  co_await out.send(200, "application/json", dump_safe(body));
}

/// GET /metrics: the process's metrics in the Prometheus text format (common/metrics.h).
asio::awaitable<void> metrics_text(const http_request& req, response_writer& out, control_deps& deps) {
  if (!deps.metrics_key.empty() && !presents_key(req, deps.metrics_key)) {
    co_return co_await wire::send_error(
        out, control_surface(),
        make_error(errc::unauthorized, "GET /metrics takes the --metrics-key: send 'Authorization: Bearer <key>' or 'X-Api-Key: <key>'", "",
                   "invalid_api_key"));
  }
  std::string body = metrics::global().render();
  co_await out.send(200, "text/plain; version=0.0.4; charset=utf-8", std::move(body));
}

}  // namespace

const surface& control_surface() {
  static const surface s{"control", [](const error& e, std::string_view) { return wire::openai_error_body(e); },
                         &wire::openai_inband_error_frames};
  return s;
}

std::vector<route> routes(control_deps& deps) {
  const surface* s = &control_surface();
  auto bind = [&deps](asio::awaitable<void> (*fn)(const http_request&, response_writer&, control_deps&)) {
    return [&deps, fn](const http_request& req, response_writer& out) -> asio::awaitable<void> {
      co_await fn(req, out, deps);
    };
  };
  std::vector<route> out = {
      {"GET", "/health", false, auth_policy::open, s, bind(&health)},
      {"POST", "/api/inference/cancel", false, auth_policy::api_key, s, bind(&cancel)},
      {"GET", "/api/debug/counts", false, auth_policy::api_key, s, bind(&debug_counts)},
      {"GET", "/metrics", false, deps.metrics_key.empty() ? auth_policy::api_key : auth_policy::open, s,
       bind(&metrics_text)},
  };
  for (auto& r : approval_routes(deps)) out.push_back(std::move(r));
  return out;
}

}  // namespace warden::api::control
