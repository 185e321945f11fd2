#include "api/responses/run_paths.h"

#include <spdlog/spdlog.h>

#include <functional>
#include <iterator>
#include <utility>

#include "agent/call_plan.h"
#include "api/responses/parking.h"
#include "api/wire/errors.h"
#include "api/wire/loop_fields.h"
#include "engine/context_fit.h"
#include "engine/healing.h"
#include "model/serialize.h"

namespace warden::api::responses {

namespace asio = boost::asio;

/// The conversation sent to the model: instructions, history, the new input.
model::chat_request conversation(const run_state& st) {
  model::chat_request c = st.req.conv;
  c.messages.clear();
  // A pool of engines keeps a previous_response_id chain (or a session) on one engine.
  c.route.model = st.req.model;
  c.route.follow = !st.req.previous_response_id.empty() ? st.req.previous_response_id : st.req.loop.session_id;
  c.route.record = {st.id};
  if (!st.req.loop.session_id.empty()) c.route.record.push_back(st.req.loop.session_id);
  if (!st.req.instructions.empty()) {
    model::message sys;
    sys.role = model::role::system;
    sys.content.emplace_back(model::text_part{st.req.instructions});
    c.messages.push_back(std::move(sys));
  }
  c.messages.insert(c.messages.end(), st.history.begin(), st.history.end());
  c.messages.insert(c.messages.end(), st.req.input.messages.begin(), st.req.input.messages.end());
  return c;
}

response_settings settings_of(const run_state& st, const responses_deps& deps) {
  std::string model = st.provider ? st.provider->backend().model_id() : deps.backend.model_id();
  return response_settings{model.empty() ? st.req.model : model, st.req.previous_response_id,
                           st.req.store && deps.store != nullptr, false, st.req.echo, st.req.namespaced};
}

namespace {

/// Events of one write at most (a few hundred bytes each): past it the batch goes out.
constexpr std::size_t k_batch_events = 64;

/// Keeps the finished response (store: true).
asio::awaitable<void> save(const run_state& st, const response_builder& b, std::vector<model::message> conv,
                           std::string pending, responses_deps& deps) {
  if (!st.req.store || !deps.store) co_return;
  store::stored_response row;
  row.id = b.id();
  row.created_at = st.created;
  row.updated_at = unix_s_now();
  row.status = b.status();
  row.previous_id = st.req.previous_response_id;
  row.owner = st.req.loop.owner;
  row.session = st.req.loop.session_id;
  row.response_json = dump_safe(b.response());
  row.input_items_json = dump_safe(st.req.input.items);
  row.conversation_json = dump_safe(model::to_json(conv));
  row.pending_json = std::move(pending);  // with the typed loop options (parking.h); request_json stays NULL
  row.background = st.channel != nullptr;
  std::vector<std::pair<std::int64_t, std::string>> events;
  if (st.channel) {
    for (const auto& e : st.channel->read_from(st.persisted).events) {
      events.emplace_back(e.value("sequence_number", std::int64_t{0}), dump_safe(e));
    }
  }
  store::response_store* db = deps.store;
  auto put = [db, row, events = std::move(events)]() -> result<void> {  // named: see blocking_pool.h
    if (auto r = db->put(row); !r) return r;
    if (events.empty()) return {};
    (void)db->purge_events_before(row.updated_at - k_event_retention_s);
    return db->append_events(row.id, events);
  };
  auto saved = co_await off_thread(deps.pool, put);
  if (!saved) spdlog::error("response {} could not be stored: {}", row.id, saved.error().message);
  co_return;
}

/// How a run ended, and what to keep of it.
struct run_end {
  std::optional<model::usage> usage;
  bool length = false;
  std::optional<error> failure;
  bool cancelled = false;
  std::vector<model::message> kept;  ///< the conversation to store
  std::string pending;               ///< a parked turn ("" = none)
};

/// Ends the response: stores it first (so a GET right after the answer finds it, and a client
/// that leaves as soon as it has read cannot lose it), then the object (not streaming) or the
/// last events. A failure before anything was sent is an HTTP error and nothing is stored.
asio::awaitable<void> finish(run_state& st, response_builder& b, event_writer& w, response_writer& out, run_end e,
                             responses_deps& deps) {
  // The engine names the conversation "messages" (a context overflow); here it is the input.
  if (e.failure && e.failure->param == "messages") e.failure->param = "input";
  if (e.failure && !st.started && !st.channel) {
    co_await wire::send_error(out, responses_surface(), *e.failure);
    co_return;
  }
  std::vector<json> last;
  if (e.failure) last.push_back(b.error_event(*e.failure));
  const bool cancelled = e.cancelled || (st.channel && st.channel->cancelled());
  for (auto& ev : b.finish(e.usage, e.length, e.failure, cancelled)) last.push_back(std::move(ev));
  if (st.channel) {
    co_await w.write(std::move(last));
    co_await save(st, b, std::move(e.kept), std::move(e.pending), deps);
    st.channel->finish(b.response());
    co_return;
  }
  co_await save(st, b, std::move(e.kept), std::move(e.pending), deps);
  if (!st.req.stream) {
    co_await out.send(200, "application/json", dump_safe(b.response()));
    co_return;
  }
  if (co_await w.write(std::move(last))) co_await out.end_stream();
  co_return;
}

/// Registers the run's cancel token under its cancel_id (POST …/cancel, /api/inference/cancel).
std::optional<agent::cancel_registry::registration> cancellable(const run_state& st, responses_deps& deps,
                                                                  const std::shared_ptr<cancel_token>& token) {
  if (!deps.tools || st.req.loop.cancel_id.empty()) return std::nullopt;
  return deps.tools->cancels.add(agent::cancel_key::cancel_id, st.req.loop.cancel_id, token, st.req.loop.owner);
}

/// Client path: one model turn.
asio::awaitable<void> run_turn(run_state& st, response_builder& b, event_writer& w, response_writer& out,
                               responses_deps& deps) {
  std::shared_ptr<cancel_token> token = cancel_token::make();
  auto by_cancel_id = cancellable(st, deps, token);
  std::function<asio::awaitable<bool>()> on_silence = [&w]() -> asio::awaitable<bool> {
    const bool ok = co_await w.ping();
    co_return ok;
  };
  const model::chat_request conv = conversation(st);
  // The turn takes a slot of the engine's admission queue first (engine/admission_queue.h).
  engine::admitting_backend admitted(deps.backend, deps.admission, st.req.loop.owner, wire::retry_after_on(out));
  engine::chat_backend& base = st.provider ? st.provider->backend() : admitted;  // a provider has no queue here
  engine::context_fitting_backend fitting(base, st.req.loop.context_overflow);
  engine::healing_backend healing(fitting, wire::names_to_heal(st.req.loop, conv, deps.heal_tool_calls));
  auto opened = co_await healing.open_turn(conv, token, on_silence);
  if (!opened) {
    run_end e;
    e.failure = opened.error();
    if (token->cancelled() && token->why() != agent::k_shutdown_reason) {  // cancelled while waiting
      e.failure.reset();
      e.cancelled = true;
    }
    e.kept = st.history;
    e.kept.insert(e.kept.end(), st.req.input.messages.begin(), st.req.input.messages.end());
    co_await finish(st, b, w, out, std::move(e), deps);
    co_return;
  }
  std::unique_ptr<engine::chat_turn> turn = std::move(*opened);
  auto stop_upstream = token->on_cancel(turn->canceller());
  if (!co_await w.open()) co_return;
  std::optional<model::usage> usage;
  std::optional<error> failure;
  bool length = false;
  // Every event that is ready goes out in one write; nothing waits for events not arrived yet.
  std::vector<json> batch;
  while (auto ev = co_await turn->next()) {
    if (const auto* u = std::get_if<model::usage_event>(&*ev)) usage = u->usage;
    if (const auto* f = std::get_if<model::finish_event>(&*ev)) length = f->reason == model::finish_reason::length;
    if (const auto* e = std::get_if<model::error_event>(&*ev); e && !token->cancelled()) failure = e->failure;
    std::vector<json> events = b.on_model_event(*ev);
    if (std::holds_alternative<model::ping_event>(*ev)) {
      if (!co_await w.ping()) co_return;
      continue;
    }
    std::move(events.begin(), events.end(), std::back_inserter(batch));
    if (batch.empty() || (batch.size() < k_batch_events && turn->poll_ready())) continue;
    if (!co_await w.write(std::exchange(batch, {}))) co_return;
  }
  if (!batch.empty() && !co_await w.write(std::exchange(batch, {}))) co_return;
  // A cancel (POST …/cancel, /api/inference/cancel) ends it as cancelled; warden shutting down
  // is a failure, never a quietly truncated "completed".
  bool cancelled = false;
  if (token->cancelled()) {
    if (token->why() == agent::k_shutdown_reason) failure = make_error(errc::upstream_unavailable, describe(agent::k_shutdown_reason));
    else cancelled = true;
  }
  run_end e;  // fields one by one: GCC 12 destroys an aggregate-initialized coroutine local twice
  e.usage = usage;
  e.length = length;
  e.failure = failure;
  e.cancelled = cancelled;
  e.kept = st.history;
  e.kept.insert(e.kept.end(), st.req.input.messages.begin(), st.req.input.messages.end());
  e.kept.push_back(b.assistant_message());
  co_await finish(st, b, w, out, std::move(e), deps);
  co_return;
}

/// Renders tool-loop events as they come.
class loop_writer : public agent::loop_sink {
 public:
  loop_writer(event_writer& w, response_builder& b) : w_(w), b_(b) {}
  asio::awaitable<bool> emit(agent::loop_event ev) override {
    if (!co_await w_.open()) co_return false;
    if (std::holds_alternative<model::ping_event>(ev)) {
      const bool ok = co_await w_.ping();
      co_return ok;
    }
    const bool ok = co_await w_.write(b_.on_loop_event(ev));
    co_return ok;
  }

 private:
  event_writer& w_;
  response_builder& b_;
};

/// Loop path: warden's tool loop; a parked turn ends the response with approval requests.
asio::awaitable<void> run_loop(run_state& st, response_builder& b, event_writer& w, response_writer& out,
                               responses_deps& deps) {
  loop_writer sink(w, b);
  model::chat_request conv = conversation(st);
  const agent::resume_turn* resume = st.resume ? &*st.resume : nullptr;
  engine::admitting_backend admitted(deps.backend, deps.admission, st.req.loop.owner, wire::retry_after_on(out));
  engine::chat_backend& base = st.provider ? st.provider->backend() : admitted;  // a provider has no queue here
  auto res = co_await agent::run_tool_loop(base, conv, st.req.loop, *deps.tools, sink, resume);
  if (res.client_gone && !st.channel) co_return;
  if (!co_await w.open() && st.req.stream) co_return;
  std::string pending;
  if (res.parked) {
    std::map<std::string, std::string> requests;
    std::vector<json> asks = b.approval_requests(*res.parked, requests);
    if (!co_await w.write(std::move(asks))) co_return;
    const std::int64_t lifetime_ms = deps.tools->approvals.timeout().count();
    parked_state parked;
    parked.turn = *res.parked;
    parked.requests = std::move(requests);
    parked.expires_at_ms = agent::unix_ms_now() + lifetime_ms;
    parked.loop = st.req.loop;  // typed: a resume runs under these, nothing is parsed again
    pending = encode_parked(parked);
  }
  run_end e;  // fields one by one: GCC 12 destroys an aggregate-initialized coroutine local twice
  e.usage = res.usage;
  e.length = res.finish_reason == model::finish_reason::length;
  e.failure = res.failure;
  e.cancelled = res.cancelled && !res.failure;  // /api/inference/cancel or POST …/cancel
  e.pending = std::move(pending);
  e.kept = st.history;
  e.kept.insert(e.kept.end(), st.req.input.messages.begin(), st.req.input.messages.end());
  e.kept.insert(e.kept.end(), res.messages.begin(), res.messages.end());
  co_await finish(st, b, w, out, std::move(e), deps);
  co_return;
}

}  // namespace

asio::awaitable<void> run(run_state& st, response_builder& b, event_writer& w, response_writer& out, responses_deps& deps) {
  if (st.req.loop.enable_tools) co_await run_loop(st, b, w, out, deps);
  else co_await run_turn(st, b, w, out, deps);
  co_return;
}

}  // namespace warden::api::responses
