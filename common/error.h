// warden::error — expected failures as values, with one table from error code to HTTP status.
//
// Each API surface renders an `error` in its own envelope (api/wire/errors.h writes the
// OpenAI and Anthropic ones). The status map follows the reference system, unsloth-studio.md §1.0:
// 400 invalid_request_error, 401 authentication_error, 403 permission_error,
// 404 not_found_error, 409 conflict_error, 413/415 invalid_request_error, 429 rate_limit_error,
// 5xx api_error.
// Thread-safety: value types and pure functions.
#pragma once

#include <string>

namespace warden {

enum class errc {
  invalid_request,       ///< the caller sent something malformed → 400
  payload_too_large,     ///< request body over the configured limit → 413
  unauthorized,          ///< missing or wrong API key → 401
  forbidden,             ///< refused by policy (Host, Origin, permission ceiling) → 403
  not_found,             ///< unknown route or id → 404
  conflict,              ///< the target is in use or busy (a loaded model, a pull under way) → 409
  insufficient_storage,  ///< not enough free disk for what was asked (a model pull) → 507
  method_not_allowed,    ///< known route, wrong method → 405
  unsupported_media_type,  ///< a JSON route got another Content-Type → 415
  too_many_requests,     ///< a quota or a cap on live work is reached; retry later or free some → 429
  upstream_unavailable,  ///< the model server is loading, down or unreachable → 503
  upstream_error,        ///< the model server answered with an error or broke mid-stream → 502
  cancelled,             ///< the client went away or cancelled → 499 (never seen by a client)
  internal,              ///< a bug; logged with details → 500
};

struct error {
  errc code = errc::internal;
  std::string message;  ///< human-readable, safe to show the caller
  std::string param;    ///< the offending request field, "" when none
  std::string type_code;  ///< machine code such as "invalid_json", "" when none
};

/// HTTP status for an error code (table above).
int http_status(errc code) noexcept;

/// The error `type` for an HTTP status in the reference's map (unsloth-studio.md §1.0; OpenAI's
/// names): 401 authentication_error, 403 permission_error, 404 not_found_error, 409
/// conflict_error, 429 rate_limit_error, other 5xx api_error, anything else
/// invalid_request_error. A surface with other names for some statuses overrides those first.
const char* error_type_for_status(int status) noexcept;

/// Stable lower_snake name of an error code, for logs.
const char* to_string(errc code) noexcept;

inline error make_error(errc code, std::string message, std::string param = {},
                        std::string type_code = {}) {
  return error{code, std::move(message), std::move(param), std::move(type_code)};
}

}  // namespace warden
