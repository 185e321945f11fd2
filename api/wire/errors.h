// Error envelopes every surface shares, and the one way a handler answers with an error.
// common/error.h keeps the code → HTTP status map; this file writes the bodies.
//
// OpenAI envelope (OpenAI chat, legacy completions, Responses, the control surface):
//   {"error":{"message","type","param","code"}}; `param` and `code` are always present and may
//   be null. `type` follows the status (reference unsloth-studio.md §1.0): 400/405/413/422
//   invalid_request_error, 401 authentication_error, 403 permission_error, 404 not_found_error,
//   409 conflict_error, 429 rate_limit_error, 5xx api_error. After a stream started:
//   `data: {"error":…}\n\n` then `data: [DONE]\n\n`.
// Anthropic envelope (/v1/messages): {"type":"error","error":{"type","message"},"request_id":
//   "req_…"} (the request's `request-id` header; null when ""). `error.type` follows the status
//   (Anthropic's own table): 400/405/415/422 invalid_request_error, 401 authentication_error,
//   403 permission_error, 404 not_found_error, 409 conflict_error (not Anthropic's, kept from the
//   OpenAI map), 413 request_too_large, 429 rate_limit_error, 503/529 overloaded_error, other
//   5xx api_error. After a stream started: one `event: error` frame with the same envelope (no
//   request_id: the header already carried it) and the stream ends.
// send_error(): the whole response for an error before anything was sent, in the route's
//   surface dialect (surface::error_body), with the status http_status(e.code).
// Thread-safety: pure functions; send_error follows response_writer's rules (its strand).
#pragma once

#include <boost/asio/awaitable.hpp>
#include <functional>
#include <string>
#include <string_view>

#include "common/error.h"
#include "common/http_types.h"
#include "common/json_util.h"

namespace warden::api::wire {

/// OpenAI `type` string for an HTTP status.
const char* openai_error_type(int status) noexcept;
json openai_error_envelope(const error& e);
std::string openai_error_body(const error& e);
/// `data: {"error":…}\n\n` then `data: [DONE]\n\n`.
std::string openai_inband_error_frames(const error& e);

/// Anthropic `error.type` string for an HTTP status.
const char* anthropic_error_type(int status) noexcept;
json anthropic_error_envelope(const error& e, std::string_view request_id);
std::string anthropic_error_body(const error& e, std::string_view request_id);
/// `event: error\ndata: {...}\n\n`.
std::string anthropic_inband_error_frames(const error& e);

/// Sends `e` as a whole response in `dialect`'s envelope (`request_id`: the request's, for the
/// dialects that echo it). Before the response started only.
/// Sets `Retry-After: <seconds>` on a response that has not started (a refusal by the admission
/// queue, engine/admission_queue.h); the returned function holds `out` by reference.
inline std::function<void(int)> retry_after_on(response_writer& out) {
  return [&out](int seconds) { out.add_header("Retry-After", std::to_string(seconds)); };
}

boost::asio::awaitable<void> send_error(response_writer& out, const surface& dialect, const error& e,
                                        std::string_view request_id = {});

}  // namespace warden::api::wire
