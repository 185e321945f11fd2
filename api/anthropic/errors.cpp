#include "api/anthropic/errors.h"

#include "common/sse.h"

namespace warden::api::anthropic {

const char* error_type(int status) noexcept {
  switch (status) {
    case 401: return "authentication_error";
    case 403: return "permission_error";
    case 404: return "not_found_error";
    case 409: return "conflict_error";
    case 413: return "request_too_large";
    case 429: return "rate_limit_error";
    case 503:
    case 529: return "overloaded_error";
    default: return status >= 500 ? "api_error" : "invalid_request_error";
  }
}

json error_envelope(const error& e, std::string_view request_id) {
  json body = {{"type", "error"},
               {"error", {{"type", error_type(http_status(e.code))}, {"message", e.message}}}};
  body["request_id"] = request_id.empty() ? json() : json(std::string(request_id));
  return body;
}

std::string error_body(const error& e, std::string_view request_id) { return dump_safe(error_envelope(e, request_id)); }

std::string inband_error_frames(const error& e) {
  json body = {{"type", "error"}, {"error", {{"type", error_type(http_status(e.code))}, {"message", e.message}}}};
  return "event: error\ndata: " + dump_safe(body) + "\n\n";
}

}  // namespace warden::api::anthropic
