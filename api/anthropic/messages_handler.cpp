#include "api/anthropic/messages_handler.h"

#include <spdlog/spdlog.h>

#include <functional>

#include "api/anthropic/messages_request.h"
#include "api/anthropic/server_tools.h"
#include "api/anthropic/stream_render.h"
#include "api/wire/admission.h"
#include "api/wire/errors.h"
#include "common/ids.h"
#include "api/wire/loop_fields.h"
#include "engine/admission_queue.h"
#include "engine/context_fit.h"
#include "engine/external_provider.h"
#include "engine/healing.h"
#include "engine/stop_sequences.h"

namespace warden::api::anthropic {

namespace asio = boost::asio;

namespace {

/// Frames of one write at most this big: past it the batch goes out and the next one starts.
constexpr std::size_t k_batch_bytes = 64 * 1024;

/// Ends a response after a failure: a real status before the first byte, `event: error` after.
asio::awaitable<void> fail(response_writer& out, const error& e, const http_request& req) {
  if (!out.started()) {
    co_await wire::send_error(out, anthropic_surface(), e, req.request_id);
    co_return;
  }
  // Named locals, not a co_await inside an else-if condition: GCC 12 at -O3 compiled that form
  // of this coroutine into a trap (SIGILL) on resumption.
  std::string frames = wire::anthropic_inband_error_frames(e);
  const bool written = co_await out.write_stream(std::move(frames));
  if (written) co_await out.end_stream();
  co_return;
}

std::vector<std::string> tool_names(const anthropic_deps& deps) {
  return deps.tools ? deps.tools->tools.names() : std::vector<std::string>{};
}

/// The route's own admission rule for server tools (wire/admission.h step 5): no confirmation channel.
std::optional<error> server_tool_rule(const agent::loop_options& o, const tools::registry& reg) {
  std::vector<selected_tool> selected;
  for (const tools::tool* t : o.selected(reg)) selected.push_back(selected_tool{t->info().name, t->info().traits.runs_code, agent::always_safe_tool(t->info().traits)});
  return messages_gate(o.gate, selected);
}

std::string served_model(const engine::chat_backend& backend, const messages_request& r) {
  std::string id = backend.model_id();
  return id.empty() ? r.model : id;
}

/// Opens the SSE response with message_start, once.
asio::awaitable<bool> open_stream(response_writer& out, const message_builder& msg) {
  if (out.started()) co_return true;
  if (!co_await out.begin_stream()) co_return false;
  const bool ok = co_await out.write_stream(msg.start_frame());
  co_return ok;
}

/// Client path: one model turn rendered as it arrives (or collected when not streaming).
asio::awaitable<void> run_turn(messages_request r, const http_request& http, response_writer& out, anthropic_deps& deps,
                               engine::chat_backend& base) {
  engine::context_fitting_backend fitting(base, r.loop.context_overflow);
  engine::healing_backend healing(fitting, wire::names_to_heal(r.loop, r.conv, deps.heal_tool_calls));
  engine::stop_sequence_backend backend(healing, r.stop_sequences);
  message_builder msg(ids::new_id(ids::kind::message), served_model(base, r));
  // While the upstream has not answered (a long prompt on a CPU), a stream opens and pings, so
  // clients and proxies see a live connection; a quick failure still gets a real status.
  const bool stream = r.stream;
  std::function<asio::awaitable<bool>()> on_silence = [&out, &msg, stream]() -> asio::awaitable<bool> {
    if (!stream) co_return true;
    if (!co_await open_stream(out, msg)) co_return false;
    const bool ok = co_await out.write_stream(ping_frame());
    co_return ok;
  };
  auto opened = co_await backend.open_turn(r.conv, nullptr, on_silence);
  if (!opened) {
    co_await fail(out, opened.error(), http);
    co_return;
  }
  std::unique_ptr<engine::chat_turn> turn = std::move(*opened);
  if (r.stream && !co_await open_stream(out, msg)) co_return;
  // Every frame that is ready goes out in one write; nothing waits for frames not arrived yet.
  std::string batch;
  while (auto ev = co_await turn->next()) {
    std::string frames = msg.on_model_event(*ev);
    if (!r.stream) continue;
    batch += frames;
    if (batch.empty() || (batch.size() < k_batch_bytes && turn->poll_ready())) continue;
    const bool written = co_await out.write_stream(std::move(batch));  // not inside &&: GCC 12 coroutines
    batch = std::string();
    if (!written) co_return;
  }
  if (!batch.empty()) {
    const bool written = co_await out.write_stream(std::move(batch));
    if (!written) co_return;
  }
  if (msg.failure()) {
    spdlog::warn("anthropic messages: upstream failed: {}", msg.failure()->message);
    co_await fail(out, *msg.failure(), http);
    co_return;
  }
  const std::string reason = stop_reason_for(msg.finish().value_or(model::finish_reason::stop), msg.had_tool_use(),
                                             !backend.matched().empty());
  if (!r.stream) {
    std::string body = dump_safe(msg.message(reason, backend.matched(), msg.usage()));
    co_await out.send(200, "application/json", std::move(body));
    co_return;
  }
  std::string last = msg.finish_frames(reason, backend.matched(), msg.usage());
  const bool written = co_await out.write_stream(std::move(last));
  if (written) co_await out.end_stream();
  co_return;
}

/// Renders tool-loop events; streaming opens the response on the first event.
class message_sink : public agent::loop_sink {
 public:
  message_sink(response_writer& out, message_builder& msg, bool stream) : out_(out), msg_(msg), stream_(stream) {}
  asio::awaitable<bool> open() {
    if (!stream_) co_return true;
    const bool ok = co_await open_stream(out_, msg_);
    co_return ok;
  }
  asio::awaitable<bool> emit(agent::loop_event ev) override {
    std::string frames = msg_.on_loop_event(ev);
    if (!stream_) co_return true;
    if (!co_await open()) co_return false;
    if (frames.empty()) co_return true;
    const bool ok = co_await out_.write_stream(std::move(frames));
    co_return ok;
  }

 private:
  response_writer& out_;
  message_builder& msg_;
  bool stream_;
};

/// Server-tool path: warden's tool loop.
asio::awaitable<void> run_loop(messages_request r, const http_request& http, response_writer& out, anthropic_deps& deps,
                               engine::chat_backend& base) {
  engine::stop_sequence_backend backend(base, r.stop_sequences);
  message_builder msg(ids::new_id(ids::kind::message), served_model(base, r));
  message_sink sink(out, msg, r.stream);
  auto res = co_await agent::run_tool_loop(backend, std::move(r.conv), r.loop, *deps.tools, sink);
  if (res.client_gone) co_return;
  if (res.failure) {
    co_await fail(out, *res.failure, http);
    co_return;
  }
  const std::string reason = stop_reason_for(res.finish_reason, false, !backend.matched().empty());
  if (!r.stream) {
    std::string body = dump_safe(msg.message(reason, backend.matched(), res.usage));
    co_await out.send(200, "application/json", std::move(body));
    co_return;
  }
  if (!co_await sink.open()) co_return;
  std::string last = msg.finish_frames(reason, backend.matched(), res.usage);
  const bool written = co_await out.write_stream(std::move(last));
  if (written) co_await out.end_stream();
  co_return;
}

}  // namespace

wire::admission admit_messages(const messages_request& r, const agent::tool_runtime* tools) {
  wire::admission_options o;
  o.rule = &server_tool_rule;
  return wire::admit(r.loop, tools, o);
}

asio::awaitable<void> handle_messages(const http_request& http, response_writer& out, anthropic_deps& deps) {
  const std::vector<std::string> names = tool_names(deps);
  auto parsed = parse_messages_request(http.body, names);
  if (!parsed) {
    co_await wire::send_error(out, anthropic_surface(), parsed.error(), http.request_id);
    co_return;
  }
  parsed->loop.owner = http.caller.name;  // the API key's, never the body's (common/principal.h)
  parsed->loop.may_bypass = http.caller.admin();
  const wire::admission verdict = admit_messages(*parsed, deps.tools);
  if (verdict.refusal) {
    co_await wire::send_error(out, anthropic_surface(), *verdict.refusal, http.request_id);
    co_return;
  }
  verdict.apply(parsed->loop);
  // The local engine behind its admission queue (engine/admission_queue.h), or an external
  // provider (engine/external_provider.h), which has no queue here.
  std::unique_ptr<engine::provider_engine> provider;
  if (parsed->provider) {
    const wire::provider_choice& c = *parsed->provider;
    std::string model = c.external_model.empty() ? parsed->model : c.external_model;  // named: GCC 12 coroutines
    auto pe = co_await engine::resolve_provider(deps.providers, c.id, c.type, std::move(model), http.caller.name);
    if (!pe) {
      co_await wire::send_error(out, anthropic_surface(), pe.error(), http.request_id);
      co_return;
    }
    provider = std::move(*pe);
  }
  engine::admitting_backend admitted(deps.backend, deps.admission, http.caller.name, wire::retry_after_on(out));
  engine::chat_backend& base = provider ? provider->backend() : admitted;
  if (parsed->loop.enable_tools) {
    co_await run_loop(std::move(*parsed), http, out, deps, base);
  } else {
    co_await run_turn(std::move(*parsed), http, out, deps, base);
  }
  co_return;
}

asio::awaitable<void> handle_count_tokens(const http_request& http, response_writer& out, anthropic_deps& deps) {
  const std::vector<std::string> names = tool_names(deps);
  auto parsed = parse_messages_request(http.body, names, body_kind::count_tokens);
  if (!parsed) {
    co_await wire::send_error(out, anthropic_surface(), parsed.error(), http.request_id);
    co_return;
  }
  if (parsed->loop.enable_tools && deps.tools) {
    for (const tools::tool* t : parsed->loop.selected(deps.tools->tools)) parsed->conv.tools.push_back(t->info().spec());
  }
  auto n = co_await deps.backend.count_prompt_tokens(parsed->conv);
  if (!n) {
    co_await wire::send_error(out, anthropic_surface(), n.error(), http.request_id);
    co_return;
  }
  json answer = json::object();
  answer["input_tokens"] = *n;
  co_await out.send(200, "application/json", dump_safe(answer));
}

const surface& anthropic_surface() {
  static const surface s{"anthropic", &wire::anthropic_error_body, &wire::anthropic_inband_error_frames};
  return s;
}

std::vector<route> routes(anthropic_deps& deps) {
  const surface* s = &anthropic_surface();
  auto messages = [&deps](const http_request& req, response_writer& out) -> asio::awaitable<void> {
    co_await handle_messages(req, out, deps);
  };
  auto count = [&deps](const http_request& req, response_writer& out) -> asio::awaitable<void> {
    co_await handle_count_tokens(req, out, deps);
  };
  auto unknown = [](const http_request& req, response_writer& out) -> asio::awaitable<void> {
    const error e = make_error(errc::not_found, "no route for " + req.method + " " + req.path.substr(0, 200) +
                                                    "; this surface serves /v1/messages and /v1/messages/count_tokens",
                               "", "unknown_route");
    co_await wire::send_error(out, anthropic_surface(), e, req.request_id);
  };
  return {
      {"POST", "/v1/messages", false, auth_policy::api_key, s, messages},
      {"POST", "/v1/messages/count_tokens", false, auth_policy::api_key, s, count},
      {"POST", "/v1/messages/", true, auth_policy::api_key, s, unknown},  // anything else under it: 404 in this dialect
  };
}

}  // namespace warden::api::anthropic
