#include "api/openai/stream_render.h"

#include "api/wire/control_frames.h"
#include "common/sse.h"

namespace warden::api::openai {

namespace {

std::string data_frame(const json& j) { return "data: " + dump_safe(j) + "\n\n"; }

}  // namespace

json usage_json(const model::usage& u) {
  return json{{"prompt_tokens", u.prompt_tokens}, {"completion_tokens", u.completion_tokens}, {"total_tokens", u.total_tokens}};
}

json chunk_renderer::chunk(json delta, json finish_reason) const {
  return {{"id", id_},
          {"object", "chat.completion.chunk"},
          {"created", created_},
          {"model", model_},
          {"choices", json::array({{{"index", 0}, {"delta", std::move(delta)}, {"finish_reason", std::move(finish_reason)}}})}};
}

std::string chunk_renderer::role_frame() const { return data_frame(chunk({{"role", "assistant"}, {"content", ""}})); }

std::string chunk_renderer::frame(const agent::loop_event& ev) const {
  if (const auto* t = std::get_if<model::text_delta>(&ev)) return data_frame(chunk({{"content", t->text}}));
  if (const auto* r = std::get_if<model::reasoning_delta>(&ev)) return data_frame(chunk({{"reasoning_content", r->text}}));
  if (std::holds_alternative<model::ping_event>(ev)) return sse::comment_frame("ping");
  if (const auto* c = std::get_if<model::context_truncated>(&ev)) return truncation_frame(*c);
  return data_frame(wire::control_json(ev));
}

std::string chunk_renderer::model_frame(const model::stream_event& ev) const {
  if (const auto* t = std::get_if<model::text_delta>(&ev)) return data_frame(chunk({{"content", t->text}}));
  if (const auto* r = std::get_if<model::reasoning_delta>(&ev)) return data_frame(chunk({{"reasoning_content", r->text}}));
  if (const auto* s = std::get_if<model::tool_call_started>(&ev)) {
    json call = {{"index", s->index}, {"id", s->id}, {"type", "function"}, {"function", {{"name", s->name}, {"arguments", ""}}}};
    return data_frame(chunk({{"tool_calls", json::array({std::move(call)})}}));
  }
  if (const auto* a = std::get_if<model::tool_call_arguments_delta>(&ev)) {
    json call = {{"index", a->index}, {"function", {{"arguments", a->fragment}}}};
    return data_frame(chunk({{"tool_calls", json::array({std::move(call)})}}));
  }
  if (std::holds_alternative<model::ping_event>(ev)) return sse::comment_frame("ping");
  if (const auto* c = std::get_if<model::context_truncated>(&ev)) return truncation_frame(*c);
  return "";
}

std::string chunk_renderer::truncation_frame(const model::context_truncated& t) const {
  json c = chunk(json::object());
  c["choices"] = json::array();
  c["context_truncated"] = wire::truncation_json(t);
  return data_frame(c);
}

std::string chunk_renderer::finish_frame(model::finish_reason reason) const {
  return data_frame(chunk(json::object(), model::to_string(reason)));
}

std::string chunk_renderer::usage_frame(const std::optional<model::usage>& usage) const {
  json u = chunk(json::object());
  u["choices"] = json::array();
  u["usage"] = usage_json(usage.value_or(model::usage{}));
  return data_frame(u);
}

}  // namespace warden::api::openai
