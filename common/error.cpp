#include "common/error.h"

namespace warden {

int http_status(errc code) noexcept {
  switch (code) {
    case errc::invalid_request: return 400;
    case errc::payload_too_large: return 413;
    case errc::unauthorized: return 401;
    case errc::forbidden: return 403;
    case errc::unsupported_media_type: return 415;
    case errc::too_many_requests: return 429;
    case errc::not_found: return 404;
    case errc::conflict: return 409;
    case errc::insufficient_storage: return 507;
    case errc::method_not_allowed: return 405;
    case errc::upstream_unavailable: return 503;
    case errc::upstream_error: return 502;
    case errc::cancelled: return 499;
    case errc::internal: return 500;
  }
  return 500;
}

const char* to_string(errc code) noexcept {
  switch (code) {
    case errc::invalid_request: return "invalid_request";
    case errc::payload_too_large: return "payload_too_large";
    case errc::unauthorized: return "unauthorized";
    case errc::forbidden: return "forbidden";
    case errc::unsupported_media_type: return "unsupported_media_type";
    case errc::too_many_requests: return "too_many_requests";
    case errc::not_found: return "not_found";
    case errc::conflict: return "conflict";
    case errc::insufficient_storage: return "insufficient_storage";
    case errc::method_not_allowed: return "method_not_allowed";
    case errc::upstream_unavailable: return "upstream_unavailable";
    case errc::upstream_error: return "upstream_error";
    case errc::cancelled: return "cancelled";
    case errc::internal: return "internal";
  }
  return "internal";
}

const char* error_type_for_status(int status) noexcept {
  switch (status) {
    case 401: return "authentication_error";
    case 403: return "permission_error";
    case 404: return "not_found_error";
    case 409: return "conflict_error";
    case 429: return "rate_limit_error";
    default: return status >= 500 ? "api_error" : "invalid_request_error";
  }
}

}  // namespace warden
