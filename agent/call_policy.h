// call_policy — the per-call decision of the approval gate, one pure value (DESIGN.md §6;
// reference unsloth-studio.md §3.1, §3.6).
//
// decide_call() looks at the call (has a name, arguments a JSON object), whether its tool is
// enabled for the request, the tool's traits, whether the tool can run in the request's
// isolation, the auto classifier's verdict (agent/risk.h), a remembered rule that matches
// (agent/rule_book.h), and the request's folded gate (gate_policy, agent/gate.h), in this order:
//   no name / arguments not an object      → refuse (an error result the model sees)
//   unknown or not enabled tool            → not_enabled (and the loop's next pass has no tools)
//   runs_code, not bypassed, sandbox gone  → sandbox_unavailable (before asking anyone)
//   bypass (mode full)                     → run, decided by bypass
//   !needs_confirmation(policy, traits, high risk)
//                                          → run, decided by the auto classifier when the mode's
//                                            gate was on and only the risk kept it from asking,
//                                            else by policy
//   a remembered rule matches              → run, decided by that rule (never changes isolation)
//   otherwise                              → ask
// `reason` is the text the model gets for the three refusals, "" otherwise.
// The verdict types are the policy's own: the audit log (store/) records them through one adapter
// (api/control/store_adapters.h), so agent/ needs nothing of store/.
// Thread-safety: pure function.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "agent/gate.h"
#include "tools/tool.h"

namespace warden::agent {

/// What the policy said.
enum class call_verdict { run, ask, refuse, not_enabled, sandbox_unavailable };

/// Who made the final decision about a call.
enum class decided_by {
  policy,           ///< the request's permission mode alone
  user,             ///< a person answered the approval question
  rule,             ///< a remembered rule allowed it (call_record::rule_id)
  auto_classifier,  ///< mode "auto": the risk classifier found it low-risk
  bypass,           ///< bypass_permissions
  expired,          ///< the approval question timed out
  client_gone,      ///< the client went away before the call was settled
  cancel,           ///< a cancel request stopped it
};

/// Stable lower_snake names, as the audit log stores them and the wire shows them: "run", "ask",
/// "refuse", "not_enabled", "sandbox_unavailable"; "policy", "user", "rule", "auto", "bypass",
/// "expired", "client_gone", "cancel".
const char* to_string(call_verdict v) noexcept;
const char* to_string(decided_by b) noexcept;

struct call_facts {
  std::string_view name;              ///< "" when the model wrote none
  std::string_view raw_arguments;     ///< as written (for the refusal text)
  bool arguments_valid = true;        ///< they parse as a JSON object
  bool enabled = true;                ///< a known tool the request selected
  tools::tool_traits traits;
  std::optional<std::string> unavailable;  ///< tool::unavailable() for the request's isolation
  bool high_risk = true;                   ///< the auto classifier's verdict (unknown = high)
  std::optional<std::string> rule_id;      ///< a remembered rule that allows this call
};

struct call_decision {
  call_verdict verdict = call_verdict::run;
  std::string reason;
  decided_by by = decided_by::policy;  ///< for run: who let it through
  std::string rule_id;                               ///< when by == rule
  bool operator==(const call_decision&) const = default;
};

call_decision decide_call(const call_facts& call, const gate_policy& policy);

}  // namespace warden::agent
