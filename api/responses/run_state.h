// run_state — what one POST /v1/responses runs with, shared by the handler's parts (internal to
// api/responses/): the create path (responses_handler.cpp), the run paths (run_paths.h), the
// event writer (event_writer.h) and the background lifecycle (background_runs.h).
// Thread-safety: a run_state belongs to one run (its coroutine); off_thread() runs `f` on the
// blocking pool and resumes the caller on its own executor.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "engine/external_provider.h"
#include "agent/loop_context.h"
#include "agent/permission_rules.h"
#include "api/responses/background.h"
#include "api/responses/responses_request.h"
#include "common/blocking_pool.h"
#include "common/ids.h"
#include "common/principal.h"
#include "model/conversation.h"

namespace warden::api::responses {

using warden::off_thread;  // f() on the pool, inline when null (common/blocking_pool.h)

/// Seconds since the Unix epoch.
inline std::int64_t unix_s_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

/// Everything a create request runs with once its previous response is loaded.
struct run_state {
  responses_request req;
  std::vector<model::message> history;  ///< the previous response's conversation (no instructions)
  std::optional<agent::resume_turn> resume;
  std::string id = ids::new_id(ids::kind::response);
  std::int64_t created = unix_s_now();
  bool started = false;  ///< the stream has begun (response.created was sent)
  std::shared_ptr<run_channel> channel;  ///< a background run's event log; null in the foreground
  std::int64_t persisted = 0;            ///< a background run's events already in the store
  std::string pending_text;              ///< the parked turn as read (claim_pending compares)
  std::size_t history_bytes = 0;         ///< the previous response's stored conversation, in bytes
  /// Who sent the request (http_request::caller): it may continue, resume, answer or read only
  /// what it may access (principal::may_access); req.loop.owner is the owner of what it makes.
  principal caller;
  /// The external provider the request names (engine/external_provider.h), resolved by the
  /// handler; null: the local engine. Shared: a background run keeps it.
  std::shared_ptr<engine::provider_engine> provider;
};

/// The session a background run's questions are asked in (run_channel::session_id): the
/// request's session_id, or agent::k_shared_session when it named none.
inline std::string run_session(const run_state& st) {
  return st.req.loop.session_id.empty() ? std::string(agent::k_shared_session) : st.req.loop.session_id;
}

/// The conversation sent to the model: instructions, history, the new input.
model::chat_request conversation(const run_state& st);

}  // namespace warden::api::responses
