#include "agent/call_policy.h"

namespace warden::agent {

const char* to_string(call_verdict v) noexcept {
  switch (v) {
    case call_verdict::run: return "run";
    case call_verdict::ask: return "ask";
    case call_verdict::refuse: return "refuse";
    case call_verdict::not_enabled: return "not_enabled";
    case call_verdict::sandbox_unavailable: return "sandbox_unavailable";
  }
  return "run";
}

const char* to_string(decided_by b) noexcept {
  switch (b) {
    case decided_by::policy: return "policy";
    case decided_by::user: return "user";
    case decided_by::rule: return "rule";
    case decided_by::auto_classifier: return "auto";
    case decided_by::bypass: return "bypass";
    case decided_by::expired: return "expired";
    case decided_by::client_gone: return "client_gone";
    case decided_by::cancel: return "cancel";
  }
  return "policy";
}

namespace {
call_decision verdict(call_verdict v, std::string reason, decided_by by = decided_by::policy) {
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
  if (p.bypass) return verdict(call_verdict::run, "", decided_by::bypass);
  if (!needs_confirmation(p, c.traits, c.high_risk)) {
    // Only the classifier's "low" kept the mode's gate from asking.
    const bool by_classifier = needs_confirmation(p, c.traits, true);
    return verdict(call_verdict::run, "", by_classifier ? decided_by::auto_classifier : decided_by::policy);
  }
  if (c.rule_id) {
    call_decision d = verdict(call_verdict::run, "", decided_by::rule);
    d.rule_id = *c.rule_id;
    return d;
  }
  return verdict(call_verdict::ask, "");
}

}  // namespace warden::agent
