#include "api/responses/responses_handler.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <algorithm>
#include <functional>

#include "agent/loop_fields.h"
#include "api/openai/errors.h"
#include "api/responses/response_builder.h"
#include "api/responses/responses_request.h"
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

asio::awaitable<void> send_error(response_writer& out, const error& e) {
  co_await out.send(http_status(e.code), "application/json", openai::error_body(e));
}

/// A parked turn as stored in pending_json: {"text", "calls":[{id,name,arguments,needs_approval,card}],
/// "requests": {approval request id: call id}}.
json pending_json(const agent::parked_turn& t, const std::map<std::string, std::string>& requests) {
  json calls = json::array();
  for (const auto& c : t.calls) {
    calls.push_back({{"id", c.id}, {"name", c.name}, {"arguments", c.arguments}, {"needs_approval", c.needs_approval},
                     {"card", c.card_arguments}});
  }
  return {{"text", t.text}, {"calls", std::move(calls)}, {"requests", requests}};
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

/// Matches the mcp_approval_response items to the parked turn of the previous response.
std::optional<error> attach_answers(run_state& st, const std::optional<pending_state>& pending) {
  const auto& answers = st.req.input.approvals;
  if (!pending) {
    if (answers.empty()) return std::nullopt;
    return field_invalid("'input' answers an approval request, but response '" + st.req.previous_response_id +
                             "' has none pending",
                         "input");
  }
  agent::resume_turn r;
  r.turn = pending->turn;
  for (const auto& a : answers) {
    auto it = pending->requests.find(a.approval_request_id);
    if (it == pending->requests.end()) {
      return field_invalid("'approval_request_id' '" + a.approval_request_id + "' is not one of response '" +
                               st.req.previous_response_id + "''s approval requests",
                           "input");
    }
    r.decisions[it->second] = a.approve ? agent::approval_decision::allow : agent::approval_decision::deny;
  }
  if (!st.req.input.messages.empty()) {
    return field_invalid("'input' that answers approval requests may hold only mcp_approval_response items (the "
                         "parked tool calls are answered first)",
                         "input");
  }
  st.resume = std::move(r);
  return std::nullopt;
}

/// Loads the previous response into `st`; the error to answer, or nullopt.
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
  auto history = model::messages_from_json(json::parse((*got)->conversation_json, nullptr, false));
  if (!history) co_return history.error();
  st.history = std::move(*history);
  if (!st.req.loop_fields_sent && !(*got)->request_json.empty()) {  // a parked request's loop fields
    json fields = json::parse((*got)->request_json, nullptr, false);
    if (fields.is_object()) {
      if (auto e = agent::take_loop_fields(fields, st.req.loop, names)) co_return e;
      st.req.loop.surface = "openai.responses";
      st.req.approval_mcp = fields.value("approval_format", json()) == "mcp" || st.req.approval_mcp;
    }
  }
  std::string pending;
  if (!st.req.input.approvals.empty() && !(*got)->pending_json.empty()) {
    auto take = [db, id]() { return db->take_pending(id); };  // once: an approved call runs once
    auto taken = co_await off_thread(deps.pool, take);
    if (!taken) co_return make_error(errc::internal, "the response store could not be written");
    pending = std::move(*taken);
  }
  co_return attach_answers(st, parse_pending(pending));
}

/// The gate's request rules for the loop path; sets parking. The error to answer, or nullopt.
std::optional<error> gate_request(run_state& st, const responses_deps& deps) {
  auto& r = st.req;
  if (!r.loop.enable_tools) {
    if (st.resume) return field_invalid("resuming approval requests needs 'enable_tools'", "enable_tools");
    return std::nullopt;
  }
  if (!deps.tools) return make_error(errc::upstream_unavailable, "the tool loop is not available on this server");
  const bool can_park = r.store && deps.store;
  if (r.approval_mcp && !can_park) {
    return field_invalid("approval_format 'mcp' needs 'store': true (the parked call is kept until it is answered)",
                         "approval_format");
  }
  r.loop.park_approvals = can_park && (!r.stream || r.approval_mcp);
  r.loop.stream = r.loop.park_approvals || r.stream;  // the gate can ask either way: fold as a stream would
  if (!r.loop.park_approvals) {
    if (auto e = agent::stream_requirement(r.loop, deps.tools->tools)) return e;
  }
  return agent::check_permission_ceiling(r.loop, deps.tools->max_permission, deps.tools->tools);
}

/// Writes events as SSE (streaming) or keeps them (not streaming: only the object is sent).
class event_writer {
 public:
  event_writer(response_writer& out, response_builder& b, run_state& st) : out_(out), b_(b), st_(st) {}
  asio::awaitable<bool> open() {
    if (!st_.req.stream || st_.started) co_return true;
    if (!co_await out_.begin_stream()) co_return false;
    st_.started = true;
    const bool ok = co_await write(b_.start());
    co_return ok;
  }
  asio::awaitable<bool> write(std::vector<json> events) {
    if (!st_.req.stream || events.empty()) co_return true;
    std::string bytes;
    for (const auto& e : events) bytes += sse(e);
    const bool ok = co_await out_.write_stream(std::move(bytes));
    co_return ok;
  }
  asio::awaitable<bool> ping() {
    if (!st_.req.stream) co_return true;
    if (!co_await open()) co_return false;
    const bool ok = co_await out_.write_stream(sse::comment_frame("ping"));
    co_return ok;
  }

 private:
  response_writer& out_;
  response_builder& b_;
  run_state& st_;
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
  store::response_store* db = deps.store;
  auto put = [db, row]() { return db->put(row); };  // named: see blocking_pool.h
  auto saved = co_await off_thread(deps.pool, put);
  if (!saved) spdlog::error("response {} could not be stored: {}", row.id, saved.error().message);
  co_return;
}

/// Ends the response: the object (not streaming) or the last events.
asio::awaitable<void> finish(run_state& st, response_builder& b, event_writer& w, response_writer& out,
                             const std::optional<model::usage>& usage, bool length, const std::optional<error>& failure) {
  if (failure && !st.started) {
    co_await send_error(out, *failure);
    co_return;
  }
  std::vector<json> last;
  if (failure) last.push_back(b.error_event(*failure));
  for (auto& e : b.finish(usage, length, failure)) last.push_back(std::move(e));
  if (!st.req.stream) {
    co_await out.send(200, "application/json", dump_safe(b.response()));
    co_return;
  }
  if (co_await w.write(std::move(last))) co_await out.end_stream();
  co_return;
}

/// Client path: one model turn.
asio::awaitable<void> run_turn(run_state& st, response_writer& out, responses_deps& deps) {
  response_builder b(st.id, st.created, settings_of(st, deps));
  event_writer w(out, b, st);
  std::function<asio::awaitable<bool>()> on_silence = [&w]() -> asio::awaitable<bool> {
    const bool ok = co_await w.ping();
    co_return ok;
  };
  const model::chat_request conv = conversation(st);
  auto opened = co_await deps.backend.open_turn(conv, nullptr, on_silence);
  if (!opened) {
    co_await finish(st, b, w, out, std::nullopt, false, opened.error());
    co_return;
  }
  std::unique_ptr<engine::chat_turn> turn = std::move(*opened);
  if (!co_await w.open()) co_return;
  std::optional<model::usage> usage;
  std::optional<error> failure;
  bool length = false;
  while (auto ev = co_await turn->next()) {
    if (const auto* u = std::get_if<model::usage_event>(&*ev)) usage = u->usage;
    if (const auto* f = std::get_if<model::finish_event>(&*ev)) length = f->reason == model::finish_reason::length;
    if (const auto* e = std::get_if<model::error_event>(&*ev)) failure = e->failure;
    std::vector<json> events = b.on_model_event(*ev);
    if (std::holds_alternative<model::ping_event>(*ev)) {
      if (!co_await w.ping()) co_return;
      continue;
    }
    if (!co_await w.write(std::move(events))) co_return;
  }
  co_await finish(st, b, w, out, usage, length, failure);
  if (failure && !st.started) co_return;
  std::vector<model::message> kept = st.history;
  kept.insert(kept.end(), st.req.input.messages.begin(), st.req.input.messages.end());
  kept.push_back(b.assistant_message());
  co_await save(st, b, std::move(kept), "", deps);
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
asio::awaitable<void> run_loop(run_state& st, response_writer& out, responses_deps& deps) {
  response_builder b(st.id, st.created, settings_of(st, deps));
  event_writer w(out, b, st);
  loop_writer sink(w, b);
  model::chat_request conv = conversation(st);
  const agent::resume_turn* resume = st.resume ? &*st.resume : nullptr;
  auto res = co_await agent::run_tool_loop(deps.backend, conv, st.req.loop, *deps.tools, sink, resume);
  if (res.client_gone) co_return;
  if (!co_await w.open() && st.req.stream) co_return;
  std::string pending;
  if (res.parked) {
    std::map<std::string, std::string> requests;
    std::vector<json> asks = b.approval_requests(*res.parked, requests);
    if (!co_await w.write(std::move(asks))) co_return;
    pending = dump_safe(pending_json(*res.parked, requests));
  }
  co_await finish(st, b, w, out, res.usage, res.finish_reason == model::finish_reason::length, res.failure);
  if (res.failure && !st.started) co_return;
  std::vector<model::message> kept = st.history;
  kept.insert(kept.end(), st.req.input.messages.begin(), st.req.input.messages.end());
  kept.insert(kept.end(), res.messages.begin(), res.messages.end());
  co_await save(st, b, std::move(kept), std::move(pending), deps);
  co_return;
}

std::vector<std::string> tool_names(const responses_deps& deps) {
  return deps.tools ? deps.tools->tools.names() : std::vector<std::string>{};
}

asio::awaitable<void> handle_create(const http_request& http, response_writer& out, responses_deps& deps) {
  const std::vector<std::string> names = tool_names(deps);
  auto parsed = parse_responses_request(http.body, names);
  if (!parsed) {
    co_await send_error(out, parsed.error());
    co_return;
  }
  if (parsed->background) {
    co_await send_error(out, field_invalid("'background' runs are not available yet on this server", "background"));
    co_return;
  }
  run_state st;
  st.req = std::move(*parsed);
  if (auto e = co_await load_previous(st, deps, names)) {
    co_await send_error(out, *e);
    co_return;
  }
  if (auto e = gate_request(st, deps)) {
    co_await send_error(out, *e);
    co_return;
  }
  if (st.req.loop.enable_tools) co_await run_loop(st, out, deps);
  else co_await run_turn(st, out, deps);
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
    co_await send_error(out, not_found);
    co_return std::nullopt;
  }
  store::response_store* db = deps.store;
  auto get = [db, id]() { return db->get(id); };  // named: see blocking_pool.h
  auto got = co_await off_thread(deps.pool, get);
  if (!got) {
    co_await send_error(out, make_error(errc::internal, "the response store could not be read"));
    co_return std::nullopt;
  }
  if (!*got) co_await send_error(out, not_found);
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
    co_await send_error(out, *e);
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

asio::awaitable<void> handle_item(const http_request& req, response_writer& out, responses_deps& deps) {
  const auto [id, rest] = split_path(req.path);
  const bool known = rest.empty() || (rest == "input_items" && req.method != "DELETE");
  if (id.empty() || !known) {
    co_await send_error(out, make_error(errc::not_found, "no route for " + req.method + " " + req.path.substr(0, 200), "", "unknown_route"));
    co_return;
  }
  auto row = co_await fetch(id, out, deps);
  if (!row) co_return;
  if (req.method == "DELETE") {
    store::response_store* db = deps.store;
    auto del = [db, id]() { return db->remove(id); };  // named: see blocking_pool.h
    auto gone = co_await off_thread(deps.pool, del);
    if (!gone) {
      co_await send_error(out, make_error(errc::internal, "the response store could not be written"));
      co_return;
    }
    json body = {{"id", id}, {"object", "response.deleted"}, {"deleted", true}};
    co_await out.send(200, "application/json", dump_safe(body));
    co_return;
  }
  if (rest == "input_items") {
    co_await send_input_items(req, *row, out);
    co_return;
  }
  co_await out.send(200, "application/json", row->response_json);
  co_return;
}

std::string inband_error(const error& e) {
  json ev = {{"type", "error"}, {"code", e.type_code.empty() ? json("server_error") : json(e.type_code)},
             {"message", e.message}, {"param", e.param.empty() ? json() : json(e.param)}, {"sequence_number", 0}};
  return sse(ev);
}

}  // namespace

const surface& responses_surface() {
  static const surface s{"openai", [](const error& e, std::string_view) { return openai::error_body(e); }, &inband_error};
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
  };
}

}  // namespace warden::api::responses
