// vocabulary — the names warden's own wire speaks beyond the dialects: the control frames'
// types and keys (api/wire/control_frames.h renders them; the terminal client in client/ parses
// them) and tool-confirm's decisions (api/control/approvals_routes.h reads them; client/ sends
// them). One spelling for both ends, so the server and its own client cannot drift apart.
// Header-only constants with no dependencies, so client/ uses them without linking the server.
// Source of the names: reference unsloth-studio.md §1.3 (frames) and §1.4 (tool-confirm).
// Thread-safety: constants.
#pragma once

namespace warden::api::wire::names {

// control frame types ({"type": …})
inline constexpr const char* tool_status = "tool_status";
inline constexpr const char* tool_start = "tool_start";
inline constexpr const char* tool_args = "tool_args";
inline constexpr const char* tool_output = "tool_output";
inline constexpr const char* tool_end = "tool_end";

// control frame keys
inline constexpr const char* type = "type";
inline constexpr const char* content = "content";
inline constexpr const char* tool_name = "tool_name";
inline constexpr const char* tool_call_id = "tool_call_id";
inline constexpr const char* arguments = "arguments";
inline constexpr const char* provenance = "provenance";
inline constexpr const char* provisional = "provisional";
inline constexpr const char* approval_id = "approval_id";
inline constexpr const char* awaiting_confirmation = "awaiting_confirmation";
inline constexpr const char* risk = "risk";
inline constexpr const char* text = "text";
inline constexpr const char* result = "result";
inline constexpr const char* decided_by = "decided_by";
inline constexpr const char* allowed = "allowed";

// tool-confirm decisions ({"decision": …})
inline constexpr const char* allow = "allow";
inline constexpr const char* allow_session = "allow_session";
inline constexpr const char* allow_always = "allow_always";
inline constexpr const char* deny = "deny";

}  // namespace warden::api::wire::names
