#include "agent/gate.h"

#include <algorithm>

#include "tools/tool.h"

namespace warden::agent {

gate_action decide(std::string_view tool_name, bool enabled, const gate_flags& f) {
  if (!enabled) return gate_action::not_enabled;
  if (f.bypass_permissions) return gate_action::run;
  if (f.confirm_tool_calls) return gate_action::ask;
  if (f.confirm_code_execution && tools::is_code_tool(tool_name)) return gate_action::ask;
  return gate_action::run;
}

std::vector<std::string> loop_options::selected_tools() const {
  std::vector<std::string> out;
  if (!enable_tools) return out;
  for (const auto& t : tools::builtin_tools()) {
    if (!enabled_tools || std::find(enabled_tools->begin(), enabled_tools->end(), t.name) != enabled_tools->end()) {
      out.push_back(t.name);
    }
  }
  return out;
}

std::optional<error> stream_requirement(const loop_options& o, bool stream) {
  if (stream || o.gate.bypass_permissions || o.max_tool_calls_per_message == 0) return std::nullopt;
  const auto sel = o.selected_tools();
  if (sel.empty()) return std::nullopt;
  if (o.gate.confirm_tool_calls) {
    return make_error(errc::invalid_request,
                      "confirm_tool_calls requires stream=true for local tool execution.",
                      "confirm_tool_calls", "invalid_request_error");
  }
  if (o.gate.confirm_code_execution &&
      std::any_of(sel.begin(), sel.end(), [](const std::string& n) { return tools::is_code_tool(n); })) {
    return make_error(errc::invalid_request,
                      "confirm_code_execution requires stream=true when python or terminal is enabled "
                      "(approval is asked over the event stream).",
                      "confirm_code_execution", "invalid_request_error");
  }
  return std::nullopt;
}

}  // namespace warden::agent
