#include "agent/call_policy.h"

namespace warden::agent {

namespace {
call_decision verdict(call_verdict v, std::string reason, store::decided_by by = store::decided_by::policy) {
  call_decision d;
  d.verdict = v;
  d.reason = std::move(reason);
  d.by = by;
  return d;
}
}  // namespace

call_decision decide_call(const call_facts& c, const gate_policy& p) {
  if (c.name.empty()) {
    return verdict(call_verdict::refuse, "Error: the tool call could not be parsed (no tool name). Write the call again as valid JSON.");
  }
  if (!c.arguments_valid) {
    return verdict(call_verdict::refuse, "Error: the arguments for " + std::string(c.name) + " are not a valid JSON object: " +
                                             std::string(c.raw_arguments.substr(0, 200)) +
                                             ". Call the tool again with valid JSON arguments.");
  }
  if (!c.enabled) {
    return verdict(call_verdict::not_enabled, "Error: the tool '" + std::string(c.name) + "' is not available in this conversation.");
  }
  // Fail closed, and before asking anyone to approve a call that cannot run.
  if (c.traits.runs_code && !p.bypass && c.unavailable) {
    return verdict(call_verdict::sandbox_unavailable, "Execution error: " + *c.unavailable);
  }
  if (p.bypass) return verdict(call_verdict::run, "", store::decided_by::bypass);
  if (!needs_confirmation(p, c.traits, c.high_risk)) {
    // Only the classifier's "low" kept the mode's gate from asking.
    const bool by_classifier = needs_confirmation(p, c.traits, true);
    return verdict(call_verdict::run, "", by_classifier ? store::decided_by::auto_classifier : store::decided_by::policy);
  }
  if (c.rule_id) {
    call_decision d = verdict(call_verdict::run, "", store::decided_by::rule);
    d.rule_id = *c.rule_id;
    return d;
  }
  return verdict(call_verdict::ask, "");
}

}  // namespace warden::agent
