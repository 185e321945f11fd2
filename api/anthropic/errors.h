// Anthropic error envelope: {"type":"error","error":{"type","message"},"request_id":"req_…"}
// (the request's `request-id` header). `error.type` follows the HTTP status (reference
// unsloth-studio.md §1.0, Anthropic's own table): 400/405/415/422 invalid_request_error,
// 401 authentication_error, 403 permission_error, 404 not_found_error, 409 conflict_error
// (not Anthropic's, kept from the OpenAI map), 413 request_too_large, 429 rate_limit_error,
// 503/529 overloaded_error, other 5xx api_error.
// After a stream started, an error is one `event: error` frame with the same envelope (no
// request_id: the header already carried it) and the stream ends.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "common/error.h"
#include "common/json_util.h"

namespace warden::api::anthropic {

const char* error_type(int status) noexcept;
json error_envelope(const error& e, std::string_view request_id);
std::string error_body(const error& e, std::string_view request_id);
/// `event: error\ndata: {...}\n\n`.
std::string inband_error_frames(const error& e);

}  // namespace warden::api::anthropic
