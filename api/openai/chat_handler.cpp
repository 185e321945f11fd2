#include "api/openai/chat_handler.h"

#include <spdlog/spdlog.h>

#include "api/openai/chat_request.h"
#include "api/openai/convert.h"
#include "api/openai/stream_render.h"
#include "api/wire/admission.h"
#include "api/wire/errors.h"
#include "api/wire/loop_fields.h"
#include "api/wire/control_frames.h"
#include "engine/admission_queue.h"
#include "engine/context_fit.h"
#include "engine/external_provider.h"
#include "engine/healing.h"
#include "common/ids.h"
#include "common/sse.h"

#include <chrono>
#include <functional>
#include <map>

namespace warden::api::openai {

namespace asio = boost::asio;

namespace {

/// Where a pool of engines sends `req` (engine/engine_pool.h): by its model and session_id.
model::routing route_of(const chat_request& req) {
  model::routing r;
  if (auto it = req.body.find("model"); it != req.body.end() && it->is_string()) r.model = it->get<std::string>();
  r.follow = req.loop.session_id;
  if (!r.follow.empty()) r.record.push_back(r.follow);
  return r;
}

/// The typed request of `req` (its body is moved out), with its routing.
result<model::chat_request> routed_request(chat_request& req) {
  model::routing route = route_of(req);
  auto conv = to_model_request(std::move(req.body));
  if (conv) conv->route = std::move(route);
  return conv;
}

engine::route_hint hint_of(const chat_request& req) {
  model::routing r = route_of(req);
  return engine::route_hint{std::move(r.follow), std::move(r.record)};
}

/// Frames of one write at most this big: past it the batch goes out and the next one starts.
constexpr std::size_t k_batch_bytes = 64 * 1024;

/// Appends the SSE frames of `ev` to `batch`; true when the stream is over (finished or failed,
/// its last frames appended).
bool add_frames(const engine::chat_event& ev, bool include_usage, std::string& batch, const char* what) {
  switch (ev.type) {
    case engine::chat_event::kind::chunk: {
      // A usage-only chunk (choices: []) goes out only when the client asked for it.
      auto ch = ev.parsed.find("choices");
      const bool usage_only = ch != ev.parsed.end() && ch->is_array() && ch->empty() && ev.parsed.contains("usage");
      if (usage_only && !include_usage) return false;
      batch += "data: ";
      batch += ev.raw;
      batch += "\n\n";
      return false;
    }
    case engine::chat_event::kind::ping:
      batch += sse::comment_frame("ping");
      return false;
    case engine::chat_event::kind::failed:
      spdlog::warn("{} stream failed after start: {}", what, ev.failure->message);
      batch += wire::openai_inband_error_frames(*ev.failure);
      return true;
    case engine::chat_event::kind::finished:
      batch += sse::done_frame();
      return true;
  }
  return true;
}

}  // namespace

// Every frame that is ready when one arrives (a read of the upstream often holds many) goes out
// in one write; nothing waits for frames that have not arrived.
asio::awaitable<void> forward_stream(std::unique_ptr<engine::chat_stream> stream, bool include_usage,
                                     response_writer& out, const char* what) {
  if (!out.started()) {  // a queued request's keep-alive may have opened it
    const bool begun = co_await out.begin_stream();
    if (!begun) co_return;
  }
  std::string batch;
  while (true) {
    engine::chat_event ev = co_await stream->next();
    bool over = add_frames(ev, include_usage, batch, what);
    while (!over && batch.size() < k_batch_bytes) {
      auto more = stream->try_next();
      if (!more) break;
      over = add_frames(*more, include_usage, batch, what);
    }
    if (!batch.empty()) {
      const bool written = co_await out.write_stream(std::move(batch));  // not inside &&: GCC 12 coroutines
      batch = std::string();
      if (!written) co_return;
    }
    if (over) {
      co_await out.end_stream();
      co_return;
    }
  }
}

std::function<asio::awaitable<bool>()> sse_keep_alive(response_writer& out) {
  return [&out]() -> asio::awaitable<bool> {
    if (!out.started()) {
      const bool begun = co_await out.begin_stream();
      if (!begun) co_return false;
    }
    const bool ok = co_await out.write_stream(sse::comment_frame("ping"));
    co_return ok;
  };
}

asio::awaitable<void> fail_stream(response_writer& out, const error& e) {
  if (!out.started()) {
    co_await wire::send_error(out, openai_surface(), e);
    co_return;
  }
  std::string frames = wire::openai_inband_error_frames(e);
  const bool written = co_await out.write_stream(std::move(frames));
  if (written) co_await out.end_stream();
}

asio::awaitable<result<std::shared_ptr<void>>> take_slot(const std::shared_ptr<engine::admission_queue>& queue,
                                                         const http_request& http, response_writer& out,
                                                         std::function<asio::awaitable<bool>()> keep_alive) {
  if (!queue) co_return std::shared_ptr<void>();
  auto got = co_await queue->acquire(http.caller.name, false, std::move(keep_alive), nullptr);
  const bool refused = !got && (got.error().code == errc::too_many_requests || got.error().type_code == "queue_timeout");
  if (refused) wire::retry_after_on(out)(queue->retry_after_s());
  co_return std::move(got);
}

namespace {

/// The byte-for-byte relay of a streamed request to `chat` (the local engine, behind `queue`, or an
/// external provider, with no queue).
asio::awaitable<void> stream_chat(chat_request req, response_writer& out, const http_request& http,
                                  engine::chat_service& chat, std::shared_ptr<engine::admission_queue> queue) {
  std::function<asio::awaitable<bool>()> ping = sse_keep_alive(out);
  auto slot = co_await take_slot(queue, http, out, ping);
  if (!slot) {
    co_await fail_stream(out, slot.error());
    co_return;
  }
  engine::route_hint route = hint_of(req);
  auto opened = co_await chat.open_stream(std::move(req.body), nullptr, ping, std::move(route));
  if (!opened) {
    co_await fail_stream(out, opened.error());
    co_return;
  }
  co_await forward_stream(std::move(*opened), req.include_usage, out, "chat");
}

std::string completion_id() { return ids::new_id(ids::kind::completion); }

long long unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

json completion_body(const std::string& model, const agent::loop_result& r) {
  json body = {{"id", completion_id()},
               {"object", "chat.completion"},
               {"created", unix_now()},
               {"model", model},
               {"choices", json::array({{{"index", 0},
                                         {"message", {{"role", "assistant"}, {"content", r.final_text}}},
                                         {"finish_reason", model::to_string(r.finish_reason)}}})}};
  if (r.usage) body["usage"] = usage_json(*r.usage);
  if (r.truncated) body["context_truncated"] = wire::truncation_json(*r.truncated);
  return body;
}

/// Writes the tool loop's events as SSE frames; opens the stream on the first event.
class sse_sink : public agent::loop_sink {
 public:
  sse_sink(response_writer& out, std::string model) : out_(out), render_(completion_id(), unix_now(), std::move(model)) {}

  asio::awaitable<bool> open() {
    if (out_.started()) co_return true;
    if (!co_await out_.begin_stream()) co_return false;
    const bool ok = co_await out_.write_stream(render_.role_frame());
    co_return ok;
  }
  asio::awaitable<bool> emit(agent::loop_event ev) override {
    if (!co_await open()) co_return false;
    const bool ok = co_await out_.write_stream(render_.frame(ev));
    co_return ok;
  }
  const chunk_renderer& render() const { return render_; }

 private:
  response_writer& out_;
  chunk_renderer render_;
};

/// Non-streaming: events are dropped (the answer is the last turn's text).
class null_sink : public agent::loop_sink {
 public:
  asio::awaitable<bool> emit(agent::loop_event) override { co_return true; }
};

asio::awaitable<void> finish_stream(const agent::loop_result& r, bool include_usage, sse_sink& sink, response_writer& out) {
  if (r.client_gone) co_return;
  if (r.failure) {
    if (!out.started()) {
      co_await wire::send_error(out, openai_surface(), *r.failure);
    } else if (co_await out.write_stream(wire::openai_inband_error_frames(*r.failure))) {
      co_await out.end_stream();
    }
    co_return;
  }
  if (!co_await sink.open()) co_return;
  if (!co_await out.write_stream(sink.render().finish_frame(r.finish_reason))) co_return;
  if (include_usage) {
    std::string usage = sink.render().usage_frame(r.usage);
    if (!co_await out.write_stream(std::move(usage))) co_return;
  }
  if (co_await out.write_stream(sse::done_frame())) co_await out.end_stream();
}

// The handlers below keep their frames small: a stream parked on an approval holds every frame
// of its chain until the answer comes (a coroutine frame holds all its locals, and the
// temporaries of each co_await, for its whole life; issue 23's memory target). So each branch is
// a coroutine of its own, and the request is passed down by reference.

asio::awaitable<void> stream_loop(chat_request& req, response_writer& out, openai_deps& deps,
                                  engine::chat_backend& backend) {
  auto conv = routed_request(req);
  if (!conv) {
    co_await wire::send_error(out, openai_surface(), conv.error());
    co_return;
  }
  sse_sink sink(out, backend.model_id());
  auto r = co_await agent::run_tool_loop(backend, std::move(*conv), req.loop, *deps.tools, sink);
  co_await finish_stream(r, req.include_usage, sink, out);
}

asio::awaitable<void> plain_loop(chat_request& req, response_writer& out, openai_deps& deps,
                                 engine::chat_backend& backend) {
  auto conv = routed_request(req);
  if (!conv) {
    co_await wire::send_error(out, openai_surface(), conv.error());
    co_return;
  }
  const std::string model = backend.model_id();
  null_sink sink;
  auto r = co_await agent::run_tool_loop(backend, std::move(*conv), req.loop, *deps.tools, sink);
  if (r.failure) {
    co_await wire::send_error(out, openai_surface(), *r.failure);
    co_return;
  }
  co_await out.send(200, "application/json", dump_safe(completion_body(model, r)));
}

asio::awaitable<void> complete_chat(chat_request& req, response_writer& out, const http_request& http,
                                    engine::chat_service& chat, std::shared_ptr<engine::admission_queue> queue) {
  auto slot = co_await take_slot(queue, http, out, nullptr);
  if (!slot) {
    co_await wire::send_error(out, openai_surface(), slot.error());
    co_return;
  }
  engine::route_hint route = hint_of(req);
  auto done = co_await chat.complete(std::move(req.body), std::move(route));
  if (!done) {
    co_await wire::send_error(out, openai_surface(), done.error());
    co_return;
  }
  co_await out.send(200, "application/json", dump_safe(*done));
}

/// A client's own tools with healing on (engine/healing.h): its turn goes through the typed
/// core, so calls the model wrote as text reach the client as tool_calls.
/// Whether the request goes through the typed turn (healed_chat) rather than the byte-for-byte
/// relay: it heals calls written as text, or may drop messages to fit the context.
bool heals(const chat_request& req, const openai_deps& deps) {
  if (req.loop.context_overflow != model::overflow_policy::error) return true;
  if (!req.loop.heal_tool_calls.value_or(deps.heal_tool_calls)) return false;
  auto t = req.body.find("tools");
  return t != req.body.end() && t->is_array() && !t->empty();
}

/// What a healed non-streaming turn comes to.
struct collected_turn {
  std::string text, reasoning;
  std::map<std::size_t, json> calls;  ///< by index: {id, type, function {name, arguments}}
  std::optional<model::finish_reason> finish;
  std::optional<model::usage> usage;
  std::optional<error> failure;
  std::optional<model::context_truncated> truncated;

  void take(const model::stream_event& ev) {
    if (const auto* c = std::get_if<model::context_truncated>(&ev)) truncated = *c;
    if (const auto* t = std::get_if<model::text_delta>(&ev)) text += t->text;
    if (const auto* r = std::get_if<model::reasoning_delta>(&ev)) reasoning += r->text;
    if (const auto* s = std::get_if<model::tool_call_started>(&ev)) {
      json& c = calls[s->index];
      if (c.is_null()) c = {{"id", s->id}, {"type", "function"}, {"function", {{"name", ""}, {"arguments", ""}}}};
      c["function"]["name"] = c["function"]["name"].get<std::string>() + s->name;
    }
    if (const auto* a = std::get_if<model::tool_call_arguments_delta>(&ev)) {
      json& c = calls[a->index];
      if (c.is_null()) c = {{"id", ""}, {"type", "function"}, {"function", {{"name", ""}, {"arguments", ""}}}};
      c["function"]["arguments"] = c["function"]["arguments"].get<std::string>() + a->fragment;
    }
    if (const auto* f = std::get_if<model::finish_event>(&ev)) finish = f->reason;
    if (const auto* u = std::get_if<model::usage_event>(&ev)) usage = u->usage;
    if (const auto* e = std::get_if<model::error_event>(&ev)) failure = e->failure;
  }

  json body(const std::string& model) const {
    json message = {{"role", "assistant"}, {"content", text.empty() && !calls.empty() ? json() : json(text)}};
    if (!reasoning.empty()) message["reasoning_content"] = reasoning;
    if (!calls.empty()) {
      message["tool_calls"] = json::array();
      for (const auto& [i, c] : calls) message["tool_calls"].push_back(c);
    }
    json b = {{"id", completion_id()},
              {"object", "chat.completion"},
              {"created", unix_now()},
              {"model", model},
              {"choices", json::array({{{"index", 0}, {"message", std::move(message)},
                                        {"finish_reason", model::to_string(finish.value_or(model::finish_reason::stop))}}})}};
    if (usage) b["usage"] = usage_json(*usage);
    if (truncated) b["context_truncated"] = wire::truncation_json(*truncated);
    return b;
  }
};

/// Writes a healed turn's events as chunks, every ready frame in one write, then the usage chunk
/// (when asked for) and [DONE]; an upstream failure ends it with an in-band error.
asio::awaitable<void> stream_turn(engine::chat_turn& turn, const chunk_renderer& render, bool include_usage,
                                  response_writer& out) {
  std::string batch;
  std::optional<model::usage> usage;
  while (auto ev = co_await turn.next()) {
    if (const auto* e = std::get_if<model::error_event>(&*ev)) {
      spdlog::warn("chat stream failed after start: {}", e->failure.message);
      batch += wire::openai_inband_error_frames(e->failure);
      const bool written = co_await out.write_stream(std::move(batch));
      if (written) co_await out.end_stream();
      co_return;
    }
    if (const auto* f = std::get_if<model::finish_event>(&*ev)) batch += render.finish_frame(f->reason);
    if (const auto* u = std::get_if<model::usage_event>(&*ev)) usage = u->usage;
    batch += render.model_frame(*ev);
    if (batch.empty() || (batch.size() < k_batch_bytes && turn.poll_ready())) continue;
    const bool written = co_await out.write_stream(std::move(batch));  // not inside &&: GCC 12 coroutines
    batch = std::string();
    if (!written) co_return;
  }
  if (include_usage) batch += render.usage_frame(usage);
  batch += sse::done_frame();
  const bool written = co_await out.write_stream(std::move(batch));
  if (written) co_await out.end_stream();
}

/// Opens the stream with the role chunk, once. Named locals, no co_await inside && or an
/// else-if condition: GCC 12 at -O3 miscompiles those forms in coroutines (messages_handler.cpp).
asio::awaitable<bool> open_chunks(response_writer& out, const chunk_renderer& render) {
  if (out.started()) co_return true;
  const bool begun = co_await out.begin_stream();
  if (!begun) co_return false;
  const bool ok = co_await out.write_stream(render.role_frame());
  co_return ok;
}

asio::awaitable<void> healed_chat(chat_request& req, response_writer& out, openai_deps& deps,
                                  engine::chat_backend& backend) {
  auto conv = routed_request(req);
  if (!conv) {
    co_await wire::send_error(out, openai_surface(), conv.error());
    co_return;
  }
  engine::context_fitting_backend fitting(backend, req.loop.context_overflow);
  engine::healing_backend healing(fitting, wire::names_to_heal(req.loop, *conv, deps.heal_tool_calls));
  const chunk_renderer render(completion_id(), unix_now(), backend.model_id());
  const bool stream = req.stream;
  // While the upstream has not answered, a stream opens and pings (as the raw path does).
  std::function<asio::awaitable<bool>()> on_silence = [&out, &render, stream]() -> asio::awaitable<bool> {
    if (!stream) co_return true;
    const bool open = co_await open_chunks(out, render);
    if (!open) co_return false;
    const bool ok = co_await out.write_stream(sse::comment_frame("ping"));
    co_return ok;
  };
  auto opened = co_await healing.open_turn(*conv, nullptr, on_silence);
  if (!opened) {
    co_await fail_stream(out, opened.error());
    co_return;
  }
  if (stream) {
    const bool open = co_await open_chunks(out, render);
    if (!open) co_return;
    co_await stream_turn(**opened, render, req.include_usage, out);
    co_return;
  }
  collected_turn got;
  while (auto ev = co_await (*opened)->next()) got.take(*ev);
  if (got.failure) {
    co_await wire::send_error(out, openai_surface(), *got.failure);
    co_return;
  }
  co_await out.send(200, "application/json", dump_safe(got.body(backend.model_id())));
}

/// One chat request on `backend` (typed turns) and `chat` (the relay) behind `queue` (null: none).
asio::awaitable<void> serve_chat(chat_request& req, const http_request& http, response_writer& out, openai_deps& deps,
                                 engine::chat_backend& backend, engine::chat_service& chat,
                                 std::shared_ptr<engine::admission_queue> queue) {
  if (req.use_tool_loop && req.stream) {
    co_await stream_loop(req, out, deps, backend);
  } else if (req.use_tool_loop) {
    co_await plain_loop(req, out, deps, backend);
  } else if (heals(req, deps)) {
    co_await healed_chat(req, out, deps, backend);
  } else if (req.stream) {
    co_await stream_chat(std::move(req), out, http, chat, std::move(queue));
  } else {
    co_await complete_chat(req, out, http, chat, std::move(queue));
  }
}

/// A request for an external provider (api/wire/provider_fields.h): resolved for its owner, then
/// served as a local one but on the provider's engine, with no admission queue (the provider's
/// capacity is its own).
asio::awaitable<void> provider_chat(chat_request& req, const http_request& http, response_writer& out,
                                    openai_deps& deps) {
  const wire::provider_choice& c = *req.provider;
  // Named first: no temporaries (and no ?:) inside a co_await (GCC 12 coroutines).
  auto sent = req.body.find("model");
  std::string model = !c.external_model.empty()                    ? c.external_model
                      : sent != req.body.end() && sent->is_string() ? sent->get<std::string>()
                                                                     : std::string();
  auto pe = co_await engine::resolve_provider(deps.providers, c.id, c.type, std::move(model), http.caller.name);
  if (!pe) {
    co_await wire::send_error(out, openai_surface(), pe.error());
    co_return;
  }
  engine::provider_engine& engine = **pe;
  co_await serve_chat(req, http, out, deps, engine.backend(), engine.chat(), nullptr);
}

}  // namespace

wire::admission admit_chat(const chat_request& req, const agent::tool_runtime* tools) {
  return wire::admit(req.loop, tools, wire::admission_options{});
}

namespace {

/// The request parsed, its owner set from the caller, and admitted (no I/O); or the error to send.
result<chat_request> admitted_chat(const http_request& http, const agent::tool_runtime* tools) {
  const std::vector<std::string> names = tools ? tools->tools.names() : std::vector<std::string>{};
  auto parsed = parse_chat_request(http.body, names);
  if (!parsed) return parsed;
  chat_request& req = *parsed;
  req.loop.owner = http.caller.name;  // the API key's, never the body's (common/principal.h)
  req.loop.may_bypass = http.caller.admin();
  const wire::admission verdict = admit_chat(req, tools);
  if (verdict.refusal) return *verdict.refusal;
  verdict.apply(req.loop);
  return parsed;
}

}  // namespace

asio::awaitable<void> handle_chat_completions(const http_request& http, response_writer& out, openai_deps& deps) {
  auto req = admitted_chat(http, deps.tools);
  if (!req) {
    co_await wire::send_error(out, openai_surface(), req.error());
    co_return;
  }
  if (req->provider) {
    co_await provider_chat(*req, http, out, deps);
    co_return;
  }
  // Every model turn of the request takes a slot of the engine's admission queue first.
  engine::admitting_backend admitted(deps.backend, deps.admission, http.caller.name, wire::retry_after_on(out));
  co_await serve_chat(*req, http, out, deps, admitted, deps.chat, deps.admission);
}

asio::awaitable<void> handle_library_models(const http_request& req, response_writer& out, openai_deps& deps) {
  auto listed = deps.model_list;  // named: no capturing temporary inside co_await (GCC 12)
  json list = co_await deps.pool->run_blocking(listed);
  const std::string prefix = "/v1/models/";
  if (req.path.rfind(prefix, 0) != 0) {
    std::string body = dump_safe(list);
    co_await out.send(200, "application/json", std::move(body));
    co_return;
  }
  const std::string id = req.path.substr(prefix.size());
  for (const auto& m : list.value("data", json::array())) {
    if (m.value("id", "") == id) {
      std::string body = dump_safe(m);
      co_await out.send(200, "application/json", std::move(body));
      co_return;
    }
  }
  const error e = make_error(errc::not_found, "model '" + id + "' not found (GET /v1/models lists them)", "model",
                             "model_not_found");
  co_await wire::send_error(out, openai_surface(), e);
}

asio::awaitable<void> handle_models(const http_request& req, response_writer& out,
                                    const std::string& model_id, long long created_s) {
  json model = {{"id", model_id}, {"object", "model"}, {"created", created_s}, {"owned_by", "warden"}};
  const std::string prefix = "/v1/models/";
  if (req.path.rfind(prefix, 0) == 0) {
    const std::string id = req.path.substr(prefix.size());
    if (id != model_id) {
      const error e = make_error(errc::not_found, "model '" + id + "' not found; this server serves '" + model_id + "'",
                                 "model", "model_not_found");
      co_await wire::send_error(out, openai_surface(), e);
      co_return;
    }
    co_await out.send(200, "application/json", dump_safe(model));
    co_return;
  }
  json list = {{"object", "list"}, {"data", json::array({model})}};
  co_await out.send(200, "application/json", dump_safe(list));
}

}  // namespace warden::api::openai

namespace warden::api::openai {

const surface& openai_surface() {
  static const surface s{"openai", [](const error& e, std::string_view) { return wire::openai_error_body(e); },
                         &wire::openai_inband_error_frames};
  return s;
}

std::vector<route> routes(openai_deps& deps) {
  const surface* s = &openai_surface();
  auto chat = [&deps](const http_request& req, response_writer& out) -> asio::awaitable<void> {
    co_await handle_chat_completions(req, out, deps);
  };
  auto models = [&deps](const http_request& req, response_writer& out) -> asio::awaitable<void> {
    if (deps.model_list && deps.pool) {
      co_await handle_library_models(req, out, deps);
      co_return;
    }
    const std::string id = deps.backend.model_id();
    if (id.empty()) {  // an upstream that has not answered yet: no model to name
      co_await wire::send_error(out, openai_surface(), make_error(errc::upstream_unavailable, deps.chat.upstream().status_message()));
      co_return;
    }
    co_await handle_models(req, out, id, deps.started_unix_s);
  };
  return {
      {"POST", "/v1/chat/completions", false, auth_policy::api_key, s, chat},
      {"GET", "/v1/models", false, auth_policy::api_key, s, models},
      {"GET", "/v1/models/", true, auth_policy::api_key, s, models},
  };
}

}  // namespace warden::api::openai
