// OpenAI error envelope: {"error":{"message","type","param","code"}}; `param` and `code` are
// always present and may be null. `type` follows the status (reference unsloth-studio.md §1.0):
// 400/405/413/422 invalid_request_error, 401 authentication_error, 403 permission_error,
// 404 not_found_error, 409 conflict_error, 429 rate_limit_error, 5xx api_error.
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "common/error.h"
#include "common/json_util.h"

namespace warden::api::openai {

/// `type` string for an HTTP status.
const char* error_type(int status) noexcept;

/// The envelope as a JSON value.
json error_envelope(const error& e);

/// The envelope serialized (response body).
std::string error_body(const error& e);

/// An error sent after the stream started: `data: {"error":…}\n\n` then `data: [DONE]\n\n`.
std::string inband_error_frames(const error& e);

}  // namespace warden::api::openai
