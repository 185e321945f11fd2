// call_record — what the loop records about one tool call, for the audit log: the policy's
// verdict and who decided (agent/call_policy.h), the risk, the outcome, where the call stands
// (run_status: a row moves forward only, store/call_records.h) and the notes added later. The recorder
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

/// Where a call stands. pending: its row is written just before it runs (call_runner.h);
/// ran: the tool was started (the outcome is in exit_status, is_error, …); not_run: it never
/// started — refused, declined, expired, cancelled or the client gone first, or a sandbox that
/// could not start (`reason` says why). A row that says ran never becomes not_run.
enum class run_status { pending, ran, not_run };

/// "pending", "ran", "not_run": the text the audit log stores.
constexpr const char* to_string(run_status s) {
  switch (s) {
    case run_status::pending: return "pending";
    case run_status::ran: return "ran";
    case run_status::not_run: return "not_run";
  }
  return "";
}

/// The notes a record may carry (facts added after the decision).
inline constexpr const char* k_note_client_gone = "client_gone";  ///< the client left before the call settled
inline constexpr const char* k_note_cancelled = "cancelled";      ///< a cancel stopped it while it ran

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
                              ///< then is_error is set and exit_status empty); false also when the tool's
                              ///< program was never started (reason "not run: …")
  std::string approval_id;    ///< "" when nobody was asked
  std::string reason;         ///< refusal / decline reason, "" when it ran; "not run: <why>" when the gate
                              ///< let it through but its program never started (the jail could not start,
                              ///< the workspace is over its quota)
  std::int64_t started_unix_ms = 0, finished_unix_ms = 0;
  std::int64_t duration_ms = 0;
  std::optional<std::int64_t> approval_latency_ms;  ///< from asking to the answer; nullopt when nobody was asked
  std::optional<int> exit_status;  ///< process exit status when a program ran
  bool is_error = false;
  std::uint64_t output_bytes = 0;
  run_status status = run_status::pending;
  std::vector<std::string> notes;  ///< k_note_client_gone, k_note_cancelled
};

}  // namespace warden::agent
