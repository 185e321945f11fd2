// parking — a turn parked for approval (agent::loop_options::park_approvals), as a Responses
// response stores it (store/responses_store.h pending_json), and how a resuming request is
// matched to it.
//
// Stored shape (pending_json, version 2):
//   {"version": 2,
//    "message": the turn as an assistant message in model/serialize's shape (a text part with
//               the turn's visible text, then one tool_call part {id, name, arguments} per call),
//    "calls": [{"id", "needs_approval", "card"}] (per call, in the message's order),
//    "requests": {approval request id: call id}, "expires_at_ms": Unix ms (0 = never),
//    "loop": the parked request's tool options, typed: {"enable_tools", "enabled_tools"
//            (absent = every tool), "confirm_tool_calls"? (absent = not sent), "permission_mode"?,
//            "confirm_code_execution", "bypass_permissions", "max_tool_calls_per_message",
//            "tool_call_timeout_s", "session_id"}}
//   A resume reads those options back as they were: the parked request's body is not parsed
//   again and its loop fields are not validated again. cancel_id, parallel_tool_calls and the
//   approval format are not carried (a resume runs with their defaults), as before version 2.
// Version 1 (rows written by earlier warden versions, still read): pending_json {"text", "calls":
//   [{"id","name","arguments","needs_approval","card"}], "requests", "expires_at_ms"} and the loop
//   fields as the client sent them in request_json; only for such a row are those fields read
//   with wire::take_loop_fields once more (a fallback; new rows never need it).
// Errors: errc::internal when a stored turn cannot be read back; for a version 1 row, the loop
// fields' own validation errors.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "agent/loop_context.h"
#include "api/responses/items.h"
#include "common/result.h"

namespace warden::api::responses {

struct parked_state {
  agent::parked_turn turn;
  std::map<std::string, std::string> requests;  ///< approval request id → call id
  std::int64_t expires_at_ms = 0;               ///< Unix ms after which every question has expired; 0 = never
  agent::loop_options loop;                     ///< the parked request's tool options (surface openai.responses)
};

/// pending_json for `p` (version 2).
std::string encode_parked(const parked_state& p);

/// The parked turn of a stored row: nullopt when `pending_json` holds none ("" or not a JSON
/// object). `request_json` and `tool_names` are read only for a version 1 row.
result<std::optional<parked_state>> decode_parked(std::string_view pending_json, std::string_view request_json,
                                                  std::span<const std::string> tool_names);

/// Matches the mcp_approval_response items of `input` (at least one) to the parked turn of
/// response `previous_id`. Every call that needs a person and got no answer is declined; once
/// `now_ms` is past parked->expires_at_ms every such call has expired, whatever the answers say.
/// 400 (param input): nothing parked; other input items next to the answers; an answer to an
/// unknown request; a request answered twice.
result<agent::resume_turn> match_answers(const model_input& input, const std::string& previous_id,
                                         const std::optional<parked_state>& parked, std::int64_t now_ms);

/// The loop options a resume runs under: the parked request's, never the resuming request's own
/// (the answers were given for calls gated by those, so a resume cannot widen the gate). 400
/// (param tools) when the resuming request brings function tools.
result<agent::loop_options> resumed_options(const parked_state& parked, bool client_tools);

}  // namespace warden::api::responses
