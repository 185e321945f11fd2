// warden::store::call_log — the audit log's table: one row per tool call.
//
// Table `call_records` (schema versions 1, 2 and 4, database.cpp): an INTEGER PRIMARY KEY `id` in
// insert order (the row id that insert() returns and list() pages by), one column per
// call_record field (decision and decided_by as the text they are given, bools as 0/1,
// exit_status and approval_latency_ms NULL when absent, risk_reasons as a JSON array of strings,
// output_bytes as its 64-bit pattern), and indexes on session_id, started_unix_ms and owner. Strings are stored byte
// for byte with their length (quotes, NULs and non-UTF-8 bytes survive), except that insert()
// and update() store `arguments` and `reason` through redact_secrets() (secrets/redact.h): the
// database never holds a secret the environment scrubber would recognise.
// Rows are appended and completed (update), never deleted through this API.
// Times are Unix epoch milliseconds; durations milliseconds; sizes bytes.
// Errors: errc::internal naming the database file and sqlite3_errmsg (database.h); a row whose
// risk_reasons this code cannot read is an error too (decision and decided_by are read back as
// they are stored, unchecked); update() of a row id that does not exist is errc::not_found. Nothing throws for SQLite errors.
// Thread-safety: call_log is thread-safe (it serializes on the database); it only borrows the
// database, which must outlive it. Calls block: run them on a blocking_pool thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "store/database.h"

namespace warden::store {

struct call_record {
  std::string call_id;        ///< tool_call id as the model sees it
  std::string session_id;
  std::string owner;          ///< the API key name of the request ("" = single user; schema 4)
  std::string tool;           ///< tool name
  std::string arguments;      ///< canonical JSON text (stored redacted)
  std::string surface;        ///< the API surface that ran the loop: "openai.chat", "anthropic.messages", …
  std::string mode;           ///< the request's folded permission_mode: "ask" | "auto" | "off" | "full"
  std::string risk_level;     ///< "low" | "high" | "" when not classified
  std::vector<std::string> risk_reasons;  ///< why (stored as a JSON array text)
  /// What the policy said: "run" | "ask" | "refuse" | "not_enabled" | "sandbox_unavailable".
  /// The policy's own type is agent::call_verdict (agent/call_policy.h);
  /// api/control/store_adapters.h writes its agent::to_string() name here, so this table records
  /// what it is given and agent/ needs nothing of store/ (nor store/ of agent/).
  std::string decision = "run";
  /// Who made the final decision (agent::decided_by's to_string() name, written the same way):
  /// "policy" | "user" | "rule" (rule_id says which) | "auto" (the risk classifier) | "bypass" |
  /// "expired" (the approval question timed out; stored "timeout" before schema 2, which
  /// migration 2 in database.cpp rewrites) | "client_gone" | "cancel".
  std::string decided_by = "policy";
  std::string rule_id;        ///< the remembered rule that allowed it ("" otherwise)
  bool allowed = false;       ///< the gate let it through to the tool (which may still refuse its arguments:
                              ///< then is_error is set and exit_status empty)
  std::string approval_id;    ///< "" when nobody was asked
  std::string reason;         ///< refusal / decline reason, "" when it ran (stored redacted)
  std::int64_t started_unix_ms = 0, finished_unix_ms = 0;
  std::int64_t duration_ms = 0;
  std::optional<std::int64_t> approval_latency_ms;  ///< from asking to the answer; nullopt when nobody was asked
  std::optional<int> exit_status;  ///< process exit status when a program ran
  bool is_error = false;
  std::uint64_t output_bytes = 0;
};

/// A page request for list().
struct audit_query {
  std::string session_id;           ///< "" = every session
  std::int64_t since_unix_ms = 0;   ///< only rows with started_unix_ms >= this
  std::size_t limit = 100;          ///< at most this many rows (capped at k_max_audit_page)
  std::int64_t after_row_id = 0;    ///< only rows with a row id above this (paging)
  std::optional<std::string> owner = std::nullopt;  ///< only this owner's rows; nullopt = every owner's
};
/// The most rows one list() returns.
inline constexpr std::size_t k_max_audit_page = 1000;

class call_log {
 public:
  explicit call_log(database& db);

  /// Appends one record (arguments and reason redacted); returns its row id (> 0).
  result<std::int64_t> insert(const call_record& r);
  /// Overwrites every field of row `row_id` with `r` (redacted like insert): the row of a call
  /// inserted before it ran, completed afterwards. errc::not_found when there is no such row.
  result<void> update(std::int64_t row_id, const call_record& r);
  /// Rows matching `q`, oldest first (row id ascending), with their row ids; at most
  /// min(q.limit, k_max_audit_page) of them.
  result<std::vector<std::pair<std::int64_t, call_record>>> list(const audit_query& q) const;
  /// Up to `limit` records, newest first (started_unix_ms, then insert order, descending);
  /// only those of `session_id` when it is not "".
  result<std::vector<call_record>> recent(std::size_t limit, const std::string& session_id = "") const;
  /// Number of records.
  result<std::int64_t> count() const;

 private:
  database& db_;
};

}  // namespace warden::store
