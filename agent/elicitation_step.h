// elicitation_step — an MCP server's request for input during a call (elicitation/create; issue 26)
// reaches the person the way an approval does (DESIGN.md §6 for the channel, agent/approvals.h for
// the inbox): a ticket of kind "elicitation" (so the inbox lists it and its SSE stream announces
// it), an `elicitation_request` event on the request's own stream (the control frame, the
// Responses item), then a wait with keep-alives. The person answers accept (with the form's
// content, checked against the server's schema by the route), decline or cancel.
// Nobody to ask — the request cannot carry the question (it parks approvals or does not stream)
// and no inbox listener is subscribed — or the approval timeout → decline; the request's cancel →
// cancel. Each outcome becomes a note on the call's audit record: "elicitation:accept",
// "elicitation:decline", "elicitation:cancel", "elicitation:expired (declined)",
// "elicitation:nobody to ask (declined)".
// Thread-safety: one loop's coroutine (the plan and context outlive the call).
#pragma once

#include <boost/asio/awaitable.hpp>
#include <functional>

#include "agent/call_plan.h"
#include "agent/loop_context.h"

namespace warden::agent {

/// tools::tool_context::elicit for `plan`'s call.
std::function<boost::asio::awaitable<json>(json)> elicitor(call_plan& plan, loop_context& cx);

}  // namespace warden::agent
