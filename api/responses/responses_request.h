// POST /v1/responses: the request body, validated, as typed values (OpenAI's Responses API;
// reference unsloth-studio.md §1.4 for the checks made before any upstream work).
//
// Fields read: model (string, required), input (items.h; required unless resuming with
// previous_response_id), instructions (string → a system message first; not carried by
// previous_response_id, as OpenAI does), tools (function tools {type:"function", name,
// description?, parameters?, strict?}; namespace tools {type:"namespace", name, tools: [function
// tools]} flattened to "<namespace>__<name>" for the model, their calls returned with `namespace`;
// a hosted {type:"mcp", server_label:"warden", allowed_tools?, require_approval?} turns warden's
// own tools on (allowed_tools → enabled_tools, require_approval "never" → permission_mode off,
// else ask; approvals as mcp_approval_request items), as the Agents SDK's HostedMCPTool sends it;
// other hosted and custom tools (web_search, file_search, custom, mcp for another server, …) are
// left out and named in the response's `warden_notes`, as Codex CLI sends them by default),
// tool_choice ("auto" | "none" |
// "required" | {type:"function", name}), parallel_tool_calls, max_output_tokens (≥ 1),
// temperature [0,2], top_p [0,1], text.format ({type:"text"} | {type:"json_object"} |
// {type:"json_schema", name, schema, strict?} → the upstream's response_format),
// reasoning.effort ("none"/"minimal" turn the template's thinking off; others are passed as
// reasoning_effort), store (default true), previous_response_id, metadata (object of ≤ 16
// string values), stream, background, approval_format ("mcp" | "stream"), and warden's loop
// fields (api/wire/loop_fields.h: enable_tools, enabled_tools, permission_mode, …).
// Checks (400 invalid_request_error with `param`): empty input "No input provided."; only
// system/developer messages; a function tool without a name (code invalid_value, param tools);
// a forced tool_choice without a name; function tools together with enable_tools (one loop
// runs per request: the client's or warden's); background without store.
// Unknown fields are ignored.
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/wire/provider_fields.h"
#include "agent/gate.h"
#include "api/responses/items.h"
#include "common/result.h"
#include "model/conversation.h"

namespace warden::api::responses {

/// A hosted `mcp` tool with server_label "warden" (the Agents SDK's HostedMCPTool): warden's
/// own tools, switched on as enable_tools would.
struct hosted_warden {
  std::optional<std::vector<std::string>> allowed_tools;  ///< nullopt = every tool
  std::string permission_mode = "ask";                    ///< require_approval "never" → "off"
};

struct responses_request {
  model::chat_request conv;              ///< tools, tool_choice, sampling; messages = the new input only
  model_input input;                     ///< the new input (messages, approval answers, listed items)
  std::string model;
  std::string instructions;              ///< "" = none
  std::string previous_response_id;      ///< "" = none
  bool stream = false;
  bool store = true;
  bool background = false;
  bool approval_mcp = false;             ///< approval_format "mcp": gated calls park even when streaming
  bool client_tools = false;             ///< function tools were given
  json echo = json::object();            ///< request fields the response object repeats
  json loop_fields = json::object();     ///< warden's loop fields as sent (kept to resume a parked turn)
  /// An external provider (api/wire/provider_fields.h), the seed's rules applied to `loop`.
  std::optional<wire::provider_choice> provider;
  bool loop_fields_sent = false;         ///< the request set enable_tools
  agent::loop_options loop;
  /// Functions declared inside a `namespace` tool, by the flat name the model sees
  /// (flat_namespaced_name) → {namespace, name}; their calls come back with `namespace`.
  std::map<std::string, std::pair<std::string, std::string>> namespaced;
  std::vector<std::string> notes;  ///< tools left out (hosted or custom tools), for `warden_notes`
  std::optional<hosted_warden> hosted;  ///< the request named warden as a hosted mcp tool
};

result<responses_request> parse_responses_request(std::string_view body, std::span<const std::string> tool_names);

}  // namespace warden::api::responses
