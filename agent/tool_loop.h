// tool_loop — the server-side agent loop (reference unsloth-studio.md §2, DESIGN.md §6).
//
// run_tool_loop() is the orchestrator. Each pass it sends the conversation, with the selected
// tools' specs while tools are on, to the chat_backend (engine/chat_backend.h) and reads the
// turn (turn_reader.h). A turn without calls ends the loop. Otherwise every call of the turn is
// planned (call_plan.h: ids, arguments, the pure call_policy decision), the ones that need a
// person are all asked at once (approval_step.h), then each call in the model's order is
// settled (call_runner.h: gate → run → record). One assistant message with all the calls and
// one tool message per call are appended, and the model is asked again. loop_state.h holds the
// rules between turns (budget, fruitless turns, forced tool_choice, dedupe, once per answer).
// Request rules: `parallel_tool_calls: false` keeps a turn's first call only; tool_choice "none"
// runs nothing, structured or text; a named tool_choice applies to the first turn only.
//
// Parking (loop_options::park_approvals): when a turn has a call that needs a person, nothing of
// that turn runs and no ticket is opened; the loop ends with loop_result::parked (finish_reason
// stop). Its calls are recorded when a later run resumes the turn and settles them.
// Events go to the loop_sink as they happen (loop_events.h); the caller renders them and writes
// the final frame. Cancellation: `cancel` (POST /api/inference/cancel) denies pending approvals
// within milliseconds, kills a running tool's process group and aborts the upstream request;
// the loop then ends with finish_reason stop. asio cancellation of the calling coroutine (client
// gone) unwinds everything the same way (tickets removed, processes killed).
// Errors: an upstream failure is returned in loop_result::failure; no exception escapes for
// bad model output. Every call leaves one call_record in its recorder (the audit table),
// when the runtime has one: a settled call through record() (and in loop_result::calls), a call
// torn down before it settled (client gone) through record_now(), with decided_by::cancel.
// Thread-safety: one call per request coroutine; the runtime's registries are shared.
#pragma once

#include <boost/asio/awaitable.hpp>

#include "agent/loop_context.h"
#include "agent/loop_events.h"
#include "engine/chat_backend.h"
#include "model/conversation.h"

namespace warden::agent {

/// The cancel reason of a shutdown: a loop cancelled for it ends with an error (in-band once
/// streaming) whose message is describe(k_shutdown_reason); any other reason ends it as cancelled.
inline constexpr cancel_reason k_shutdown_reason = cancel_reason::shutdown;

/// `req` is the conversation (its tools and parallel_tool_calls are replaced by the loop's;
/// its tool_choice is the client's). `opts` are the request's validated loop fields.
/// `resume` (optional): a turn parked by an earlier run (loop_options::park_approvals) whose calls
/// are settled first — an approved call runs, a denied one gets k_declined — before the model is
/// asked again; `req` is then the conversation up to that turn.
boost::asio::awaitable<loop_result> run_tool_loop(engine::chat_backend& backend, model::chat_request req,
                                                  const loop_options& opts, tool_runtime& rt, loop_sink& sink,
                                                  const resume_turn* resume = nullptr);

}  // namespace warden::agent
