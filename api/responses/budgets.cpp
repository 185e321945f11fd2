#include "api/responses/budgets.h"

namespace warden::api::responses {

namespace {

std::string mib(std::int64_t bytes) {
  const std::int64_t m = bytes >> 20;
  return m > 0 ? std::to_string(m) + " MiB" : std::to_string(bytes) + " bytes";
}

}  // namespace

std::optional<error> check_history(const responses_limits& limits, std::size_t body_bytes, std::size_t history_bytes,
                                   const std::string& previous_id) {
  if (limits.max_body_bytes == 0 || body_bytes + history_bytes <= limits.max_body_bytes) return std::nullopt;
  return make_error(errc::payload_too_large,
                    "the request body (" + std::to_string(body_bytes) + " bytes) and the conversation that "
                        "previous_response_id '" + previous_id + "' carries (" + std::to_string(history_bytes) +
                        " bytes) together exceed the body limit of " + std::to_string(limits.max_body_bytes) +
                        " bytes (--max-body); start a new chain without previous_response_id, or send less",
                    "previous_response_id", "request_too_large");
}

std::optional<error> check_storage(const responses_limits& limits, store::response_store& db, std::int64_t estimate,
                                   const std::string& owner, const std::string& session) {
  if (limits.max_stored_bytes <= 0 && limits.max_session_stored_bytes <= 0) return std::nullopt;
  auto used = db.bytes_used(owner, session);
  if (!used) return make_error(errc::internal, "the response store could not be read");
  const char* free_some = "; delete stored responses (DELETE /v1/responses/{id}), send store: false, or wait for "
                          "the --responses-ttl sweep";
  if (limits.max_stored_bytes > 0 && used->total + estimate > limits.max_stored_bytes) {
    return make_error(errc::too_many_requests,
                      "the response store holds " + mib(used->total) + " and this response would take about " +
                          mib(estimate) + " more, past its quota of " + mib(limits.max_stored_bytes) +
                          " (--responses-quota)" + free_some,
                      "store", "storage_quota_exceeded");
  }
  if (limits.max_session_stored_bytes > 0 && used->session + estimate > limits.max_session_stored_bytes) {
    return make_error(errc::too_many_requests,
                      "this session's stored responses hold " + mib(used->session) +
                          " and this response would take about " + mib(estimate) + " more, past the quota of " +
                          mib(limits.max_session_stored_bytes) + " per session (--responses-session-quota)" +
                          free_some,
                      "store", "storage_quota_exceeded");
  }
  return std::nullopt;
}

std::optional<error> check_background_runs(const responses_limits& limits, const run_registry& runs,
                                           const std::string& owner, const std::string& session) {
  const char* wait = "; wait for one to finish or cancel one (POST /v1/responses/{id}/cancel)";
  if (limits.max_background_runs > 0 && runs.active() >= limits.max_background_runs) {
    return make_error(errc::too_many_requests,
                      std::to_string(runs.active()) + " background runs are live, the most warden runs at once "
                          "(--background-runs)" + wait,
                      "background", "too_many_background_runs");
  }
  const std::size_t mine = runs.count(owner, session);
  if (limits.max_session_background_runs > 0 && mine >= limits.max_session_background_runs) {
    return make_error(errc::too_many_requests,
                      std::to_string(mine) + " background runs of this session are live, the most one session runs "
                          "at once (--session-background-runs)" + wait,
                      "background", "too_many_background_runs");
  }
  return std::nullopt;
}

}  // namespace warden::api::responses
