#include "api/openai/errors.h"

#include "common/sse.h"

namespace warden::api::openai {

const char* error_type(int status) noexcept {
  switch (status) {
    case 401: return "authentication_error";
    case 403: return "permission_error";
    case 404: return "not_found_error";
    case 409: return "conflict_error";
    case 429: return "rate_limit_error";
    default: break;
  }
  return status >= 500 ? "api_error" : "invalid_request_error";
}

json error_envelope(const error& e) {
  json inner = json::object();
  inner["message"] = e.message;
  inner["type"] = error_type(http_status(e.code));
  inner["param"] = e.param.empty() ? json(nullptr) : json(e.param);
  inner["code"] = e.type_code.empty() ? json(nullptr) : json(e.type_code);
  return json{{"error", std::move(inner)}};
}

std::string error_body(const error& e) { return dump_safe(error_envelope(e)); }

std::string inband_error_frames(const error& e) {
  return sse::data_frame(error_body(e)) + sse::done_frame();
}

}  // namespace warden::api::openai
