#include "agent/gate.h"

#include <algorithm>

#include "tools/workspace.h"

namespace warden::agent {

bool valid_session_id(std::string_view id) { return tools::valid_session_id(id); }

namespace {
bool runs_code(const tools::tool* t) { return t->info().traits.runs_code; }
}  // namespace

std::vector<tools::tool*> loop_options::selected(const tools::registry& reg) const {
  if (!enable_tools) return {};
  return reg.select(enabled_tools);
}

std::optional<error> stream_requirement(const loop_options& o, bool stream, const tools::registry& reg) {
  if (stream || o.gate.bypass_permissions || o.max_tool_calls_per_message == 0) return std::nullopt;
  const auto sel = o.selected(reg);
  if (sel.empty()) return std::nullopt;
  if (o.gate.confirm_tool_calls) {
    return make_error(errc::invalid_request,
                      "confirm_tool_calls requires stream=true for local tool execution.",
                      "confirm_tool_calls", "invalid_request_error");
  }
  if (o.gate.confirm_code_execution &&
      std::any_of(sel.begin(), sel.end(), runs_code)) {
    return make_error(errc::invalid_request,
                      "confirm_code_execution requires stream=true when python or terminal is enabled "
                      "(approval is asked over the event stream).",
                      "confirm_code_execution", "invalid_request_error");
  }
  return std::nullopt;
}

const char* to_string(permission_mode m) noexcept {
  switch (m) {
    case permission_mode::ask: return "ask";
    case permission_mode::auto_: return "auto";
    case permission_mode::off: return "off";
    case permission_mode::full: return "full";
  }
  return "ask";
}

std::optional<permission_mode> parse_permission_mode(std::string_view s) noexcept {
  for (auto m : {permission_mode::ask, permission_mode::auto_, permission_mode::off, permission_mode::full}) {
    if (s == to_string(m)) return m;
  }
  return std::nullopt;
}

permission_mode effective_mode(const loop_options& o, const tools::registry& reg) {
  if (o.gate.bypass_permissions) return permission_mode::full;
  const auto sel = o.selected(reg);
  if (sel.empty() || o.max_tool_calls_per_message == 0 || o.gate.confirm_tool_calls) return permission_mode::ask;
  if (o.gate.confirm_code_execution) {
    const bool all_code = std::all_of(sel.begin(), sel.end(), runs_code);
    return all_code ? permission_mode::ask : permission_mode::auto_;
  }
  return permission_mode::off;
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
                        "bypass_permissions: true asks for mode 'full' (tools run without the sandbox); " + limit +
                            ". Remove bypass_permissions to run tools in the sandbox.",
                        "bypass_permissions", "permission_mode_not_allowed");
    case permission_mode::off:
      return make_error(errc::forbidden,
                        "enable_tools without confirm_tool_calls or confirm_code_execution asks for mode 'off' "
                        "(tool calls run without asking anyone); " + limit +
                            ". Set confirm_tool_calls: true so a person approves each call.",
                        "confirm_tool_calls", "permission_mode_not_allowed");
    case permission_mode::auto_:
      return make_error(errc::forbidden,
                        "confirm_code_execution lets the tools that are not python or terminal run without asking "
                        "(mode 'auto'); " + limit + ". Set confirm_tool_calls: true so a person approves each call, "
                        "or select only code tools (enabled_tools: [\"python\", \"terminal\"]).",
                        "confirm_tool_calls", "permission_mode_not_allowed");
    case permission_mode::ask: break;
  }
  return std::nullopt;
}

}  // namespace warden::agent
