// call_runner — the last steps of the chokepoint for one planned call: the gate's answer
// (approval_step.h), the run, the result the model sees, and the call record.
//
// settle_call() turns a call_plan into its result text, in this order:
//   the policy refused it (refuse / not_enabled / sandbox_unavailable) → that reason;
//   a once-per-answer tool already succeeded → "<tool> already ran for this answer; …";
//   an identical call already succeeded → k_already_ran;
//   a person was asked and said no, or the request was cancelled → k_declined;
//   nobody answered within the approval's lifetime (--approval-timeout) → expired_text();
//   the audit row cannot be written before the run (call_recorder::open) → k_audit_failed
//     plus SQLite's reason: the call is refused rather than run unrecorded;
//   otherwise the tool runs in the session's workspace (created on first use, through the
//   blocking pool; a named owner's under k_owner_workspaces): "Running <label>" status, live
//   tool_output events, then its result. A tool whose program was never started
//   (tools::tool_result::not_run: the jail could not start, the workspace is over its quota) is
//   recorded as not run (allowed false), reason "not run: <why>"; the model sees
//   "Execution error: <why>".
// The card (tool_start) is sent if it was not yet, then tool_end. The record is completed
// (allowed, decided_by, approval latency, reason, times, exit status, output size) and written
// through the recorder.
// Thread-safety: one loop's coroutine.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <string>

#include "agent/call_plan.h"
#include "agent/loop_context.h"
#include "agent/loop_state.h"

namespace warden::agent {

inline constexpr const char* k_declined = "The user declined to run this tool call.";
/// Folder under the workspaces root holding the workspaces of named API keys' sessions:
/// <root>/.owners/<owner>/<session_id> (loop_options::owner; the single user's stay at
/// <root>/<session_id>).
inline constexpr const char* k_owner_workspaces = ".owners";
inline constexpr const char* k_audit_failed =
    "Error: the tool call was not run because warden could not write it to its audit log";

/// What the model is told when nobody answered in time.
std::string expired_text(std::chrono::milliseconds lifetime);

/// The call's tool-role message content; nullopt when the client went away.
boost::asio::awaitable<std::optional<std::string>> settle_call(call_plan& plan, loop_context& cx, loop_state& state);

}  // namespace warden::agent
