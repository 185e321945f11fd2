// control frames — warden's JSON for a tool event of the loop (agent/loop_events.h), the
// same on every surface that streams them (reference unsloth-studio.md §1.3): the OpenAI chat
// stream sends it as a `data:` frame, the Responses stream inside its tool events.
//
// control_json(ev) for tool_status, tool_start, tool_args, tool_output, tool_end:
//   tool_status → {"type":"tool_status","content"}
//   tool_start  → {"type":"tool_start","tool_name","tool_call_id","arguments","provenance":
//                  {"source":"local","healed"[,"provisional":true]},"approval_id",
//                  "awaiting_confirmation"[,"risk":{"level","reasons"}]}
//   tool_args   → {"type":"tool_args","tool_name","tool_call_id","text"}
//   tool_output → {"type":"tool_output","tool_name","tool_call_id","text"}
//   tool_end    → {"type":"tool_end","tool_name","tool_call_id","result","provenance"
//                  [,"decided_by","allowed"]}
//   elicitation_request → {"type":"elicitation_request","tool_name","tool_call_id","approval_id",
//                  "server","mode","message", "requested_schema" (form) | "url" (url mode)}
//                  (issue 26: answered through POST /api/inference/tool-confirm)
//   context_truncated → {"type":"context_truncated", …truncation_json}
// truncation_json(t) (issue 27; the reference's `context_truncated` of unsloth-studio.md §1.3):
//   {"policy", "dropped_messages" (count), "dropped": [{"index","role","preview"[,"tool_call_ids"]}],
//    "prompt_tokens_before", "prompt_tokens_after", "n_ctx"} — tokens of the model's tokenizer;
//   index: the message's position in the conversation of that turn (for OpenAI chat, the request's
//   messages; a surface whose system prompt is a separate field counts it as message 0).
// Not for text, reasoning or ping events (they are the dialect's own): passing one is a
// precondition violation (std::bad_variant_access).
// Thread-safety: a pure function.
#pragma once

#include "agent/loop_events.h"
#include "common/json_util.h"

namespace warden::api::wire {

json control_json(const agent::loop_event& ev);
json truncation_json(const model::context_truncated& t);

}  // namespace warden::api::wire
