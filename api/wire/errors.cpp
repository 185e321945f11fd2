#include "api/wire/errors.h"

#include "common/sse.h"

namespace warden::api::wire {

const char* openai_error_type(int status) noexcept { return error_type_for_status(status); }

json openai_error_envelope(const error& e) {
  json inner = json::object();
  inner["message"] = e.message;
  inner["type"] = openai_error_type(http_status(e.code));
  inner["param"] = e.param.empty() ? json(nullptr) : json(e.param);
  inner["code"] = e.type_code.empty() ? json(nullptr) : json(e.type_code);
  return json{{"error", std::move(inner)}};
}

std::string openai_error_body(const error& e) { return dump_safe(openai_error_envelope(e)); }

std::string openai_inband_error_frames(const error& e) {
  return sse::data_frame(openai_error_body(e)) + sse::done_frame();
}

const char* anthropic_error_type(int status) noexcept {
  switch (status) {
    case 413: return "request_too_large";
    case 503:
    case 529: return "overloaded_error";
    default: return error_type_for_status(status);
  }
}

json anthropic_error_envelope(const error& e, std::string_view request_id) {
  json body = {{"type", "error"},
               {"error", {{"type", anthropic_error_type(http_status(e.code))}, {"message", e.message}}}};
  // The message-thread codes go where the SDKs read them (anthropic lib/threads:
  // error.details.error_code); Anthropic's envelope has no place for warden's other codes.
  if (e.type_code.starts_with("thread_")) body["error"]["details"] = {{"error_code", e.type_code}};
  body["request_id"] = request_id.empty() ? json() : json(std::string(request_id));
  return body;
}

std::string anthropic_error_body(const error& e, std::string_view request_id) {
  return dump_safe(anthropic_error_envelope(e, request_id));
}

std::string anthropic_inband_error_frames(const error& e) {
  json body = anthropic_error_envelope(e, "");
  body.erase("request_id");  // the response's header already carries it
  return "event: error\ndata: " + dump_safe(body) + "\n\n";
}

boost::asio::awaitable<void> send_error(response_writer& out, const surface& dialect, const error& e,
                                        std::string_view request_id) {
  std::string body = dialect.error_body(e, request_id);  // named: no temporaries in the co_await
  co_await out.send(http_status(e.code), "application/json", std::move(body));
}

}  // namespace warden::api::wire
