// approval_step — asking a person about the calls the policy said `ask` for (DESIGN.md §6).
//
// open_approvals(): every `ask` call of a turn gets its ticket (approval id) and its card now,
// before any of them runs, so all of a turn's questions are pending together and can be
// answered in any order (they still run in the model's order). A cancel of the request denies
// the pending tickets within milliseconds.
// A call with a preset decision (a parked turn being resumed, tool_loop.h) gets no ticket and no
// wait: await_approval() returns the preset at once, decided by the user.
// await_approval(): waits for the decision, sending a keep-alive every ping interval; a timeout
// or a cancel is a deny. The record learns who decided (user, timeout, cancel). When the client
// goes away (a reloaded tab) while an inbox listener is subscribed (the reloaded page, another
// viewer: GET /api/inference/approvals/stream), the question stays open until it is answered or
// times out (issue 26); with no listener the call is withdrawn (client_gone) as before. A reload
// closes the tab's own inbox stream together with its chat stream, in no set order, and the new
// page subscribes a moment later: so when the client leaves with no listener subscribed but one
// left within k_inbox_recent, inbox_can_answer() waits up to k_inbox_grace for one before giving
// the call up (with no inbox open lately, the call is withdrawn at once, as before).
// Thread-safety: one loop's coroutine.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <optional>
#include <vector>

#include "agent/call_plan.h"
#include "agent/loop_context.h"

namespace warden::agent {

/// How long a call whose client left waits for an inbox to (re)subscribe (a reloaded page)...
inline constexpr std::chrono::milliseconds k_inbox_grace{10000};
/// ...when the last inbox left less than this long ago.
inline constexpr std::chrono::milliseconds k_inbox_recent{5000};

/// After the client left: whether an inbox listener is subscribed, or (one left lately)
/// subscribes within k_inbox_grace (the reloaded page's). Call it once the coroutine's cancellation state was reset
/// (co_await this_coro::reset_cancellation_state()): a cancelled coroutine's next co_await throws.
boost::asio::awaitable<bool> inbox_can_answer(loop_context& cx);

/// False when the client went away.
boost::asio::awaitable<bool> open_approvals(std::vector<call_plan>& plans, loop_context& cx);

/// The outcome; nullopt when the client went away while waiting.
boost::asio::awaitable<std::optional<approval_outcome>> await_approval(call_plan& plan, loop_context& cx);

}  // namespace warden::agent
