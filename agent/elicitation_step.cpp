#include "agent/elicitation_step.h"

#include <spdlog/spdlog.h>

#include <boost/asio/this_coro.hpp>
#include <boost/system/system_error.hpp>

#include "agent/approval_step.h"

namespace warden::agent {

namespace asio = boost::asio;

namespace {

json action_answer(const char* action) {
  json j = json::object();
  j["action"] = action;
  return j;
}

std::string string_of(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

elicitation_request event_for(const call_plan& p, const std::string& approval_id, const json& params) {
  elicitation_request e;
  e.tool = p.call.name;
  e.call_id = p.call.id;
  e.approval_id = approval_id;
  e.server = string_of(params, "server");
  e.mode = params.contains("mode") ? string_of(params, "mode") : "form";
  e.message = string_of(params, "message");
  if (auto s = params.find("requestedSchema"); s != params.end() && s->is_object()) e.requested_schema = *s;
  e.url = string_of(params, "url");
  return e;
}

approval_info info_for(const call_plan& p, const loop_context& cx, const json& params) {
  approval_info info;
  info.session_id = cx.session;
  info.owner = cx.opts.owner;
  info.tool = p.call.name;
  info.call_id = p.call.id;
  info.arguments = p.start.arguments;
  info.kind = "elicitation";
  info.elicitation = params;
  return info;
}

/// Whether someone can be asked: the request's own stream, or an inbox subscriber.
bool someone_to_ask(const loop_context& cx) {
  const bool own_stream = cx.opts.stream && !cx.opts.park_approvals;
  return own_stream || cx.rt.approvals.has_listeners();
}

json settled_answer(approval_outcome o, const approval_registry::ticket& t, std::string& note) {
  switch (o) {
    case approval_outcome::allowed:
    case approval_outcome::denied: {
      json a = t.answer();
      note = "elicitation:" + a.value("action", std::string("decline"));
      return a;
    }
    case approval_outcome::timed_out: note = "elicitation:expired (declined)"; return action_answer("decline");
    case approval_outcome::cancelled: note = "elicitation:cancel"; return action_answer("cancel");
  }
  return action_answer("decline");
}

/// The call's own status line again, once the person has answered.
std::string running_status(const call_plan& p) {
  if (!p.tool) return {};
  return p.tool->status_text(p.args ? *p.args : json::object());
}

asio::awaitable<json> ask(call_plan& p, loop_context& cx, json params) {
  if (!someone_to_ask(cx)) {
    p.record.value.notes.push_back("elicitation:nobody to ask (declined)");
    spdlog::info("tool call {} ({}): an elicitation was declined: nobody to ask", p.call.id, p.call.name);
    co_return action_answer("decline");
  }
  auto ex = co_await asio::this_coro::executor;
  auto ticket = cx.rt.approvals.open(info_for(p, cx, params), ex);
  auto on_cancel = cx.token->on_cancel(ticket->canceller());
  const std::string label = "Waiting for your input: " + string_of(params, "server");
  co_await cx.out.send_status(label);
  loop_event question = event_for(p, ticket->id(), params);
  co_await cx.out.send(std::move(question));
  std::optional<approval_outcome> outcome;
  while (true) {
    bool client_left = false;
    try {
      outcome = co_await ticket->wait(cx.rt.ping_interval);
    } catch (const boost::system::system_error& e) {
      if (e.code() != asio::error::operation_aborted) throw;
      client_left = true;  // a reloaded tab?: an inbox may still answer (approval_step.h)
    }
    if (client_left) {
      co_await asio::this_coro::reset_cancellation_state();  // before any other co_await: it would throw
      if (!co_await inbox_can_answer(cx)) throw boost::system::system_error(asio::error::operation_aborted);
      continue;
    }
    if (outcome) break;
    if (!co_await cx.out.send_ping() && !co_await inbox_can_answer(cx)) {
      ticket->cancel();  // the stream went away and no inbox can answer
    }
  }
  std::string note;
  json answer = settled_answer(*outcome, *ticket, note);
  p.record.value.notes.push_back(note);
  spdlog::info("tool call {} ({}): {}", p.call.id, p.call.name, note);
  std::string back = running_status(p);  // named: no ?: temporaries inside a co_await (GCC 12)
  co_await cx.out.send_status(std::move(back));
  co_return answer;
}

}  // namespace

std::function<asio::awaitable<json>(json)> elicitor(call_plan& plan, loop_context& cx) {
  return [&plan, &cx](json params) -> asio::awaitable<json> { co_return co_await ask(plan, cx, std::move(params)); };
}

}  // namespace warden::agent
