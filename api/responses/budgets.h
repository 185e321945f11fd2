// Budgets of the Responses surface (issue 23, part 1): what one create request may carry and
// keep, checked before any model work.
//   - history: the stored conversation that previous_response_id carries counts toward the body
//     limit, with the request body: past it → 413 (type_code "request_too_large"), so a chain
//     cannot grow what one request makes the server hold without bound.
//   - stored bytes: when the response is to be stored, the bytes already stored (store/
//     responses_store.h bytes_used: texts and events) plus this response's estimate (twice its
//     body and history: its conversation holds both, its input items the body again) must stay
//     within the total quota and within the quota of the caller's session (owner + session_id)
//     → 429 (type_code "storage_quota_exceeded"), naming which quota, its size and how to free
//     some (DELETE /v1/responses/{id}, store: false, or the --responses-ttl sweep).
//   - background runs: live background runs in all and in the caller's session → 429
//     (type_code "too_many_background_runs").
// Every limit is a --flag (common/config.h); 0 means none.
// Thread-safety: check_history and check_background_runs are pure (the registry locks itself);
// check_storage blocks on SQLite: call it through off_thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "api/responses/background.h"
#include "common/error.h"
#include "store/responses_store.h"

namespace warden::api::responses {

struct responses_limits {
  std::uint64_t max_body_bytes = 32u << 20;            ///< --max-body: the body and the carried history together
  std::int64_t max_stored_bytes = 4LL << 30;           ///< --responses-quota (MiB): everything stored (0: no quota)
  std::int64_t max_session_stored_bytes = 1LL << 30;   ///< --responses-session-quota (MiB): one key's session
  std::size_t max_background_runs = 64;                ///< --background-runs: live in all (0: no cap)
  std::size_t max_session_background_runs = 16;        ///< --session-background-runs: live in one session
};

/// The 413 when `body_bytes` and `history_bytes` (the previous response's stored conversation)
/// together exceed limits.max_body_bytes.
std::optional<error> check_history(const responses_limits& limits, std::size_t body_bytes, std::size_t history_bytes,
                                   const std::string& previous_id);

/// The 429 when storing about `estimate` more bytes for (`owner`, `session`) would pass a quota;
/// errc::internal when the store could not be read.
std::optional<error> check_storage(const responses_limits& limits, store::response_store& db, std::int64_t estimate,
                                   const std::string& owner, const std::string& session);

/// The 429 when one more background run for (`owner`, `session`) would pass a cap.
std::optional<error> check_background_runs(const responses_limits& limits, const run_registry& runs,
                                           const std::string& owner, const std::string& session);

}  // namespace warden::api::responses
