// warden::store::call_log — the audit log's table: one row per tool call, hash-chained.
//
// Table `call_records` (schema versions 1, 2, 4 and 5, database.cpp): an INTEGER PRIMARY KEY `id`
// in insert order (the row id that insert() returns and list() pages by), one column per
// call_record field (decision and decided_by as the text they are given, bools as 0/1,
// exit_status and approval_latency_ms NULL when absent, risk_reasons and notes as JSON arrays of
// strings, output_bytes as its 64-bit pattern), and indexes on session_id,
// started_unix_ms and owner (the API key name that made the row, "" for the single user).
// Strings are stored byte for byte with their length (quotes, NULs and non-UTF-8 bytes
// survive), except that insert() and update() store `arguments`, `reason` and each risk reason
// through redact_secrets() (secrets/redact.h): the database never holds a secret the
// environment scrubber would recognise.
//
// The arguments' hash. Each row stores `arguments_sha256`: the SHA-256 (64 lowercase hex
// digits) of the exact bytes of call_record::arguments as given to the write, before
// redaction, so a person holding the original arguments can prove what ran. The agent gives
// the canonical arguments (agent/call_plan.cpp): for arguments that parsed as a JSON object —
// what the tool received — the object serialised by nlohmann::json::dump() (common/json_util.h
// dump_safe: compact, no spaces, object keys sorted by their UTF-8 bytes, non-ASCII characters
// as raw UTF-8, `"` `\` and control characters escaped — \b \f \n \r \t, others as \u00XX —,
// invalid UTF-8 replaced by U+FFFD); for arguments that are not a JSON object, the text the
// model sent. For strings, integers, booleans and null this is the text of Python's
// json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).
//
// Rows move forward only. `status` is "pending" (written before the call runs:
// agent/call_runner.h opens the row, then completes it), "ran" (the tool was started; the
// outcome is in exit_status, is_error, …) or "not_run" (refused, declined, expired, cancelled
// or gone before it started, or a sandbox that could not start — `reason` says why). A write
// may move a row from pending to ran or not_run, or rewrite it with the same status; update()
// refuses to move a row back (ran → not_run or pending, not_run → ran or pending:
// errc::forbidden, nothing written). `allowed` follows a final status (1 for ran, 0 for
// not_run; as given while pending). `notes` only grows: an update keeps every note the row had
// and adds the new ones ("client_gone": the client left; "cancelled": …). A call_record whose
// status is "" is stored as "ran" when allowed, else "not_run". The database holds the same rule
// for every writer (schema 5 triggers): no status change of a ran / not_run row, no DELETE, no
// INSERT of an id that exists (INSERT OR REPLACE).
//
// Tamper evidence. Every write (insert or update) of a row appends one event to the table
// `call_events` (seq INTEGER PRIMARY KEY in write order, row_id, content, hash), in the same
// transaction:
//   content = chain_content(row) (call_chain.cpp): the row as stored after the write, as compact
//             JSON with sorted keys: "id" and every column but row_hash, under its column name —
//             texts as JSON strings (a text that is not valid UTF-8 as {"sha256": hex of its
//             bytes}), `arguments` always as {"sha256": hex of the stored, redacted bytes},
//             risk_reasons and notes as their stored JSON text (strings), integers as numbers,
//             NULL as null;
//   hash    = SHA-256 hex of (hash of the previous event, or 64 '0's for the first) + "\n" +
//             content;
// and the row's `row_hash` column is set to that hash. Chaining events rather than rows keeps a
// row that is completed later (exit, client gone) verifiable at every step: a row is checked
// against its last event, and every event against the one before. verify() walks the chain
// from event 1: each event's hash must follow from the previous hash and its content, seq must
// run 1, 2, 3, … without gaps, each row's statuses through its events must move forward only,
// every event's row must still exist, and every row written since
// the chain began must equal the content of its last event and carry its hash. It reports the
// first break (in chain order, then row order). Rows written before schema 4
// (id < call_chain_start.first_row_id) are outside the chain and counted apart. What the chain
// cannot show: the newest events and rows removed together (keep the head hash verify()
// reports somewhere else to notice that), or a rewrite of every event from some point on with
// recomputed hashes (the hashes are not keyed).
// Rows are appended and completed (update), never deleted through this API.
// Times are Unix epoch milliseconds; durations milliseconds; sizes bytes.
// Errors: errc::internal naming the database file and sqlite3_errmsg (database.h); a row whose
// risk_reasons or notes this code cannot read is an error too (decision and decided_by are read
// back as they are stored, unchecked); update() of a row id that does not exist is
// errc::not_found; a status other than "", "pending", "ran", "not_run" is errc::invalid_request.
// Nothing throws for SQLite errors.
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
  std::string owner;          ///< the API key name of the request ("" = single user; schema 5; in the chained content only when set)
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
  /// "pending" | "ran" | "not_run" (above); "" = from `allowed` ("ran" when set, else "not_run").
  std::string status;
  std::vector<std::string> notes;  ///< facts added later: "client_gone", "cancelled", … (stored as a JSON array)
  /// Read back only (a write computes them): SHA-256 hex of the canonical arguments (above), and
  /// the hash of the row's last chained event ("" for rows from before schema 4).
  std::string arguments_sha256, row_hash;
};

/// What verify() found.
struct chain_report {
  bool ok = true;
  std::int64_t rows = 0;         ///< rows in the chain (every row written since schema 4)
  std::int64_t legacy_rows = 0;  ///< rows written before schema 4: outside the chain, not checked
  std::int64_t events = 0;       ///< chained events checked
  std::string head;              ///< the last event's hash ("" when there is none)
  std::int64_t broken_row = 0;   ///< the first broken row's id (0 when ok, or unknown)
  std::string problem;           ///< what is wrong, in words ("" when ok)
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

  /// Appends one record (arguments and reason redacted, the arguments' hash computed) and its
  /// chained event; returns its row id (> 0).
  result<std::int64_t> insert(const call_record& r);
  /// Overwrites the fields of row `row_id` with `r` (redacted like insert; notes merged) and
  /// chains the new content: the row of a call inserted before it ran, completed afterwards.
  /// errc::not_found when there is no such row; errc::forbidden when `r`'s status would move
  /// the row back (above).
  result<void> update(std::int64_t row_id, const call_record& r);
  /// Rows matching `q`, oldest first (row id ascending), with their row ids; at most
  /// min(q.limit, k_max_audit_page) of them.
  result<std::vector<std::pair<std::int64_t, call_record>>> list(const audit_query& q) const;
  /// Up to `limit` records, newest first (started_unix_ms, then insert order, descending);
  /// only those of `session_id` when it is not "".
  result<std::vector<call_record>> recent(std::size_t limit, const std::string& session_id = "") const;
  /// Number of records.
  result<std::int64_t> count() const;
  /// Checks the hash chain (above), reading one consistent snapshot; the report says whether it
  /// holds and, if not, the first broken row. Errors only when the database cannot be read.
  result<chain_report> verify() const;

 private:
  database& db_;
};

}  // namespace warden::store
