#include "api/anthropic/errors.h"

#include "common/sse.h"

namespace warden::api::anthropic {

const char* error_type(int status) noexcept {
  switch (status) {
    case 413: return "request_too_large";
    case 503:
    case 529: return "overloaded_error";
    default: return error_type_for_status(status);
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
  json body = error_envelope(e, "");
  body.erase("request_id");  // the response's header already carries it
  return "event: error\ndata: " + dump_safe(body) + "\n\n";
}

}  // namespace warden::api::anthropic
