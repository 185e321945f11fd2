#include "api/control/routes.h"

#include "api/control/extensions.h"
#include "api/openai/errors.h"
#include "common/json_util.h"

namespace warden::api::control {

namespace asio = boost::asio;

namespace {

asio::awaitable<void> send_error(response_writer& out, const error& e) {
  co_await out.send(http_status(e.code), "application/json", openai::error_body(e));
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

/// The decision named by a tool-confirm body, or the 400.
result<agent::approval_decision> decision_of(const string_fields& f) {
  if (field(f, "approval_id").empty()) {
    return make_error(errc::invalid_request, "'approval_id' is required", "approval_id", "missing_required_parameter");
  }
  const std::string d = field(f, "decision");
  if (d != "allow" && d != "deny") {
    return make_error(errc::invalid_request, "'decision' must be \"allow\" or \"deny\"", "decision", "invalid_value");
  }
  return d == "allow" ? agent::approval_decision::allow : agent::approval_decision::deny;
}

asio::awaitable<void> tool_confirm(const http_request& req, response_writer& out, control_deps& deps) {
  if (!deps.tools) co_return co_await send_error(out, make_error(errc::upstream_unavailable, "the tool loop is not available"));
  auto f = parse_control_body(req.body, {"approval_id", "decision", "session_id"});
  if (!f) co_return co_await send_error(out, f.error());
  auto decision = decision_of(*f);
  if (!decision) co_return co_await send_error(out, decision.error());
  auto session = f->find("session_id");
  const bool ok = deps.tools->approvals.resolve(
      field(*f, "approval_id"), *decision,
      session != f->end() ? std::optional<std::string_view>(session->second) : std::nullopt);
  if (!ok) {
    co_return co_await send_error(out, make_error(errc::not_found,
                                                  "no pending tool call with this approval_id (unknown, already decided, or another session)",
                                                  "approval_id", "approval_not_found"));
  }
  co_await out.send(200, "application/json", R"({"resolved":true})");
}

asio::awaitable<void> cancel(const http_request& req, response_writer& out, control_deps& deps) {
  if (!deps.tools) co_return co_await send_error(out, make_error(errc::upstream_unavailable, "the tool loop is not available"));
  auto f = parse_control_body(req.body, {"cancel_id", "session_id"});
  if (!f) co_return co_await send_error(out, f.error());
  const std::string cancel_id = field(*f, "cancel_id"), session = field(*f, "session_id");
  if (cancel_id.empty() && session.empty()) {
    co_return co_await send_error(out, make_error(errc::invalid_request, "send 'cancel_id' or 'session_id'", "cancel_id",
                                                  "missing_required_parameter"));
  }
  std::size_t n = 0;
  if (!cancel_id.empty()) n += deps.tools->cancels.cancel("cancel_id", cancel_id, "cancelled by request");
  if (!session.empty()) n += deps.tools->cancels.cancel("session_id", session, "cancelled by request");
  co_await out.send(200, "application/json", "{\"cancelled\":" + std::to_string(n) + "}");
}

}  // namespace

const surface& control_surface() {
  static const surface s{"control", &openai::error_body, &openai::inband_error_frames};
  return s;
}

std::vector<route> routes(control_deps& deps) {
  const surface* s = &control_surface();
  auto bind = [&deps](asio::awaitable<void> (*fn)(const http_request&, response_writer&, control_deps&)) {
    return [&deps, fn](const http_request& req, response_writer& out) -> asio::awaitable<void> {
      co_await fn(req, out, deps);
    };
  };
  return {
      {"GET", "/health", false, auth_policy::open, s, bind(&health)},
      {"POST", "/api/inference/tool-confirm", false, auth_policy::api_key, s, bind(&tool_confirm)},
      {"POST", "/api/inference/cancel", false, auth_policy::api_key, s, bind(&cancel)},
  };
}

}  // namespace warden::api::control
