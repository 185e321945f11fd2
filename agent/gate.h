// gate — the request-level rules of the approval gate (DESIGN.md §6; reference
// unsloth-studio.md §3). The per-call rule is agent/call_policy.h.
//
// `loop_options` are a request's tool-loop fields; `selected()` the tools it offers the model.
// `stream_requirement()` is the request-level rule: approval can only be asked over SSE, so a
// non-streaming request that could reach a gated call is refused (400, `param` naming the flag)
// before any model work. "Could reach": tools on, at least one tool selected, a budget above
// 0, no bypass; for confirm_code_execution, a tool that runs code (traits.runs_code) among the
// selected ones.
// Thread-safety: pure functions on values.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "tools/tool.h"

namespace warden::agent {

struct gate_flags {
  bool confirm_tool_calls = false;
  bool confirm_code_execution = false;
  bool bypass_permissions = false;
};

/// The tool-loop fields of a chat request (OpenAI-compatible extensions, reference §1.2).
struct loop_options {
  bool enable_tools = false;
  std::optional<std::vector<std::string>> enabled_tools;  ///< nullopt = every built-in
  gate_flags gate;
  int max_tool_calls_per_message = 25;  ///< model turns that run tools; 0 = none; ≥ 9999 = unlimited
  int tool_call_timeout_s = 300;        ///< per call; ≥ 9999 = no limit
  std::string session_id;               ///< "" = the shared "_default" workspace
  std::string cancel_id;                ///< "" = none
  bool parallel_tool_calls = true;      ///< false = only a turn's first call runs

  /// Tools offered to the model, in registry order (none when enable_tools is off).
  std::vector<tools::tool*> selected(const tools::registry& reg) const;
  bool unlimited_budget() const { return max_tool_calls_per_message >= 9999; }
};

/// True for a valid session id, `[A-Za-z0-9_-]{1,64}` (tools/workspace.h).
bool valid_session_id(std::string_view id);

/// Budget value meaning "no limit" (reference §2.4).
inline constexpr int k_unlimited_tool_calls = 9999;
/// tool_call_timeout at or above this means no limit (reference §1.2).
inline constexpr int k_no_tool_timeout_s = 9999;

/// The 400 for a non-streaming request that could reach a gated call; nullopt when allowed.
std::optional<error> stream_requirement(const loop_options& opts, bool stream, const tools::registry& reg);

/// The permission ladder of the reference (unsloth-studio.md §3.1), least to most permissive:
/// ask (every call asked) < auto (only risky calls asked) < off (nothing asked, sandbox on) <
/// full (nothing asked, sandbox off: bypass_permissions).
enum class permission_mode { ask, auto_, off, full };

/// "ask", "auto", "off", "full".
const char* to_string(permission_mode m) noexcept;
/// Parses the four names; nullopt otherwise.
std::optional<permission_mode> parse_permission_mode(std::string_view s) noexcept;

/// What a request's flags amount to on that ladder (issue 8): bypass_permissions → full; no
/// tool can run (tools off, none selected, budget 0) → ask; confirm_tool_calls → ask;
/// confirm_code_execution → ask when every selected tool runs code, else auto (the others
/// run unasked); neither flag → off.
permission_mode effective_mode(const loop_options& opts, const tools::registry& reg);

/// The 403 (`permission_error`) for a request whose effective mode is above `ceiling`
/// (--max-permission), naming the request field to change and the server flag that would allow
/// it; nullopt when allowed.
std::optional<error> check_permission_ceiling(const loop_options& opts, permission_mode ceiling,
                                             const tools::registry& reg);

}  // namespace warden::agent
