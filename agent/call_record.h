// call_record — what the loop records about one tool call, for the audit log: the policy's
// verdict and who decided (agent/call_policy.h), the risk, the outcome. The recorder
// (agent/loop_context.h's call_recorder) hands it to wherever records go: the audit table
// through api/control/store_adapters.h, memory in tests.
// Times are Unix epoch milliseconds; durations milliseconds; sizes bytes.
// Thread-safety: a plain value.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agent/call_policy.h"

namespace warden::agent {

struct call_record {
  std::string call_id;        ///< tool_call id as the model sees it
  std::string session_id;
  std::string owner;          ///< the API key name of the request ("" = single user; common/principal.h)
  std::string tool;           ///< tool name
  std::string arguments;      ///< canonical JSON text (the audit log stores it redacted)
  std::string surface;        ///< the API surface that ran the loop: "openai.chat", "anthropic.messages", …
  std::string mode;           ///< the request's folded permission_mode: "ask" | "auto" | "off" | "full"
  std::string risk_level;     ///< "low" | "high" | "" when not classified
  std::vector<std::string> risk_reasons;  ///< why
  call_verdict decision = call_verdict::run;
  decided_by by = decided_by::policy;
  std::string rule_id;        ///< the remembered rule that allowed it ("" otherwise)
  bool allowed = false;       ///< the gate let it through to the tool (which may still refuse its arguments:
                              ///< then is_error is set and exit_status empty)
  std::string approval_id;    ///< "" when nobody was asked
  std::string reason;         ///< refusal / decline reason, "" when it ran
  std::int64_t started_unix_ms = 0, finished_unix_ms = 0;
  std::int64_t duration_ms = 0;
  std::optional<std::int64_t> approval_latency_ms;  ///< from asking to the answer; nullopt when nobody was asked
  std::optional<int> exit_status;  ///< process exit status when a program ran
  bool is_error = false;
  std::uint64_t output_bytes = 0;
};

}  // namespace warden::agent
