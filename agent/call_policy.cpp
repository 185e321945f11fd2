#include "agent/call_policy.h"

namespace warden::agent {

call_decision decide_call(const call_facts& c, const gate_flags& f) {
  if (c.name.empty()) {
    return {call_verdict::refuse, "Error: the tool call could not be parsed (no tool name). Write the call again as valid JSON."};
  }
  if (!c.arguments_valid) {
    return {call_verdict::refuse, "Error: the arguments for " + std::string(c.name) + " are not a valid JSON object: " +
                                      std::string(c.raw_arguments.substr(0, 200)) +
                                      ". Call the tool again with valid JSON arguments."};
  }
  if (!c.enabled) {
    return {call_verdict::not_enabled, "Error: the tool '" + std::string(c.name) + "' is not available in this conversation."};
  }
  // Fail closed, and before asking anyone to approve a call that cannot run.
  if (c.traits.runs_code && !f.bypass_permissions && c.unavailable) {
    return {call_verdict::sandbox_unavailable, "Execution error: " + *c.unavailable};
  }
  if (f.bypass_permissions) return {call_verdict::run, ""};
  if (f.confirm_tool_calls) return {call_verdict::ask, ""};
  if (f.confirm_code_execution && c.traits.runs_code) return {call_verdict::ask, ""};
  return {call_verdict::run, ""};
}

}  // namespace warden::agent
