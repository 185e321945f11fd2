#include "api/openai/chat_handler.h"

#include <spdlog/spdlog.h>

#include "api/openai/chat_request.h"
#include "api/openai/errors.h"
#include "common/sse.h"

#include <chrono>

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

std::string completion_id() { return "chatcmpl-" + agent::random_approval_id().substr(0, 22); }

long long unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

json include_usage_option() { return json{{"include_usage", true}}; }

json completion_body(const std::string& model, const agent::loop_result& r) {
  json body = {{"id", completion_id()},
               {"object", "chat.completion"},
               {"created", unix_now()},
               {"model", model},
               {"choices", json::array({{{"index", 0},
                                         {"message", {{"role", "assistant"}, {"content", r.final_text}}},
                                         {"finish_reason", r.finish_reason}}})}};
  if (!r.usage.is_null()) body["usage"] = r.usage;
  return body;
}

/// Writes the tool loop's events as SSE frames; opens the stream on the first event.
class sse_sink : public agent::loop_sink {
 public:
  sse_sink(response_writer& out, std::string model) : out_(out), model_(std::move(model)), id_(completion_id()), created_(unix_now()) {}

  json chunk(json delta, json finish_reason = json()) const {
    return {{"id", id_},
            {"object", "chat.completion.chunk"},
            {"created", created_},
            {"model", model_},
            {"choices", json::array({{{"index", 0}, {"delta", std::move(delta)}, {"finish_reason", std::move(finish_reason)}}})}};
  }
  static std::string frame(const json& j) { return "data: " + dump_safe(j) + "\n\n"; }
  std::string role_frame() const { return frame(chunk({{"role", "assistant"}, {"content", ""}})); }
  std::string usage_frame(const json& usage) const {
    json u = chunk(json::object());
    u["choices"] = json::array();
    u["usage"] = usage.is_null() ? json{{"prompt_tokens", 0}, {"completion_tokens", 0}, {"total_tokens", 0}} : usage;
    return frame(u);
  }

  asio::awaitable<bool> open() {
    if (out_.started()) co_return true;
    if (!co_await out_.begin_stream()) co_return false;
    std::string f = role_frame();
    const bool ok = co_await out_.write_stream(std::move(f));
    co_return ok;
  }

  asio::awaitable<bool> emit(agent::loop_event ev) override {
    if (!co_await open()) co_return false;
    std::string f;
    switch (ev.type) {
      case agent::loop_event::kind::delta:
        f = frame(chunk(std::move(ev.data)));
        break;
      case agent::loop_event::kind::ping:
        f = sse::comment_frame("ping");
        break;
      case agent::loop_event::kind::tool_status:
      case agent::loop_event::kind::tool_start:
      case agent::loop_event::kind::tool_output:
      case agent::loop_event::kind::tool_end:
        f = frame(ev.data);
        break;
    }
    const bool ok = co_await out_.write_stream(std::move(f));
    co_return ok;
  }

  const std::string& id() const { return id_; }
  long long created() const { return created_; }

 private:
  response_writer& out_;
  std::string model_;
  std::string id_;
  long long created_;
};

/// Non-streaming: events are dropped (the answer is the last turn's text).
class null_sink : public agent::loop_sink {
 public:
  asio::awaitable<bool> emit(agent::loop_event) override { co_return true; }
};

asio::awaitable<void> run_loop(chat_request req, response_writer& out, agent::chat_service& chat,
                               agent::tool_runtime& tools) {
  const std::string model = chat.upstream().model_id();
  if (req.stream) {
    sse_sink sink(out, model);
    req.body["stream_options"] = include_usage_option();
    auto r = co_await agent::run_tool_loop(chat, std::move(req.body), req.loop, tools, sink);
    if (r.client_gone) co_return;
    if (r.failure) {
      if (!out.started()) {
        co_await send_error(out, *r.failure);
      } else if (co_await out.write_stream(inband_error_frames(*r.failure))) {
        co_await out.end_stream();
      }
      co_return;
    }
    if (!co_await sink.open()) co_return;
    if (!co_await out.write_stream(sse_sink::frame(sink.chunk(json::object(), r.finish_reason)))) co_return;
    if (req.include_usage) {
      if (!co_await out.write_stream(sink.usage_frame(r.usage))) co_return;
    }
    if (co_await out.write_stream(sse::done_frame())) co_await out.end_stream();
    co_return;
  }
  null_sink sink;
  req.body["stream_options"] = include_usage_option();  // the loop streams from the upstream
  auto r = co_await agent::run_tool_loop(chat, std::move(req.body), req.loop, tools, sink);
  if (r.failure) {
    co_await send_error(out, *r.failure);
    co_return;
  }
  co_await out.send(200, "application/json", dump_safe(completion_body(model, r)));
}

}  // namespace

asio::awaitable<void> handle_chat_completions(const http_request& http, response_writer& out,
                                              agent::chat_service& chat, agent::tool_runtime* tools) {
  auto parsed = parse_chat_request(http.body);
  if (!parsed) {
    co_await send_error(out, parsed.error());
    co_return;
  }
  chat_request req = std::move(*parsed);
  const auto ceiling = tools ? tools->max_permission : agent::permission_mode::full;
  if (auto e = agent::check_permission_ceiling(req.loop, ceiling)) {
    co_await send_error(out, *e);
    co_return;
  }
  if (req.use_tool_loop) {
    if (!tools) {
      co_await send_error(out, make_error(errc::upstream_unavailable, "the tool loop is not available on this server"));
      co_return;
    }
    co_await run_loop(std::move(req), out, chat, *tools);
    co_return;
  }
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
