// The audit log over HTTP (issue 10): every tool call warden ran, asked about or refused, as
// stored in SQLite by the tool loop (store/call_records.h).
//
//   GET /api/audit?session_id=&since=&limit=&after=
//     session_id  only this session's calls; [A-Za-z0-9_-]{1,64} (empty = every session)
//     since       only calls started at or after this time: Unix milliseconds (an integer ≥ 0)
//                 or an RFC 3339 time such as 2026-12-01T10:00:00Z (fractions and ±HH:MM
//                 offsets accepted; write `+` as %2B, a plain `+` in a query means a space)
//     limit       1 to 1000 rows, default 100
//     after       a row id (an integer ≥ 0): only rows after it, for paging
//   → 200 {"object":"list","data":[record…],"has_more":bool,"last_id":n}
//     oldest first (row id ascending). last_id is the last row's id, or `after` when the page is
//     empty: pass it as `after` for the next page, or to poll for new calls.
//   A user key (--api-keys-file, role user) gets only the rows of its own calls; an admin key,
//   the single user (no key, or --api-key) every row.
//   record = audit_record_json(): {"id", "call_id", "session_id", "owner" (the API key name of
//     the request, "" for the single user), "surface", "tool",
//     "arguments" (the JSON object, or the stored text when it is not one), "mode",
//     "risk":{"level","reasons"}, "decision", "decided_by", "rule_id", "allowed",
//     "approval_id", "reason", "started_at", "finished_at" (Unix ms), "duration_ms",
//     "approval_latency_ms" (null when nobody was asked), "exit_status" (null when no program
//     ran), "is_error", "output_bytes", "status" ("pending" | "ran" | "not_run"), "notes"
//     (facts added later, such as "client_gone"), "arguments_sha256" (SHA-256 hex of the
//     canonical arguments before redaction: store/call_records.h defines the text), "row_hash"
//     (the row's place in the hash chain; "" for rows older than the chain)}. Secrets in
//     arguments and reason were redacted when they were stored (secrets/redact.h).
// Errors (control envelope, OpenAI-shaped): 400 naming the bad parameter; 401 without the API
// key when one is set; 405 for other methods (the router); 503 when no audit log is attached;
// 500 "the audit log could not be read" on a database error (details go to the log).
// The database is read on the blocking pool (inline when no pool is given, as in tests).
// Thread-safety: handlers run concurrently; call_log is thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "common/blocking_pool.h"
#include "common/http_types.h"
#include "common/json_util.h"
#include "store/call_records.h"

namespace warden::api::control {

/// GET /api/audit. `log` (null: 503) and `pool` (null: inline) must outlive the routes.
std::vector<route> audit_routes(const store::call_log* log, blocking_pool* pool);

/// One record as the API and `warden audit --json` show it (keys above).
json audit_record_json(std::int64_t row_id, const store::call_record& r);

/// A `since` value: Unix milliseconds (decimal digits only) or an RFC 3339 time (above), as
/// Unix milliseconds; nullopt when it is neither.
std::optional<std::int64_t> parse_audit_time(std::string_view text);

}  // namespace warden::api::control
