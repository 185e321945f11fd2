// permission_mode — the gate's wire vocabulary that both sides speak: the server (agent/, api/)
// and its clients (client/, `warden chat`). One declaration, so a client cannot drift from the
// server's names.
//
// permission_mode: the permission ladder of the reference (unsloth-studio.md §3.1), least to most
// permissive, in this order (the --max-permission ceiling compares them by it):
//   ask  every tool call is asked
//   auto only the calls the risk classifier (risk/risk.h) calls high are asked
//   off  nothing is asked, the sandbox stays on
//   full nothing is asked, the sandbox is off (bypass_permissions)
// Wire names: "ask", "auto", "off", "full" (exactly; case matters).
//
// Session ids (the requests' `session_id`, a workspace folder name, tools/workspace.h):
// `[A-Za-z0-9_-]{1,64}`, ASCII only.
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string_view>

namespace warden {

enum class permission_mode { ask, auto_, off, full };

/// "ask", "auto", "off", "full".
const char* to_string(permission_mode m) noexcept;
/// Parses the four wire names exactly; nullopt otherwise.
std::optional<permission_mode> parse_permission_mode(std::string_view s) noexcept;

/// True for a valid session id, `[A-Za-z0-9_-]{1,64}`.
bool valid_session_id(std::string_view id) noexcept;

}  // namespace warden
