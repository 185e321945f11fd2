#include "agent/tool_risk.h"

namespace warden::agent {

namespace {

risk::code_language language_of(tools::code_language code) noexcept {
  switch (code) {
    case tools::code_language::none: return risk::code_language::none;
    case tools::code_language::shell: return risk::code_language::shell;
    case tools::code_language::python: return risk::code_language::python;
    case tools::code_language::html: return risk::code_language::html;
  }
  return risk::code_language::none;
}

}  // namespace

risk::tool_profile risk_profile(const tools::tool_info& tool) {
  risk::tool_profile p;
  p.name = tool.name;
  p.code = language_of(tool.traits.code);
  p.code_argument = tool.traits.code_argument;
  p.read_only = tool.traits.read_only;
  p.reads_network = tool.traits.reads_network;
  p.writes_files = tool.traits.writes_files;
  return p;
}

risk::risk_assessment classify_tool_call(const tools::tool_info& tool, const json& args) {
  return risk::classify_call(risk_profile(tool), args);
}

risk::risk_assessment classify_tool_call(const tools::tool_info& tool, const tools::tool_traits& traits, const json& args) {
  risk::tool_profile p = risk_profile(tool);
  p.code = language_of(traits.code);
  p.code_argument = traits.code_argument;
  p.read_only = traits.read_only;
  p.reads_network = traits.reads_network;
  p.writes_files = traits.writes_files;
  return risk::classify_call(p, args);
}

}  // namespace warden::agent
