// loop_fields — warden's tool-loop extension fields of a request body (reference
// unsloth-studio.md §1.2), the same on every API surface that runs the loop (OpenAI chat,
// Anthropic Messages, Responses, …): wire vocabulary, so it lives in api/wire/, and fills the
// agent's typed agent::loop_options.
//
// take_loop_fields() validates and removes them from `body` (the upstream never sees them):
// enable_tools, confirm_tool_calls, confirm_code_execution, bypass_permissions,
// parallel_tool_calls (booleans), permission_mode (a string; unknown values fold to "ask",
// agent::fold_gate), enabled_tools (names from `known`, the registry's), max_tool_calls_per_message
// (≥ 0), tool_call_timeout (≥ 1 s), session_id ([A-Za-z0-9_-]{1,64}), cancel_id (1–128 chars).
// auto_heal_tool_calls (boolean; absent = the server's --no-heal-tool-calls setting);
// tool_prompt_nudge, tool_error_nudge, act_reprompts (booleans; absent = the server's
// --no-tool-prompt-nudge, --no-tool-error-nudge, --no-act-reprompts; agent/loop_guidance.h).
// website_policy ({allowedDomains?, blockedDomains?}: lists of domain names, tools/website_policy.h;
// allowed_domains / blocked_domains accepted too); rag_scope ({kb_id?, kb_ids?, default_top_k? 1..8,
// mode? "hybrid"|"lexical", autoinject?, autoinject_min_score? -1..1}: tools::rag_scope; one id at least).
// mcp_enabled (boolean, issue 26): every enabled MCP server's tools join the selection (unless
// enabled_tools names MCP tools: then those); it opens the loop by itself, and without
// enable_tools: true the built-ins stay out (loop_options::builtin_tools false).
// context_overflow ("error" | "truncate_middle" | "truncate_oldest"; issue 27, model/context_fit.h):
// applies to every request of the surface, with or without the loop.
// parallel_tool_calls stays in the body (it is also an OpenAI field).
// Errors: errc::invalid_request with `param` naming the field (common/json_fields.h).
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "agent/gate.h"
#include "common/json_util.h"
#include "model/conversation.h"

namespace warden::api::wire {

std::optional<error> take_loop_fields(json& body, agent::loop_options& o, std::span<const std::string> known);

/// The tool names whose calls written as text are healed into structured calls for `req`
/// (engine/healing.h): its declared tools, or none when healing is off for it (the request's
/// auto_heal_tool_calls, else `server_heals`).
std::set<std::string> names_to_heal(const agent::loop_options& o, const model::chat_request& req, bool server_heals);

/// The tools a request selects: every known one, or those of enabled_tools, in `known` order
/// (none when enable_tools is off).
std::vector<std::string> selected_names(const agent::loop_options& o, std::span<const std::string> known);

}  // namespace warden::api::wire
