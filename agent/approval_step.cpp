#include "agent/approval_step.h"

#include <spdlog/spdlog.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

namespace warden::agent {

namespace asio = boost::asio;

asio::awaitable<bool> open_approvals(std::vector<call_plan>& plans, loop_context& cx) {
  for (auto& p : plans) {
    if (p.decision.verdict != call_verdict::ask || p.preset) continue;
    approval_info info;
    info.session_id = cx.session;
    info.owner = cx.opts.owner;
    info.tool = p.call.name;
    info.call_id = p.call.id;
    info.arguments = p.start.arguments;
    info.risk = p.start.risk;
    auto ex = co_await asio::this_coro::executor;
    p.ticket = cx.rt.approvals.open(std::move(info), ex);
    p.deny_on_cancel = cx.token->on_cancel(p.ticket->canceller());
    p.asked_unix_ms = unix_ms_now();
    p.start.approval_id = p.ticket->id();
    p.start.awaiting_confirmation = true;
    p.record.value.approval_id = p.ticket->id();
    if (!co_await cx.out.send(status_event("Waiting for approval: " + p.tool->info().label))) co_return false;
    if (!co_await cx.out.send(p.start)) co_return false;
    p.start_sent = true;
  }
  co_return true;
}

namespace {
const char* outcome_name(approval_outcome o) {
  switch (o) {
    case approval_outcome::allowed: return "allowed";
    case approval_outcome::denied: return "denied";
    case approval_outcome::timed_out: return "timed out (deny)";
    case approval_outcome::cancelled: return "cancelled (deny)";
  }
  return "?";
}

decided_by decider(approval_outcome o) {
  switch (o) {
    case approval_outcome::allowed:
    case approval_outcome::denied: return decided_by::user;
    case approval_outcome::timed_out: return decided_by::expired;
    case approval_outcome::cancelled: return decided_by::cancel;
  }
  return decided_by::cancel;
}
}  // namespace

asio::awaitable<bool> inbox_can_answer(loop_context& cx) {
  if (cx.rt.approvals.has_listeners()) co_return true;
  if (!cx.rt.approvals.had_listeners(k_inbox_recent)) co_return false;  // no inbox was open: give up now
  asio::steady_timer timer(co_await asio::this_coro::executor);
  const auto until = std::chrono::steady_clock::now() + k_inbox_grace;
  while (std::chrono::steady_clock::now() < until) {
    timer.expires_after(std::chrono::milliseconds(100));
    co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    if (cx.rt.approvals.has_listeners()) co_return true;
  }
  co_return false;
}

asio::awaitable<std::optional<approval_outcome>> await_approval(call_plan& p, loop_context& cx) {
  if (p.preset) {  // answered before the turn resumed (an mcp_approval_response)
    spdlog::info("tool call {} ({}): approval {} (answered while parked)", p.call.id, p.call.name, outcome_name(*p.preset));
    p.record.value.by = decider(*p.preset);
    p.record.value.approval_latency_ms = 0;
    co_return p.preset;
  }
  std::optional<approval_outcome> outcome;
  while (true) {
    bool client_left = false;
    try {
      outcome = co_await p.ticket->wait(cx.rt.ping_interval);
    } catch (const boost::system::system_error& e) {
      if (e.code() != asio::error::operation_aborted) throw;
      client_left = true;  // the tab went away (a reload?): an inbox may still answer
    }
    if (client_left) {
      co_await asio::this_coro::reset_cancellation_state();  // before any other co_await: it would throw
      if (!co_await inbox_can_answer(cx)) throw boost::system::system_error(asio::error::operation_aborted);
      spdlog::info("tool call {} ({}): the client left; the approval stays open for the inbox", p.call.id, p.call.name);
      continue;
    }
    if (outcome) break;
    if (!co_await cx.out.send_ping() && !co_await inbox_can_answer(cx)) co_return std::nullopt;
  }
  spdlog::info("tool call {} ({}): approval {}", p.call.id, p.call.name, outcome_name(*outcome));
  p.record.value.by = decider(*outcome);
  p.record.value.approval_latency_ms = unix_ms_now() - p.asked_unix_ms;
  co_return outcome;
}

}  // namespace warden::agent
