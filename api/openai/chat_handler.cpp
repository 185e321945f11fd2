#include "api/openai/chat_handler.h"

#include <spdlog/spdlog.h>

#include "api/openai/chat_request.h"
#include "api/openai/errors.h"
#include "common/sse.h"

namespace warden::api::openai {

namespace asio = boost::asio;

asio::awaitable<void> send_error(response_writer& out, const error& e) {
  co_await out.send(http_status(e.code), "application/json", error_body(e));
}

namespace {

asio::awaitable<void> stream_chat(chat_request req, response_writer& out, agent::chat_service& chat) {
  auto opened = co_await chat.open_stream(std::move(req.body));
  if (!opened) {
    co_await send_error(out, opened.error());
    co_return;
  }
  std::unique_ptr<agent::chat_stream> stream = std::move(*opened);
  if (!co_await out.begin_stream()) co_return;
  while (true) {
    agent::chat_event ev = co_await stream->next();
    switch (ev.type) {
      case agent::chat_event::kind::chunk: {
        // A usage-only chunk (choices: []) goes out only when the client asked for it.
        if (!req.include_usage) {
          auto ch = ev.parsed.find("choices");
          if (ch != ev.parsed.end() && ch->is_array() && ch->empty() && ev.parsed.contains("usage")) break;
        }
        std::string frame;
        frame.reserve(ev.raw.size() + 8);
        frame += "data: ";
        frame += ev.raw;
        frame += "\n\n";
        if (!co_await out.write_stream(std::move(frame))) co_return;
        break;
      }
      case agent::chat_event::kind::ping:
        if (!co_await out.write_stream(sse::comment_frame("ping"))) co_return;
        break;
      case agent::chat_event::kind::failed:
        spdlog::warn("chat stream failed after start: {}", ev.failure->message);
        if (co_await out.write_stream(inband_error_frames(*ev.failure))) co_await out.end_stream();
        co_return;
      case agent::chat_event::kind::finished:
        if (co_await out.write_stream(sse::done_frame())) co_await out.end_stream();
        co_return;
    }
  }
}

}  // namespace

asio::awaitable<void> handle_chat_completions(const http_request& http, response_writer& out,
                                              agent::chat_service& chat) {
  auto parsed = parse_chat_request(http.body);
  if (!parsed) {
    co_await send_error(out, parsed.error());
    co_return;
  }
  chat_request req = std::move(*parsed);
  if (req.stream) {
    co_await stream_chat(std::move(req), out, chat);
    co_return;
  }
  auto done = co_await chat.complete(std::move(req.body));
  if (!done) {
    co_await send_error(out, done.error());
    co_return;
  }
  co_await out.send(200, "application/json", dump_safe(*done));
}

asio::awaitable<void> handle_models(const http_request& req, response_writer& out,
                                    const std::string& model_id, long long created_s) {
  json model = {{"id", model_id}, {"object", "model"}, {"created", created_s}, {"owned_by", "warden"}};
  const std::string prefix = "/v1/models/";
  if (req.path.rfind(prefix, 0) == 0) {
    const std::string id = req.path.substr(prefix.size());
    if (id != model_id) {
      co_await send_error(out, make_error(errc::not_found, "model '" + id + "' not found; this server serves '" +
                                                               model_id + "'",
                                          "model", "model_not_found"));
      co_return;
    }
    co_await out.send(200, "application/json", dump_safe(model));
    co_return;
  }
  json list = {{"object", "list"}, {"data", json::array({model})}};
  co_await out.send(200, "application/json", dump_safe(list));
}

}  // namespace warden::api::openai
