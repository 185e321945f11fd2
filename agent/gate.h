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
#include "common/permission_mode.h"
#include "model/context_fit.h"
#include "tools/tool.h"

namespace warden::agent {

/// The permission ladder (common/permission_mode.h, shared with the clients): ask < auto < off < full.
using warden::permission_mode;
using warden::parse_permission_mode;
using warden::to_string;
/// True for a valid session id, `[A-Za-z0-9_-]{1,64}` (common/permission_mode.h).
using warden::valid_session_id;

/// The gate fields as the client sent them (reference §1.2).
struct gate_flags {
  std::optional<bool> confirm_tool_calls;      ///< nullopt = not sent (an explicit value wins, §3.1)
  bool confirm_code_execution = false;         ///< seed meaning: python/terminal (traits.runs_code) always ask
  bool bypass_permissions = false;             ///< = permission_mode "full"
  std::optional<std::string> permission_mode;  ///< as sent; nullopt = not sent
};

/// A request's gate after the reference's folding (§1.2 "Permission folding", §3.1):
///   - permission_mode "full" ⇔ bypass_permissions; an unknown mode is "ask";
///   - bypass_permissions without a mode is "full"; confirm_tool_calls: true without a mode is "ask";
///   - "off" forces confirm false; an unset mode becomes "auto";
///   - the route-level effective confirm: an explicit confirm_tool_calls wins; else ask/auto → true,
///     off/full → false; an unset mode → `stream` (a streaming request gets the auto gate, a
///     non-streaming one runs ungated);
///   - bypass beats confirm: confirm = effective && !bypass; confirm_code likewise.
struct gate_policy {
  permission_mode mode = permission_mode::auto_;
  bool confirm = true;         ///< the mode's own gate applies (route-level effective confirm, not bypassed)
  bool confirm_code = false;   ///< confirm_code_execution, not bypassed
  bool bypass = false;         ///< mode full: no gate and no sandbox for code tools
  bool operator==(const gate_policy&) const = default;
};

gate_policy fold_gate(const gate_flags& f, bool stream);

/// The per-call rule (reference §3.1 "Per-call rule", DESIGN §6, composed): a call needs a person
/// when !bypass and (confirm_code && runs_code, or confirm && mode != off and — in auto — the call
/// is high risk).
bool needs_confirmation(const gate_policy& p, const tools::tool_traits& traits, bool high_risk);

/// Before a call's arguments are known (provisional cards, reference §2.9): whether the call could
/// still be gated. The same rule with "high risk" unknown: in auto only the always-safe tools
/// (traits.read_only: web_search, search_knowledge_base, search_conversation; §3.6) are never gated.
bool may_need_confirmation(const gate_policy& p, const tools::tool_info& tool);

/// The tools the auto classifier never asks about (reference §3.6), by their traits: read_only
/// (web_search without a url, search_knowledge_base, search_conversation).
bool always_safe_tool(const tools::tool_traits& traits) noexcept;

/// The tool-loop fields of a chat request (OpenAI-compatible extensions, reference §1.2).
struct loop_options {
  bool enable_tools = false;
  std::optional<std::vector<std::string>> enabled_tools;  ///< nullopt = every built-in
  /// mcp_enabled (issue 26): the MCP servers' tools (registry::select_dynamic) join: every one, or
  /// only those enabled_tools names when it names any. enabled_tools may name them without it too.
  bool mcp_enabled = false;
  /// False when only mcp_enabled opened the loop (enable_tools was not true): no built-ins.
  bool builtin_tools = true;
  gate_flags gate;
  bool stream = true;                   ///< the request streams (an unset mode gates only then)
  std::string surface = "openai.chat";  ///< the API surface, for the audit log
  int max_tool_calls_per_message = 25;  ///< model turns that run tools; 0 = none; ≥ 9999 = unlimited
  int tool_call_timeout_s = 300;        ///< per call; ≥ 9999 = no limit
  std::string session_id;               ///< "" = the shared "_default" workspace
  /// Who the request is from: its API key's name (common/principal.h), "" for the single user.
  /// Set by the surface from http_request::caller, never from the body. A session is the pair
  /// (owner, session_id): the owner goes on its approval tickets, cancel registrations, audit rows
  /// and rules, only that owner's rules cover its calls, and a named owner's workspaces live
  /// apart (<workspaces>/.owners/<owner>/<session_id>, tool_loop.h).
  std::string owner;
  /// Whether the request may run tools outside the sandbox (permission_mode 'full'): the single
  /// user and admin keys may (up to --max-permission); a named `user` key may not, since the
  /// sandbox is what keeps one key's calls away from another's workspaces, the keys file and
  /// warden.db (issue 22). Set by the surface from http_request::caller, never from the body.
  bool may_bypass = true;
  std::string cancel_id;                ///< "" = none
  bool parallel_tool_calls = true;      ///< false = only a turn's first call runs
  /// A turn with a call that needs a person is not asked over the stream: the loop stops before
  /// anything of that turn runs and returns it in loop_result::parked (the Responses API's
  /// mcp_approval_request; the caller resumes it with run_tool_loop's `resume`).
  bool park_approvals = false;
  /// Tool calls the model writes as text become structured calls (engine/healing.h): the
  /// request's auto_heal_tool_calls; nullopt = the server's setting (--no-heal-tool-calls).
  std::optional<bool> heal_tool_calls;
  /// The loop's guidance to the model (agent/loop_guidance.h): the request's tool_prompt_nudge,
  /// tool_error_nudge and act_reprompts; nullopt = the server's setting (--no-tool-prompt-nudge, …).
  std::optional<bool> tool_prompt_nudge;
  std::optional<bool> tool_error_nudge;
  std::optional<bool> act_reprompts;
  /// The request's website_policy: the sites web_search may search and read (tools/website_policy.h);
  /// nullopt = every site.
  std::optional<tools::website_policy> website_policy;
  /// The request's rag_scope: the knowledge bases its searches cover; nullopt = none (then
  /// search_knowledge_base is not offered and nothing is auto-injected).
  std::optional<tools::rag_scope> rag;
  /// The request's context_overflow (model/context_fit.h): what is done with a conversation that
  /// does not fit the model's context; every surface's turns go through engine/context_fit.h.
  model::overflow_policy context_overflow = model::overflow_policy::error;

  /// Tools offered to the model: the built-ins in registry order, then the MCP tools (none when
  /// enable_tools is off).
  std::vector<tools::tool*> selected(const tools::registry& reg) const;
  bool unlimited_budget() const { return max_tool_calls_per_message >= 9999; }
  /// The folded gate (fold_gate(gate, stream)).
  gate_policy policy() const { return fold_gate(gate, stream); }
};

/// Budget value meaning "no limit" (reference §2.4).
inline constexpr int k_unlimited_tool_calls = 9999;
/// tool_call_timeout at or above this means no limit (reference §1.2).
inline constexpr int k_no_tool_timeout_s = 9999;

/// The 400 for a non-streaming request that could prompt (reference §3.2 `_confirm_gate_needs_stream`,
/// DESIGN §6): nothing can run (tools off, none selected, budget 0) or bypass → allowed;
/// confirm_code_execution with a code tool selected → 400 (param confirm_code_execution);
/// effective confirm off → allowed; a mode other than auto, an explicit confirm_tool_calls: true,
/// or enabled_tools omitted → 400; otherwise 400 unless every selected tool is always-safe and does
/// not read the network (web_search can fetch a URL). `param` names confirm_tool_calls or permission_mode, whichever
/// the request set.
std::optional<error> stream_requirement(const loop_options& opts, const tools::registry& reg);

/// What a request amounts to on that ladder, for the --max-permission ceiling: bypass → full; no
/// tool can run (tools off, none selected, budget 0) → ask; mode ask with confirm → ask; mode auto
/// with confirm → auto; no confirm → off; confirm_code_execution raises auto/off to ask when
/// every selected tool runs code, and off to auto otherwise.
permission_mode effective_mode(const loop_options& opts, const tools::registry& reg);

/// The 403 (`permission_error`) for a request whose effective mode is above `ceiling`
/// (--max-permission), naming the request field to change and the server flag that would allow
/// it; nullopt when allowed.
std::optional<error> check_permission_ceiling(const loop_options& opts, permission_mode ceiling,
                                             const tools::registry& reg);

}  // namespace warden::agent
