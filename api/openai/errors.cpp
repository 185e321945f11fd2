#include "api/openai/errors.h"

#include "common/sse.h"

namespace warden::api::openai {

const char* error_type(int status) noexcept { return error_type_for_status(status); }

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
