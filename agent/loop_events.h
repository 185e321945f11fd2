// loop events — what the tool loop tells the client while it runs, as typed values.
//
// The loop (tool_loop.h) emits, in order of happening: the model's text and reasoning deltas
// (model/events.h), and for each tool call a `tool_start` (the card: name, id, arguments, and
// the approval id when a person must decide), `tool_status` lines ("Waiting for approval: X",
// "Running X", "" to clear), `tool_output` (live program output), `tool_end` (the result the
// model sees); `ping` while everyone is silent; `context_truncated` before a turn whose prompt was
// cut to fit the model's context (engine/context_fit.h). A surface renders them in its dialect
// (warden's control frames of reference unsloth-studio.md §1.3: api/wire/control_frames.h).
// Thread-safety: plain values; a sink belongs to one request.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "common/json_util.h"
#include "model/events.h"

namespace warden::agent {

struct tool_status {
  std::string text;  ///< "" clears the status line
};
/// Why the auto classifier (agent/risk.h) rates a call as it does, for the person deciding.
struct risk_note {
  std::string level;                 ///< "low" | "high"
  std::vector<std::string> reasons;  ///< empty when low
};
struct tool_start {
  std::string tool;
  std::string call_id;
  json arguments = json::object();  ///< the parsed arguments ({} when they were not valid JSON)
  bool healed = false;              ///< the call was written as text and recovered (engine/healing.h)
  std::string approval_id;          ///< "" unless awaiting_confirmation
  bool awaiting_confirmation = false;
  bool provisional = false;         ///< an early card while the arguments stream (reference §2.9); arguments {}
  std::optional<risk_note> risk;    ///< set once the arguments are known and classified
};
/// A raw fragment of a provisional call's arguments as they stream (reference §1.3 `tool_args`).
struct tool_args {
  std::string tool;
  std::string call_id;
  std::string text;
};
struct tool_output {
  std::string tool;
  std::string call_id;
  std::string text;  ///< valid UTF-8
};
struct tool_end {
  std::string tool;
  std::string call_id;
  std::string result;  ///< what the model sees
  bool healed = false;
  /// Who settled the call: to_string(decided_by) — "user", "rule", "auto", "policy",
  /// "bypass", "expired", "client_gone", "cancel"; "" for a card closed without a decision.
  std::string decided_by;
  bool allowed = false;  ///< the gate let the call through to its tool
};

/// An MCP server asks the person for input during a call (elicitation/create; issue 26). It is
/// answered like an approval, by approval_id (POST /api/inference/tool-confirm with decision
/// accept | decline | cancel and, for accept, the form's `content`).
struct elicitation_request {
  std::string tool;
  std::string call_id;
  std::string approval_id;
  std::string server;                       ///< the MCP server's id
  std::string mode = "form";                ///< "form" | "url"
  std::string message;
  json requested_schema = json::object();   ///< form: a flat object of primitive fields
  std::string url;                          ///< url mode: shown, never opened by warden
};

using loop_event = std::variant<model::text_delta, model::reasoning_delta, tool_status, tool_start, tool_args,
                                tool_output, tool_end, model::ping_event, elicitation_request,
                                model::context_truncated>;

// Event builders. Coroutine bodies use these instead of braced temporaries: GCC 12 destroys a
// braced aggregate temporary twice when it appears in a co_await expression (a double free).
inline loop_event text_event(std::string text) { return model::text_delta{std::move(text)}; }
inline loop_event ping_event() { return model::ping_event{}; }
inline loop_event status_event(std::string text) { return tool_status{std::move(text)}; }
inline loop_event output_event(std::string tool, std::string call_id, std::string text) {
  return tool_output{std::move(tool), std::move(call_id), std::move(text)};
}
inline loop_event args_event(std::string tool, std::string call_id, std::string text) {
  return tool_args{std::move(tool), std::move(call_id), std::move(text)};
}
inline loop_event end_event(std::string tool, std::string call_id, std::string result, bool healed,
                            std::string decided_by = {}, bool allowed = false) {
  return tool_end{std::move(tool), std::move(call_id), std::move(result), healed, std::move(decided_by), allowed};
}

class loop_sink {
 public:
  virtual ~loop_sink() = default;
  /// False when the client is gone (the loop stops).
  virtual boost::asio::awaitable<bool> emit(loop_event ev) = 0;
};

}  // namespace warden::agent
