// Validation of POST /v1/chat/completions bodies.
//
// parse_chat_request() checks the body the way the reference system does (unsloth-studio.md
// §1.2) before anything reaches the model: the body must be UTF-8 JSON with an object at the
// top; `messages` a non-empty list of message objects with at least one non-system message;
// each known field of the right type and range. Unknown fields are allowed and passed through
// (extra="allow"), as are the plain OpenAI fields (temperature, top_p, max_tokens, stop, seed,
// tools, tool_choice, response_format, …). The `developer` role is rewritten to `system`.
// warden's tool-loop extensions (reference §1.2) are validated and moved out of the body into
// `loop`: enable_tools, enabled_tools (known built-in names), confirm_tool_calls,
// confirm_code_execution, bypass_permissions (booleans), permission_mode (a string; unknown values
// fold to "ask", agent::fold_gate), max_tool_calls_per_message (≥ 0),
// tool_call_timeout (≥ 1 s), session_id ([A-Za-z0-9_-]{1,64}), cancel_id (1–128 chars). Client
// `tools` cannot be combined with enable_tools. `tool_names` are the server's tools (the
// registry's names: enabled_tools must name them). The handler then applies the request-level
// gate rules (agent::stream_requirement, the permission ceiling), all before any model work.
//
// Errors: errc::invalid_request with `param` naming the field (e.g. "messages",
// "messages[2].role", "temperature") and `type_code` one of invalid_json, invalid_type,
// invalid_value, missing_required_parameter.
// Thread-safety: pure function.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "api/wire/provider_fields.h"
#include "agent/gate.h"
#include "common/json_util.h"
#include "common/result.h"

namespace warden::api::openai {

struct chat_request {
  json body;                   ///< validated request without warden's extension fields
  bool stream = false;
  bool include_usage = false;  ///< stream_options.include_usage
  bool use_tool_loop = false;  ///< enable_tools: true → warden's own tool loop (agent/tool_loop.h)
  agent::loop_options loop;    ///< the tool-loop fields, validated
  /// provider_id / provider_type / external_model / run_tools_locally (api/wire/provider_fields.h),
  /// taken out of `body` with the seed's rules applied to `loop`; nullopt: the local engine.
  std::optional<wire::provider_choice> provider;
};

result<chat_request> parse_chat_request(std::string_view body, std::span<const std::string> tool_names = {});

}  // namespace warden::api::openai
