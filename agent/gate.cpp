#include "agent/gate.h"

#include <algorithm>

namespace warden::agent {

namespace {
bool runs_code(const tools::tool* t) { return t->info().traits.runs_code; }
}  // namespace

std::vector<tools::tool*> loop_options::selected(const tools::registry& reg) const {
  if (!enable_tools) return {};
  std::vector<tools::tool*> out;
  if (builtin_tools) out = reg.select(enabled_tools);
  if (!rag) {  // search_knowledge_base is offered only with a rag_scope (reference §2.2)
    std::erase_if(out, [](const tools::tool* t) { return t->info().traits.needs_knowledge_base; });
  }
  const bool names_mcp = enabled_tools && std::any_of(enabled_tools->begin(), enabled_tools->end(),
                                                      [&reg](const std::string& n) { return reg.is_dynamic(n); });
  std::vector<tools::tool*> mcp;
  if (names_mcp) {
    mcp = reg.select_dynamic(enabled_tools);
  } else if (mcp_enabled) {
    mcp = reg.select_dynamic(std::nullopt);
  }
  out.insert(out.end(), mcp.begin(), mcp.end());
  return out;
}

namespace {

permission_mode parse_or_ask(const std::string& raw) {
  return parse_permission_mode(raw).value_or(permission_mode::ask);  // unknown → ask (§3.1)
}

bool can_run_any(const loop_options& o, const std::vector<tools::tool*>& sel) {
  return !sel.empty() && o.max_tool_calls_per_message > 0;
}

error needs_stream_error(const loop_options& o, const std::string& what) {
  const bool by_mode = o.gate.permission_mode && !o.gate.confirm_tool_calls;
  return make_error(errc::invalid_request,
                    what + " requires stream=true for local tool execution (approval is asked over the event "
                           "stream). Stream the request, or set permission_mode 'off' or 'full'.",
                    by_mode ? "permission_mode" : "confirm_tool_calls", "invalid_request_error");
}

}  // namespace

gate_policy fold_gate(const gate_flags& f, bool stream) {
  gate_policy p;
  std::optional<permission_mode> mode;
  if (f.permission_mode) mode = parse_or_ask(*f.permission_mode);
  if (!mode && f.bypass_permissions) mode = permission_mode::full;
  if (!mode && f.confirm_tool_calls == true) mode = permission_mode::ask;
  p.bypass = f.bypass_permissions || mode == permission_mode::full;
  if (p.bypass) mode = permission_mode::full;
  bool confirm = stream;  // unset mode: the auto gate when streaming, ungated otherwise
  if (mode) confirm = *mode == permission_mode::ask || *mode == permission_mode::auto_;
  if (f.confirm_tool_calls) confirm = *f.confirm_tool_calls;
  if (mode == permission_mode::off) confirm = false;
  p.mode = mode.value_or(permission_mode::auto_);
  p.confirm = confirm && !p.bypass;
  p.confirm_code = f.confirm_code_execution && !p.bypass;
  return p;
}

bool always_safe_tool(const tools::tool_traits& traits) noexcept { return traits.read_only; }

bool needs_confirmation(const gate_policy& p, const tools::tool_traits& traits, bool high_risk) {
  if (p.bypass) return false;
  if (p.confirm_code && traits.runs_code) return true;
  if (!p.confirm || p.mode == permission_mode::off) return false;
  return p.mode != permission_mode::auto_ || high_risk;
}

bool may_need_confirmation(const gate_policy& p, const tools::tool_info& tool) {
  return needs_confirmation(p, tool.traits, !always_safe_tool(tool.traits));
}

std::optional<error> stream_requirement(const loop_options& o, const tools::registry& reg) {
  if (o.stream) return std::nullopt;
  const gate_policy p = o.policy();
  const auto sel = o.selected(reg);
  if (p.bypass || !can_run_any(o, sel)) return std::nullopt;
  if (p.confirm_code && std::any_of(sel.begin(), sel.end(), runs_code)) {
    return make_error(errc::invalid_request,
                      "confirm_code_execution requires stream=true when python or terminal is enabled "
                      "(approval is asked over the event stream).",
                      "confirm_code_execution", "invalid_request_error");
  }
  if (!p.confirm) return std::nullopt;
  if (o.gate.confirm_tool_calls == true) return needs_stream_error(o, "confirm_tool_calls");
  const std::string what = std::string("permission_mode '") + to_string(p.mode) + "'";
  if (p.mode != permission_mode::auto_ || !o.enabled_tools) return needs_stream_error(o, what);
  const bool all_quiet = std::all_of(sel.begin(), sel.end(), [](const tools::tool* t) {
    return always_safe_tool(t->info().traits) && !t->info().traits.reads_network;
  });
  if (all_quiet) return std::nullopt;
  return needs_stream_error(o, what);
}

permission_mode effective_mode(const loop_options& o, const tools::registry& reg) {
  const gate_policy p = o.policy();
  if (p.bypass) return permission_mode::full;
  const auto sel = o.selected(reg);
  if (!can_run_any(o, sel)) return permission_mode::ask;
  permission_mode m = permission_mode::off;
  if (p.confirm && p.mode == permission_mode::ask) m = permission_mode::ask;
  if (p.confirm && p.mode == permission_mode::auto_) m = permission_mode::auto_;
  if (p.confirm_code && m != permission_mode::ask) {
    m = std::all_of(sel.begin(), sel.end(), runs_code) ? permission_mode::ask : permission_mode::auto_;
  }
  return m;
}

std::optional<error> check_permission_ceiling(const loop_options& o, permission_mode ceiling,
                                             const tools::registry& reg) {
  const permission_mode m = effective_mode(o, reg);
  if (static_cast<int>(m) <= static_cast<int>(ceiling)) return std::nullopt;
  const std::string limit = std::string("this server allows at most permission mode '") + to_string(ceiling) +
                            "'; an operator can raise it with --max-permission " + to_string(m) +
                            " (WARDEN_MAX_PERMISSION)";
  switch (m) {
    case permission_mode::full:
      return make_error(errc::forbidden,
                        "bypass_permissions: true (permission_mode 'full') runs tools without the sandbox; " + limit +
                            ". Remove bypass_permissions / permission_mode 'full' to run tools in the sandbox.",
                        "bypass_permissions", "permission_mode_not_allowed");
    case permission_mode::off:
      return make_error(errc::forbidden,
                        "this request asks for mode 'off' (tool calls run without asking anyone: permission_mode 'off', "
                        "confirm_tool_calls: false, or a non-streaming request without a mode); " + limit +
                            ". Set permission_mode 'ask' (or 'auto') and stream so a person approves the calls.",
                        o.gate.confirm_tool_calls == false ? "confirm_tool_calls" : "permission_mode",
                        "permission_mode_not_allowed");
    case permission_mode::auto_:
      return make_error(errc::forbidden,
                        "this request asks for mode 'auto' (only calls the risk classifier calls high risk are asked "
                        "about); " + limit + ". Set permission_mode 'ask' so a person approves each call.",
                        "permission_mode", "permission_mode_not_allowed");
    case permission_mode::ask: break;
  }
  return std::nullopt;
}

}  // namespace warden::agent
