// warden::store::call_log — the audit log's table: one row per tool call.
//
// Table `call_records` (schema version 1, database.cpp): an INTEGER PRIMARY KEY `id` in insert
// order, one column per call_record field (enums as their to_string() names, bools as 0/1,
// exit_status NULL when no program ran, output_bytes as its 64-bit pattern), and indexes on
// session_id and started_unix_ms. Strings are stored byte for byte with their length (quotes,
// NULs and non-UTF-8 bytes survive).
// Times are Unix epoch milliseconds; durations milliseconds; sizes bytes.
// Errors: errc::internal naming the database file and sqlite3_errmsg (database.h); a row whose
// enum text this code does not know is an error too. Nothing throws for SQLite errors.
// Thread-safety: call_log is thread-safe (it serializes on the database); it only borrows the
// database, which must outlive it. Calls block: run them on a blocking_pool thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "store/database.h"

namespace warden::store {

/// What the policy said.
enum class call_decision { run, ask, refuse, not_enabled, sandbox_unavailable };
/// Who made the final decision.
enum class decided_by { policy, user, timeout, cancel, bypass };

struct call_record {
  std::string call_id;        ///< tool_call id as the model sees it
  std::string session_id;
  std::string tool;           ///< tool name
  std::string arguments;      ///< canonical JSON text
  call_decision decision = call_decision::run;
  decided_by by = decided_by::policy;
  bool allowed = false;       ///< the gate let it through to the tool (which may still refuse its arguments:
                              ///< then is_error is set and exit_status empty)
  std::string approval_id;    ///< "" when nobody was asked
  std::string reason;         ///< refusal / decline reason, "" when it ran
  std::int64_t started_unix_ms = 0, finished_unix_ms = 0;
  std::int64_t duration_ms = 0;
  std::optional<int> exit_status;  ///< process exit status when a program ran
  bool is_error = false;
  std::uint64_t output_bytes = 0;
};

/// Stable lower_snake names ("run", "not_enabled", "policy", …), as stored in the table.
const char* to_string(call_decision d) noexcept;
const char* to_string(decided_by b) noexcept;

class call_log {
 public:
  explicit call_log(database& db);

  /// Appends one record.
  result<void> insert(const call_record& r);
  /// Up to `limit` records, newest first (started_unix_ms, then insert order, descending);
  /// only those of `session_id` when it is not "".
  result<std::vector<call_record>> recent(std::size_t limit, const std::string& session_id = "") const;
  /// Number of records.
  result<std::int64_t> count() const;

 private:
  database& db_;
};

}  // namespace warden::store
