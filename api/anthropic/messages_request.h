// Validation of POST /v1/messages and /v1/messages/count_tokens bodies (Anthropic Messages API).
//
// parse_messages_request() checks the body before anything reaches the model and converts it
// (convert.h) into the typed model:
//   model (string, required), max_tokens (integer ≥ 1, required; not for count_tokens),
//   messages (required, non-empty list of {role: user|assistant, content: string | blocks}),
//   system (string or list of text blocks), stop_sequences (list of strings), temperature
//   (0–1), top_p (0–1), top_k (integer ≥ 0), metadata (object), stream (boolean),
//   tools (list: client tools {name, description?, input_schema: object} or server tools
//   {type: alias, name?}, server_tools.h), tool_choice ({type: auto|any|tool|none, name for
//   tool, disable_parallel_tool_use?}), thinking ({type: enabled, budget_tokens ≥ 1024 and below
//   max_tokens} | {type: disabled} | {type: adaptive}), output_config.format or the older
//   output_format ({type: "json_schema", schema: object}; not both).
//   Blocks: text {text}, image {source: base64 | url}, document {source: text}, tool_use {id,
//   name, input: object}, tool_result {tool_use_id, content?: string | blocks, is_error?},
//   thinking {thinking}, redacted_thinking, server_tool_use and *_tool_result (passed back).
//   Pairing as Anthropic: tool_use ids unique in their message; the next user message answers
//   every one of them once, its tool_result blocks first; a tool_result answers nothing else.
//   warden's tool-loop extension fields (api/wire/loop_fields.h: enable_tools, enabled_tools,
//   permission_mode, bypass_permissions, confirm_tool_calls, confirm_code_execution, session_id,
//   cancel_id, max_tool_calls_per_message, tool_call_timeout) are read here too.
//   `thread` (beta message-threads) is answered 400 error_code thread_unsupported_request for
//   `create` and 404 thread_not_found for `continue` (in error.details), so the SDKs' tool
//   runners go on sending the whole history. Unknown fields are ignored, as Anthropic does; `mcp_servers` (non-empty) and `container`
//   are refused (warden cannot honour them).
// Mapping: temperature, top_p, max_tokens → typed sampling; top_k → llama.cpp's top_k; thinking
//   → chat_template_kwargs.enable_thinking (+ thinking_budget_tokens); the output format →
//   response_format json_schema (a grammar on llama-server); tool_choice auto/any/
//   tool/none → auto/required/named/none (any with a single client tool → named: warden can
//   enforce that on llama-server), disable_parallel_tool_use → parallel_tool_calls false;
//   stop_sequences are kept apart (engine/stop_sequences.h matches them, so the matched one can
//   be reported).
// Errors: errc::invalid_request with `param` naming the field ("messages[1].content[0].type").
// Thread-safety: pure function.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "api/wire/provider_fields.h"
#include "agent/gate.h"
#include "common/result.h"
#include "model/conversation.h"

namespace warden::api::anthropic {

struct messages_request {
  model::chat_request conv;                 ///< messages, client tools, tool_choice, sampling
  std::string model;                        ///< as sent (echoed back)
  bool stream = false;
  std::vector<std::string> stop_sequences;
  agent::loop_options loop;                 ///< enable_tools: warden's tool loop runs server tools
  std::vector<std::string> server_tools;    ///< warden tools named by server-tool entries, in order
  bool client_tools = false;                ///< the request carries client tools
  /// An external provider (api/wire/provider_fields.h), the seed's rules applied to `loop`.
  std::optional<wire::provider_choice> provider;
};

enum class body_kind { messages, count_tokens };

/// `tool_names`: the server's tools (enabled_tools and server-tool aliases must name them).
result<messages_request> parse_messages_request(std::string_view body, std::span<const std::string> tool_names,
                                                body_kind kind = body_kind::messages);

}  // namespace warden::api::anthropic
