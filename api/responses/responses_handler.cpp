#include "api/responses/responses_handler.h"

#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/this_coro.hpp>

#include <chrono>
#include <algorithm>
#include <charconv>
#include <functional>
#include <set>
#include <limits>

#include "agent/call_plan.h"
#include "api/responses/background.h"
#include "api/responses/response_builder.h"
#include "api/responses/responses_request.h"
#include "api/wire/admission.h"
#include "api/wire/errors.h"
#include "api/wire/loop_fields.h"
#include "common/ids.h"
#include "common/json_fields.h"
#include "common/query.h"
#include "common/sse.h"
#include "model/serialize.h"

namespace warden::api::responses {

namespace asio = boost::asio;

namespace {

template <class F>
asio::awaitable<std::invoke_result_t<F>> off_thread(blocking_pool* pool, F f) {
  if (pool) co_return co_await pool->run_blocking(std::move(f));
  co_return f();
}

std::int64_t unix_s_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

/// A parked turn as stored in pending_json: {"text", "calls":[{id,name,arguments,needs_approval,card}],
/// "requests": {approval request id: call id}}.
json pending_json(const agent::parked_turn& t, const std::map<std::string, std::string>& requests,
                  std::int64_t expires_at_ms) {
  json calls = json::array();
  for (const auto& c : t.calls) {
    calls.push_back({{"id", c.id}, {"name", c.name}, {"arguments", c.arguments}, {"needs_approval", c.needs_approval},
                     {"card", c.card_arguments}});
  }
  return {{"text", t.text}, {"calls", std::move(calls)}, {"requests", requests}, {"expires_at_ms", expires_at_ms}};
}

struct pending_state {
  agent::parked_turn turn;
  std::map<std::string, std::string> requests;
};

std::optional<pending_state> parse_pending(const std::string& text) {
  if (text.empty()) return std::nullopt;
  json j = json::parse(text, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  pending_state p;
  p.turn.text = j.value("text", std::string());
  for (const auto& c : j.value("calls", json::array())) {
    p.turn.calls.push_back(agent::parked_call{c.value("id", std::string()), c.value("name", std::string()),
                                              c.value("arguments", std::string()), c.value("needs_approval", false),
                                              c.value("card", json::object())});
  }
  const json requests = j.value("requests", json::object());  // named: items() must not outlive it
  for (const auto& [rid, call] : requests.items()) {
    if (call.is_string()) p.requests[rid] = call.get<std::string>();
  }
  return p;
}

/// Everything a create request runs with once its previous response is loaded.
struct run_state {
  responses_request req;
  std::vector<model::message> history;  ///< the previous response's conversation (no instructions)
  std::optional<agent::resume_turn> resume;
  std::string id = ids::new_id(ids::kind::response);
  std::int64_t created = unix_s_now();
  bool started = false;  ///< the stream has begun (response.created was sent)
  std::shared_ptr<run_channel> channel;  ///< a background run's event log; null in the foreground
  std::int64_t persisted = 0;            ///< a background run's events already in the store
  std::string pending_text;              ///< the parked turn as read (claim_pending compares)
};

/// The conversation sent to the model: instructions, history, the new input.
model::chat_request conversation(const run_state& st) {
  model::chat_request c = st.req.conv;
  c.messages.clear();
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

/// Matches the mcp_approval_response items to the parked turn of the previous response. Every
/// call that needs a person and got no answer is declined; after --approval-timeout (from when
/// the turn parked) every such call has expired, whatever the answers say.
std::optional<error> attach_answers(run_state& st, const std::optional<pending_state>& pending,
                                    std::int64_t expires_unix_ms) {
  const auto& answers = st.req.input.approvals;
  if (!pending) {
    if (answers.empty()) return std::nullopt;
    return field_invalid("'input' answers an approval request, but response '" + st.req.previous_response_id +
                             "' has none pending",
                         "input");
  }
  if (!st.req.input.messages.empty()) {
    return field_invalid("'input' that answers approval requests may hold only mcp_approval_response items (the "
                         "parked tool calls are answered first)",
                         "input");
  }
  agent::resume_turn r;
  r.turn = pending->turn;
  for (const auto& a : answers) {
    auto it = pending->requests.find(a.approval_request_id);
    if (it == pending->requests.end()) {
      return field_invalid("'approval_request_id' '" + a.approval_request_id.substr(0, 100) + "' is not one of response '" +
                               st.req.previous_response_id + "''s approval requests",
                           "input");
    }
    if (r.decisions.count(it->second)) {
      return field_invalid("'approval_request_id' '" + a.approval_request_id.substr(0, 100) + "' is answered twice", "input");
    }
    r.decisions[it->second] = a.approve ? agent::approval_outcome::allowed : agent::approval_outcome::denied;
  }
  const bool expired = expires_unix_ms > 0 && agent::unix_ms_now() > expires_unix_ms;
  for (const auto& c : r.turn.calls) {
    if (!c.needs_approval) continue;
    if (expired) r.decisions[c.id] = agent::approval_outcome::timed_out;
    else r.decisions.try_emplace(c.id, agent::approval_outcome::denied);  // unanswered: declined
  }
  st.resume = std::move(r);
  return std::nullopt;
}

/// The parked request's loop fields, which a resume always runs under: the answers were given
/// for calls gated by those, and a resuming request cannot widen them (its own tool fields are
/// ignored).
std::optional<error> use_parked_fields(run_state& st, const std::string& request_json, std::span<const std::string> names) {
  json fields = json::parse(request_json, nullptr, false);
  if (!fields.is_object()) return make_error(errc::internal, "the parked request's tool fields could not be read");
  st.req.loop_fields = fields;
  st.req.loop_fields_sent = true;
  st.req.loop = agent::loop_options{};
  json copy = fields;
  if (auto e = wire::take_loop_fields(copy, st.req.loop, names)) return e;
  st.req.loop.surface = "openai.responses";
  st.req.approval_mcp = fields.value("approval_format", json()) == "mcp";
  if (st.req.client_tools) return field_invalid("'tools' (function tools) cannot resume a turn of warden's tools", "tools");
  return std::nullopt;
}

/// Loads the previous response into `st`; the error to answer, or nullopt. A parked turn is
/// only read here (validated against the answers); claim_pending() takes it.
asio::awaitable<std::optional<error>> load_previous(run_state& st, responses_deps& deps,
                                                    std::span<const std::string> names) {
  if (st.req.previous_response_id.empty()) {
    if (st.req.input.approvals.empty()) co_return std::nullopt;
    co_return field_invalid("'mcp_approval_response' needs 'previous_response_id' (the response that asked)", "input");
  }
  auto not_found = make_error(errc::not_found, "Previous response with id '" + st.req.previous_response_id + "' not found.",
                              "previous_response_id", "previous_response_not_found");
  if (!deps.store) co_return not_found;
  store::response_store* db = deps.store;
  const std::string id = st.req.previous_response_id;
  auto fetch = [db, id]() { return db->get(id); };  // named: see blocking_pool.h
  auto got = co_await off_thread(deps.pool, fetch);
  if (!got) co_return make_error(errc::internal, "the response store could not be read");
  if (!*got) co_return not_found;
  if (deps.runs && deps.runs->find(id)) {
    co_return field_invalid("response '" + id + "' is still running; wait for it to finish", "previous_response_id");
  }
  auto history = model::messages_from_json(json::parse((*got)->conversation_json, nullptr, false));
  if (!history) co_return history.error();
  st.history = std::move(*history);
  if (st.req.input.approvals.empty()) co_return std::nullopt;
  auto pending = parse_pending((*got)->pending_json);
  std::int64_t expires = 0;
  if (pending) {
    if (auto e = use_parked_fields(st, (*got)->request_json, names)) co_return e;
    expires = json::parse((*got)->pending_json, nullptr, false).value("expires_at_ms", std::int64_t{0});
  }
  st.pending_text = (*got)->pending_json;
  co_return attach_answers(st, pending, expires);
}

/// Takes the parked turn for this resume, once: a second answer (or a concurrent one) finds
/// nothing pending. Only after every check passed, so a refused request never loses it.
asio::awaitable<std::optional<error>> claim_pending(run_state& st, responses_deps& deps) {
  if (!st.resume || !deps.store) co_return std::nullopt;
  store::response_store* db = deps.store;
  const std::string id = st.req.previous_response_id;
  auto take = [db, id]() { return db->take_pending(id); };  // named: see blocking_pool.h
  auto taken = co_await off_thread(deps.pool, take);
  if (!taken) co_return make_error(errc::internal, "the response store could not be written");
  if (*taken != st.pending_text) {
    co_return field_invalid("'input' answers an approval request, but response '" + id + "' has none pending", "input");
  }
  co_return std::nullopt;
}

/// The one request-level gate (api/wire/admission.h) for the loop path; sets parking and how
/// the gate folds. The error to answer, or nullopt.
std::optional<error> gate_request(run_state& st, const responses_deps& deps) {
  const wire::admission verdict = admit_create(st.req, deps.tools, deps.store != nullptr, st.resume.has_value());
  if (verdict.refusal) return verdict.refusal;
  verdict.apply(st.req.loop);
  return std::nullopt;
}

/// Writes events as SSE (streaming) or keeps them (not streaming: only the object is sent).
class event_writer {
 public:
  event_writer(response_writer& out, response_builder& b, run_state& st, responses_deps& deps)
      : out_(out), b_(b), st_(st), deps_(deps) {}
  asio::awaitable<bool> open() {
    if (st_.channel || !st_.req.stream || st_.started) co_return true;
    if (!co_await out_.begin_stream()) co_return false;
    st_.started = true;
    const bool ok = co_await write(b_.start());
    co_return ok;
  }
  asio::awaitable<bool> write(std::vector<json> events) {
    if (st_.channel) {
      if (publish(std::move(events))) co_await persist();
      co_return true;
    }
    if (!st_.req.stream || events.empty()) co_return true;
    std::string bytes;
    for (const auto& e : events) bytes += sse(e);
    const bool ok = co_await out_.write_stream(std::move(bytes));
    co_return ok;
  }
  /// Background: into the run's log, with the object when an item starts or ends (and at most
  /// every k_snapshot_ms while text streams, for pollers). True for an item-level event.
  bool publish(std::vector<json> events) {
    bool structural = false;
    for (const auto& e : events) {
      const std::string type = e.value("type", std::string());
      structural = structural || type.size() < 6 || type.compare(type.size() - 6, 6, ".delta") != 0;
    }
    const auto now = std::chrono::steady_clock::now();
    const bool refresh = structural || now - last_snapshot_ >= std::chrono::milliseconds(k_snapshot_ms);
    if (refresh) last_snapshot_ = now;
    st_.channel->publish(std::move(events), refresh ? b_.response() : json());
    return structural;
  }
  /// Background: writes the events not yet stored (at item boundaries, so a replay after a
  /// restart still has what followers saw).
  asio::awaitable<void> persist() {
    if (!deps_.store) co_return;
    std::vector<std::pair<std::int64_t, std::string>> rows;
    for (const auto& e : st_.channel->read_from(st_.persisted).events) {
      rows.emplace_back(e.value("sequence_number", std::int64_t{0}), dump_safe(e));
    }
    if (rows.empty()) co_return;
    st_.persisted += static_cast<std::int64_t>(rows.size());
    store::response_store* db = deps_.store;
    const std::string id = st_.id;
    auto put = [db, id, rows = std::move(rows)]() { return db->append_events(id, rows); };  // named: see blocking_pool.h
    auto done = co_await off_thread(deps_.pool, put);
    if (!done) spdlog::error("response {}: events could not be stored: {}", id, done.error().message);
    co_return;
  }
  asio::awaitable<bool> ping() {
    if (st_.channel || !st_.req.stream) co_return true;
    if (!co_await open()) co_return false;
    const bool ok = co_await out_.write_stream(sse::comment_frame("ping"));
    co_return ok;
  }

 private:
  static constexpr int k_snapshot_ms = 100;
  response_writer& out_;
  response_builder& b_;
  run_state& st_;
  responses_deps& deps_;
  std::chrono::steady_clock::time_point last_snapshot_{};
};

response_settings settings_of(const run_state& st, const responses_deps& deps) {
  std::string model = deps.backend.model_id();
  return response_settings{model.empty() ? st.req.model : model, st.req.previous_response_id,
                           st.req.store && deps.store != nullptr, false, st.req.echo};
}

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
  row.response_json = dump_safe(b.response());
  row.input_items_json = dump_safe(st.req.input.items);
  row.conversation_json = dump_safe(model::to_json(conv));
  row.pending_json = std::move(pending);
  if (!row.pending_json.empty()) row.request_json = dump_safe(st.req.loop_fields);
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
  return deps.tools->cancels.add("cancel_id", st.req.loop.cancel_id, token);
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
  auto opened = co_await deps.backend.open_turn(conv, token, on_silence);
  if (!opened) {
    run_end e;
    e.failure = opened.error();
    if (token->cancelled() && token->reason() != agent::k_shutdown_reason) {  // cancelled while waiting
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
  while (auto ev = co_await turn->next()) {
    if (const auto* u = std::get_if<model::usage_event>(&*ev)) usage = u->usage;
    if (const auto* f = std::get_if<model::finish_event>(&*ev)) length = f->reason == model::finish_reason::length;
    if (const auto* e = std::get_if<model::error_event>(&*ev); e && !token->cancelled()) failure = e->failure;
    std::vector<json> events = b.on_model_event(*ev);
    if (std::holds_alternative<model::ping_event>(*ev)) {
      if (!co_await w.ping()) co_return;
      continue;
    }
    if (!co_await w.write(std::move(events))) co_return;
  }
  // A cancel (POST …/cancel, /api/inference/cancel) ends it as cancelled; warden shutting down
  // is a failure, never a quietly truncated "completed".
  bool cancelled = false;
  if (token->cancelled()) {
    if (token->reason() == agent::k_shutdown_reason) failure = make_error(errc::upstream_unavailable, agent::k_shutdown_reason);
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
  auto res = co_await agent::run_tool_loop(deps.backend, conv, st.req.loop, *deps.tools, sink, resume);
  if (res.client_gone && !st.channel) co_return;
  if (!co_await w.open() && st.req.stream) co_return;
  std::string pending;
  if (res.parked) {
    std::map<std::string, std::string> requests;
    std::vector<json> asks = b.approval_requests(*res.parked, requests);
    if (!co_await w.write(std::move(asks))) co_return;
    const std::int64_t lifetime_ms = deps.tools->approvals.timeout().count();
    pending = dump_safe(pending_json(*res.parked, requests, agent::unix_ms_now() + lifetime_ms));
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

/// Runs the request on the chosen path with `b` and `w`.
asio::awaitable<void> run(run_state& st, response_builder& b, event_writer& w, response_writer& out, responses_deps& deps) {
  if (st.req.loop.enable_tools) co_await run_loop(st, b, w, out, deps);
  else co_await run_turn(st, b, w, out, deps);
  co_return;
}

/// A response writer that nobody reads (a background run has no connection).
class detached_writer : public response_writer {
 public:
  asio::awaitable<bool> send(int, std::string, std::string) override { co_return true; }
  asio::awaitable<bool> begin_stream() override { co_return true; }
  asio::awaitable<bool> write_stream(std::string) override { co_return true; }
  asio::awaitable<bool> end_stream() override { co_return true; }
  bool started() const override { return false; }
  void add_header(std::string, std::string) override {}
};

/// The background run itself: owned by warden, not by any connection.
asio::awaitable<void> run_background(run_state st, response_builder b, responses_deps& deps) {
  detached_writer out;
  event_writer w(out, b, st, deps);
  std::shared_ptr<run_channel> ch = st.channel;
  co_await run(st, b, w, out, deps);
  if (!ch->done()) ch->finish(b.response());
  deps.runs->end(st.id);
  co_return;
}

/// Streams a run's events after `after` (background stream, or GET …?stream=true) until it ends.
asio::awaitable<void> follow(std::shared_ptr<run_channel> ch, std::int64_t after, response_writer& out,
                             std::chrono::milliseconds ping) {
  if (!co_await out.begin_stream()) co_return;
  std::int64_t next = after + 1;
  for (;;) {
    auto got = ch->read_from(next);
    if (!got.events.empty()) {
      std::string bytes;
      for (const auto& e : got.events) bytes += sse(e);
      next += static_cast<std::int64_t>(got.events.size());
      if (!co_await out.write_stream(std::move(bytes))) co_return;
      continue;
    }
    if (got.done) break;
    co_await ch->wait(next, ping);
    if (ch->read_from(next).events.empty() && !ch->done()) {
      if (!co_await out.write_stream(sse::comment_frame("ping"))) co_return;
    }
  }
  co_await out.end_stream();
  co_return;
}

std::vector<std::string> tool_names(const responses_deps& deps) {
  return deps.tools ? deps.tools->tools.names() : std::vector<std::string>{};
}

/// Starts a background run and answers at once: the object (status in_progress) or, streaming,
/// its events as they happen (this connection only follows; leaving does not stop the run).
asio::awaitable<void> start_background(run_state st, response_writer& out, responses_deps& deps) {
  const bool stream = st.req.stream;
  st.req.stream = false;  // the run writes to its log; followers stream it
  if (st.req.loop.cancel_id.empty()) st.req.loop.cancel_id = st.id;
  st.channel = deps.runs->start(st.id);
  st.channel->cancel_id = st.req.loop.cancel_id;
  st.started = true;
  response_settings settings = settings_of(st, deps);
  settings.background = true;
  response_builder b(st.id, st.created, std::move(settings));
  b.set_approval_items(true);
  st.channel->publish(b.start(), b.response());
  json first = b.response();
  std::shared_ptr<run_channel> ch = st.channel;
  // The row exists before the answer: a GET right after it finds the run.
  store::stored_response row;
  row.id = st.id;
  row.created_at = row.updated_at = st.created;
  row.status = "in_progress";
  row.background = true;
  row.previous_id = st.req.previous_response_id;
  row.response_json = dump_safe(first);
  row.input_items_json = dump_safe(st.req.input.items);
  store::response_store* db = deps.store;
  auto put = [db, row]() { return db->put(row); };  // named: see blocking_pool.h
  (void)co_await off_thread(deps.pool, put);
  auto ex = co_await asio::this_coro::executor;
  asio::co_spawn(ex, run_background(std::move(st), std::move(b), deps), asio::detached);
  if (stream) {
    co_await follow(ch, -1, out, deps.ping_interval);
    co_return;
  }
  co_await out.send(200, "application/json", dump_safe(first));
  co_return;
}

/// mcp_approval_response items for a background run that is still live and waiting: they answer
/// its tickets ("mcpr_<approval id>") and the answer is the run's object as it stands. False when
/// the request is not that (it then goes the usual way).
asio::awaitable<bool> answer_live_run(const run_state& st, response_writer& out, responses_deps& deps) {
  if (!deps.runs || !deps.tools || st.req.previous_response_id.empty() || st.req.input.approvals.empty()) co_return false;
  std::shared_ptr<run_channel> ch = deps.runs->find(st.req.previous_response_id);
  if (!ch) co_return false;
  std::set<std::string> seen;
  for (const auto& a : st.req.input.approvals) {
    if (seen.insert(a.approval_request_id).second) continue;
    co_await wire::send_error(out, responses_surface(), field_invalid("'approval_request_id' '" + a.approval_request_id.substr(0, 100) + "' is answered twice", "input"));
    co_return true;
  }
  for (const auto& a : st.req.input.approvals) {
    const std::string& rid = a.approval_request_id;
    // The same scope rule as tool-confirm: a request that names a session answers only its own.
    std::optional<std::string_view> session;
    if (!st.req.loop.session_id.empty()) session = st.req.loop.session_id;
    const bool ok = rid.rfind("mcpr_", 0) == 0 &&
                    deps.tools->approvals.resolve(rid.substr(5), a.approve ? agent::approval_decision::allow
                                                                           : agent::approval_decision::deny,
                                                  session);
    if (!ok) {
      co_await wire::send_error(out, responses_surface(), field_invalid("'approval_request_id' '" + rid.substr(0, 100) + "' is not waiting in response '" +
                                                 st.req.previous_response_id + "'",
                                             "input"));
      co_return true;
    }
  }
  co_await out.send(200, "application/json", dump_safe(ch->snapshot()));
  co_return true;
}

asio::awaitable<void> handle_create(const http_request& http, response_writer& out, responses_deps& deps) {
  const std::vector<std::string> names = tool_names(deps);
  auto parsed = parse_responses_request(http.body, names);
  if (!parsed) {
    co_await wire::send_error(out, responses_surface(), parsed.error());
    co_return;
  }
  run_state st;
  st.req = std::move(*parsed);
  if (st.req.background && (!deps.runs || !deps.store)) {
    co_await wire::send_error(out, responses_surface(), field_invalid("'background' runs need warden's response store", "background"));
    co_return;
  }
  if (co_await answer_live_run(st, out, deps)) co_return;
  if (auto e = co_await load_previous(st, deps, names)) {
    co_await wire::send_error(out, responses_surface(), *e);
    co_return;
  }
  if (auto e = gate_request(st, deps)) {
    co_await wire::send_error(out, responses_surface(), *e);
    co_return;
  }
  if (auto e = co_await claim_pending(st, deps)) {
    co_await wire::send_error(out, responses_surface(), *e);
    co_return;
  }
  if (st.req.background) {
    co_await start_background(std::move(st), out, deps);
    co_return;
  }
  response_builder b(st.id, st.created, settings_of(st, deps));
  event_writer w(out, b, st, deps);
  co_await run(st, b, w, out, deps);
  co_return;
}

/// "/v1/responses/{id}[/rest]" → {id, rest}.
std::pair<std::string, std::string> split_path(const std::string& path) {
  const std::string prefix = "/v1/responses/";
  std::string tail = path.substr(prefix.size());
  const auto slash = tail.find('/');
  if (slash == std::string::npos) return {tail, ""};
  return {tail.substr(0, slash), tail.substr(slash + 1)};
}

asio::awaitable<std::optional<store::stored_response>> fetch(const std::string& id, response_writer& out,
                                                             responses_deps& deps) {
  const error not_found = make_error(errc::not_found, "Response with id '" + id.substr(0, 200) + "' not found.", "", "not_found");
  if (!deps.store) {
    co_await wire::send_error(out, responses_surface(), not_found);
    co_return std::nullopt;
  }
  store::response_store* db = deps.store;
  auto get = [db, id]() { return db->get(id); };  // named: see blocking_pool.h
  auto got = co_await off_thread(deps.pool, get);
  if (!got) {
    co_await wire::send_error(out, responses_surface(), make_error(errc::internal, "the response store could not be read"));
    co_return std::nullopt;
  }
  if (!*got) co_await wire::send_error(out, responses_surface(), not_found);
  co_return std::move(*got);
}

std::optional<error> page_params(const http_request& req, std::size_t& limit, bool& asc, std::string& after) {
  auto l = query_param(req.query, "limit");
  auto o = query_param(req.query, "order");
  auto a = query_param(req.query, "after");
  if (!l || !o || !a) return field_invalid("malformed query string", "query");
  if (*l) {
    char* end = nullptr;
    const long v = std::strtol((*l)->c_str(), &end, 10);
    if ((*l)->empty() || *end || v < 1 || v > 100) return field_invalid("'limit' must be 1 to 100", "limit");
    limit = static_cast<std::size_t>(v);
  }
  if (*o && **o != "asc" && **o != "desc") return field_invalid("'order' must be asc or desc", "order");
  asc = *o && **o == "asc";
  if (*a) after = **a;
  return std::nullopt;
}

asio::awaitable<void> send_input_items(const http_request& req, const store::stored_response& row, response_writer& out) {
  std::size_t limit = 20;
  bool asc = false;
  std::string after;
  if (auto e = page_params(req, limit, asc, after)) {
    co_await wire::send_error(out, responses_surface(), *e);
    co_return;
  }
  json items = json::parse(row.input_items_json, nullptr, false);
  if (!items.is_array()) items = json::array();
  if (!asc) std::reverse(items.begin(), items.end());
  std::size_t start = 0;
  if (!after.empty()) {
    while (start < items.size() && items[start].value("id", std::string()) != after) ++start;
    start = start < items.size() ? start + 1 : items.size();
  }
  json data = json::array();
  for (std::size_t i = start; i < items.size() && data.size() < limit; ++i) data.push_back(items[i]);
  const bool more = start + data.size() < items.size();
  json body = {{"object", "list"}, {"data", data}, {"has_more", more},
               {"first_id", data.empty() ? json() : data.front()["id"]}, {"last_id", data.empty() ? json() : data.back()["id"]}};
  co_await out.send(200, "application/json", dump_safe(body));
}

asio::awaitable<void> delete_row(const std::string& id, response_writer& out, responses_deps& deps) {
  if (deps.runs && deps.runs->find(id)) {
    co_await wire::send_error(out, responses_surface(), field_invalid("response '" + id + "' is still running; cancel it first (POST /v1/responses/" + id +
                                               "/cancel)", "response_id"));
    co_return;
  }
  store::response_store* db = deps.store;
  auto del = [db, id]() { return db->remove(id); };  // named: see blocking_pool.h
  auto gone = co_await off_thread(deps.pool, del);
  if (!gone) {
    co_await wire::send_error(out, responses_surface(), make_error(errc::internal, "the response store could not be written"));
    co_return;
  }
  json body = {{"id", id}, {"object", "response.deleted"}, {"deleted", true}};
  co_await out.send(200, "application/json", dump_safe(body));
}

/// GET …?stream=true&starting_after=N: a live run is followed; a finished one replays its log.
asio::awaitable<void> replay(const http_request& req, const store::stored_response& row, response_writer& out,
                             responses_deps& deps) {
  auto after_text = query_param(req.query, "starting_after");
  std::int64_t after = -1;  // absent: from the first event
  if (!after_text) {
    co_await wire::send_error(out, responses_surface(), field_invalid("malformed query string", "starting_after"));
    co_return;
  }
  if (*after_text) {
    const std::string& t = **after_text;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), after);
    if (t.empty() || ec != std::errc() || end != t.data() + t.size() || after < 0) {
      co_await wire::send_error(out, responses_surface(), field_invalid("'starting_after' must be a sequence number (an integer ≥ 0)", "starting_after"));
      co_return;
    }
  }
  if (auto ch = deps.runs ? deps.runs->find(row.id) : nullptr) {
    co_await follow(ch, after, out, deps.ping_interval);
    co_return;
  }
  if (!row.background) {
    co_await wire::send_error(out, responses_surface(), field_invalid("only a response created with background: true can be streamed again", "stream"));
    co_return;
  }
  store::response_store* db = deps.store;
  const std::string id = row.id;
  auto read = [db, id, after]() { return db->events_after(id, after, 1000000); };  // named: see blocking_pool.h
  auto events = co_await off_thread(deps.pool, read);
  if (!events) {
    co_await wire::send_error(out, responses_surface(), make_error(errc::internal, "the response store could not be read"));
    co_return;
  }
  if (!co_await out.begin_stream()) co_return;
  std::string bytes;
  for (const auto& [seq, text] : *events) bytes += "event: " + json::parse(text, nullptr, false).value("type", std::string("message")) + "\ndata: " + text + "\n\n";
  const bool ok = co_await out.write_stream(std::move(bytes));
  if (ok) co_await out.end_stream();
  co_return;
}

/// POST …/cancel: a live background run is stopped (status cancelled); a finished one is
/// returned as it is; a foreground response cannot be cancelled.
asio::awaitable<void> cancel_run(const store::stored_response& row, response_writer& out, responses_deps& deps) {
  if (!row.background) {
    co_await wire::send_error(out, responses_surface(), field_invalid("Only background responses can be cancelled.", "response_id"));
    co_return;
  }
  auto ch = deps.runs ? deps.runs->find(row.id) : nullptr;
  if (!ch) {
    co_await out.send(200, "application/json", row.response_json);
    co_return;
  }
  ch->mark_cancelled();
  if (deps.tools) deps.tools->cancels.cancel("cancel_id", ch->cancel_id, "cancelled by the client");
  // The run stops within milliseconds (the cancel aborts the upstream and denies approvals);
  // wait up to 5 s for its last object so the answer says "cancelled".
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!ch->done() && std::chrono::steady_clock::now() < deadline) {
    co_await ch->wait(std::numeric_limits<std::int64_t>::max(), std::chrono::milliseconds(100));
  }
  co_await out.send(200, "application/json", dump_safe(ch->snapshot()));
  co_return;
}

asio::awaitable<void> handle_item(const http_request& req, response_writer& out, responses_deps& deps) {
  const auto [id, rest] = split_path(req.path);
  const bool known = (rest.empty() && req.method != "POST") || (rest == "input_items" && req.method == "GET") ||
                     (rest == "cancel" && req.method == "POST");
  if (id.empty() || !known) {
    co_await wire::send_error(out, responses_surface(), make_error(errc::not_found, "no route for " + req.method + " " + req.path.substr(0, 200), "", "unknown_route"));
    co_return;
  }
  auto row = co_await fetch(id, out, deps);
  if (!row) co_return;
  if (req.method == "DELETE") {
    co_await delete_row(id, out, deps);
    co_return;
  }
  if (rest == "input_items") {
    co_await send_input_items(req, *row, out);
    co_return;
  }
  if (rest == "cancel") {
    co_await cancel_run(*row, out, deps);
    co_return;
  }
  auto stream = query_param(req.query, "stream");
  if (stream && *stream && **stream == "true") {
    co_await replay(req, *row, out, deps);
    co_return;
  }
  auto ch = deps.runs ? deps.runs->find(id) : nullptr;
  // A named local, not a ?: inside the co_await: GCC 12 mishandles conditional temporaries there.
  std::string body = row->response_json;
  if (ch) body = dump_safe(ch->snapshot());
  co_await out.send(200, "application/json", std::move(body));
  co_return;
}

std::string inband_error(const error& e) {
  json ev = {{"type", "error"}, {"code", e.type_code.empty() ? json("server_error") : json(e.type_code)},
             {"message", e.message}, {"param", e.param.empty() ? json() : json(e.param)}, {"sequence_number", 0}};
  return sse(ev);
}

}  // namespace

wire::admission admit_create(const responses_request& r, const agent::tool_runtime* tools, bool store_available,
                             bool resuming) {
  wire::admission_options o;
  // A background run asks through tickets (the inbox, tool-confirm, or a later
  // mcp_approval_response answering its live mcp_approval_request item), never by parking.
  o.can_park = r.store && store_available;
  o.background = r.background;
  o.approval_mcp = r.approval_mcp;
  o.resuming = resuming;
  agent::loop_options loop = r.loop;
  loop.stream = r.stream;  // the request's own; admit() folds it
  return wire::admit(loop, tools, o);
}

void fail_unfinished_runs(store::response_store& store) {
  auto ids = store.unfinished_ids();
  if (!ids) {
    spdlog::error("responses: unfinished runs could not be listed: {}", ids.error().message);
    return;
  }
  for (const auto& id : *ids) {
    auto row = store.get(id);
    if (!row || !*row) continue;
    store::stored_response r = **row;
    json obj = json::parse(r.response_json, nullptr, false);
    if (obj.is_object()) {
      obj["status"] = "failed";
      obj["error"] = {{"code", "server_error"}, {"message", "warden restarted before the run finished"}};
    }
    r.status = "failed";
    r.response_json = dump_safe(obj);
    if (auto put = store.put(r); !put) spdlog::error("responses: run {} could not be marked failed: {}", id, put.error().message);
    // The stored log ends the way the run did, so a replay is not left hanging.
    auto events = store.events_after(id, -1, 1000000);
    const std::int64_t next = events && !events->empty() ? events->back().first + 1 : 0;
    json ev = {{"type", "response.failed"}, {"sequence_number", next}, {"response", obj}};
    (void)store.append_event(id, next, dump_safe(ev));
  }
  if (!ids->empty()) spdlog::warn("responses: {} background run(s) ended by the restart were marked failed", ids->size());
}

const surface& responses_surface() {
  static const surface s{"openai", [](const error& e, std::string_view) { return wire::openai_error_body(e); }, &inband_error};
  return s;
}

std::vector<route> routes(responses_deps& deps) {
  const surface* s = &responses_surface();
  auto create = [&deps](const http_request& req, response_writer& out) -> asio::awaitable<void> {
    co_await handle_create(req, out, deps);
  };
  auto item = [&deps](const http_request& req, response_writer& out) -> asio::awaitable<void> {
    co_await handle_item(req, out, deps);
  };
  return {
      {"POST", "/v1/responses", false, auth_policy::api_key, s, create},
      {"GET", "/v1/responses/", true, auth_policy::api_key, s, item},
      {"DELETE", "/v1/responses/", true, auth_policy::api_key, s, item},
      {"POST", "/v1/responses/", true, auth_policy::api_key, s, item},  // …/{id}/cancel
  };
}

}  // namespace warden::api::responses
