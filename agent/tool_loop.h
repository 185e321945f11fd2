// tool_loop — the server-side agent loop (reference unsloth-studio.md §2, DESIGN.md §6).
//
// run_tool_loop() sends the conversation with the selected built-in tool specs to the upstream,
// reads the turn's structured `tool_calls` (or calls written as text, text_tool_calls.h), runs
// them in order — each with its own gate decision (gate.h), approval (approvals.h), events and
// result — appends one assistant message with all the calls and one `role: tool` message per
// call, and asks the model again. It stops after a turn without calls. Turns that ran at least
// one tool count against `max_tool_calls_per_message`; when that budget is spent the model is
// told so and gets one last pass without tools (0 = that pass only; ≥ 9999 = unlimited).
// Rules per call:
//   - `parallel_tool_calls: false` keeps a turn's first call only;
//   - arguments that are not a JSON object → an error result the model sees, nothing runs;
//   - a tool outside the selection → an error result, and the next pass has no tools;
//   - an identical call (name + canonical arguments) that already succeeded is not re-run;
//   - a deny, a timeout, a cancel → "The user declined to run this tool call." (k_declined);
//   - three turns in a row that run nothing end the loop with a tool-less pass.
// A named `tool_choice` applies to the first turn only, then reverts to "auto" (the reference
// reverts once a tool ran, §2.4; warden also after a denial, which would otherwise re-ask).
//
// Events go to `loop_sink` as they happen: `delta` (content / reasoning_content), `tool_status`,
// `tool_start`, `tool_output`, `tool_end` (the control frames of reference §1.3) and `ping`
// (keep-alive while the model, a tool or a person is silent). The caller writes the final chunk.
// Cancellation: `cancel` (POST /api/inference/cancel) denies a pending approval within
// milliseconds, kills a running tool's process group and aborts the upstream request; the loop
// then ends with finish_reason "stop". asio cancellation of the calling coroutine (client gone)
// unwinds everything the same way (tickets removed, processes killed).
// Errors: an upstream failure is returned in loop_result::failure; no exception escapes for
// bad model output.
// Thread-safety: one call per request coroutine; the runtime's registries are shared.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "agent/approvals.h"
#include "agent/cancel_registry.h"
#include "agent/chat_service.h"
#include "agent/gate.h"
#include "common/cancel_token.h"
#include "common/json_util.h"

namespace warden::agent {

/// cancel_token reason used at shutdown: the loop then ends with an error (in-band once streaming).
inline constexpr const char* k_shutdown_reason = "warden is shutting down";
inline constexpr const char* k_declined = "The user declined to run this tool call.";
inline constexpr const char* k_budget_spent =
    "You have used every tool call allowed for this message. Answer now from the results above, "
    "without calling tools.";
/// Text-form calls kept per turn (reference §2.5, _MAX_TOOL_CALLS_PER_TURN).
inline constexpr std::size_t k_max_text_calls_per_turn = 8;

struct loop_event {
  enum class kind { delta, tool_status, tool_start, tool_output, tool_end, ping };
  kind type = kind::ping;
  json data;  ///< delta: the delta object; control frames: the frame with its "type"
};

class loop_sink {
 public:
  virtual ~loop_sink() = default;
  /// False when the client is gone (the loop stops).
  virtual boost::asio::awaitable<bool> emit(loop_event ev) = 0;
};

struct loop_result {
  std::string finish_reason = "stop";
  std::string final_text;        ///< the visible text of the last turn
  json usage;                    ///< summed over turns; null when the upstream sent none
  std::optional<error> failure;  ///< the upstream failed
  bool client_gone = false;
  int turns = 0;
  int tools_run = 0;
};

struct tool_runtime {
  approval_registry& approvals;
  cancel_registry& cancels;
  std::string workspaces_root;              ///< $WARDEN_HOME/workspaces
  std::chrono::milliseconds ping_interval{15000};
  permission_mode max_permission = permission_mode::full;  ///< --max-permission
};

/// `body` is the validated chat request without warden's extension fields.
boost::asio::awaitable<loop_result> run_tool_loop(chat_service& chat, json body, const loop_options& opts,
                                                  tool_runtime& rt, loop_sink& sink);

/// name + ":" + arguments re-serialized with sorted keys (reference §2.6).
std::string canonical_call_key(const std::string& name, const json& args);

}  // namespace warden::agent
