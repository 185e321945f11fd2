// Server tools on Anthropic /v1/messages (reference unsloth-studio.md §1.4, §3.3; DESIGN §6).
//
// Tool entries: an entry with `input_schema` (or "type":"custom") is a client tool (the client
// runs it; warden only streams the call). An entry whose `type` is one of the aliases below is a
// server tool: warden's tool loop runs it and the stream shows it as server_tool_use and a result
// block. Aliases → warden's tools:
//   web_search, web_search_20250305, web_fetch, web_fetch_20250910, web_fetch_20260209 → web_search
//   python → python;  terminal → terminal
// Any other `type` is refused (400). Client and server tools in one request are refused (400).
//
// messages_gate() — the route has no confirmation channel (the client cannot answer an approval
// on this wire), so a request whose server tools could ask a person is refused before any model
// work. In order:
//   1. no server tool selected → allowed;
//   2. bypass_permissions, or permission_mode "full" → allowed (bypass wins);
//   3. confirm_tool_calls: true → 400 "confirm_tool_calls is not supported for Anthropic
//      Messages server tools" (param confirm_tool_calls);
//   4. confirm_code_execution with a code tool (python, terminal: traits.runs_code) selected →
//      400 (param confirm_code_execution); with no code tool selected it is ignored;
//   5. confirm_tool_calls: false (explicit) → allowed (the client opted out of the gate);
//   6. permission_mode "off" → allowed; "ask" (or any unknown value, which folds to ask) → 400;
//      "auto" or unset → 400 when any selected tool is not always safe (traits.read_only:
//      web_search, search_knowledge_base, search_conversation; agent::always_safe_tool); the
//      message names 'off' and 'full' (param permission_mode).
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/gate.h"
#include "common/error.h"

namespace warden::api::anthropic {

/// warden's tool for an Anthropic server-tool `type`; nullopt when the type is not an alias.
std::optional<std::string> server_tool_for(std::string_view type) noexcept;

/// A selected server tool as the gate sees it.
struct selected_tool {
  std::string name;
  bool runs_code = false;    ///< traits.runs_code
  bool always_safe = false;  ///< agent::always_safe_tool(traits)
};

std::optional<error> messages_gate(const agent::gate_flags& flags, const std::vector<selected_tool>& selected);

}  // namespace warden::api::anthropic
