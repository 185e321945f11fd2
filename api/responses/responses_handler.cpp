#include "api/responses/responses_handler.h"

#include <span>
#include <string>
#include <vector>

#include "agent/call_plan.h"
#include "api/responses/background_runs.h"
#include "api/responses/event_writer.h"
#include "api/responses/parking.h"
#include "api/responses/response_builder.h"
#include "api/responses/responses_request.h"
#include "api/responses/run_paths.h"
#include "api/responses/run_state.h"
#include "api/responses/stored_routes.h"
#include "api/wire/errors.h"
#include "common/json_fields.h"
#include "model/serialize.h"

namespace warden::api::responses {

namespace asio = boost::asio;

namespace {

std::vector<std::string> tool_names(const responses_deps& deps) {
  return deps.tools ? deps.tools->tools.names() : std::vector<std::string>{};
}

/// The parked turn of `row` for the answers in `st`: the resume's decisions, and the loop options
/// it runs under (the parked request's, typed: parking.h). The error to answer, or nullopt.
std::optional<error> resume_parked(run_state& st, const store::stored_response& row, std::span<const std::string> names) {
  auto parked = decode_parked(row.pending_json, row.request_json, names);
  if (!parked) return parked.error();
  if (*parked) {
    // The same scope rule as tool-confirm: a request that names a session answers only its own.
    const std::string& asker = st.req.loop.session_id;
    if (!asker.empty() && asker != (**parked).loop.session_id) {
      return make_error(errc::not_found, "response '" + st.req.previous_response_id + "' has no approval request waiting in session '" +
                                             asker + "'", "session_id", "not_found");
    }
    auto loop = resumed_options(**parked, st.req.client_tools);
    if (!loop) return loop.error();
    st.req.loop = std::move(*loop);
    st.req.loop.owner = row.owner;  // the parked calls are the row owner's (its session, workspace, rules)
    st.req.loop.may_bypass = st.caller.admin();
    st.req.approval_mcp = false;  // the parked request's approval format is not carried (parking.h)
  }
  st.pending_text = row.pending_json;
  auto resume = match_answers(st.req.input, st.req.previous_response_id, *parked, agent::unix_ms_now());
  if (!resume) return resume.error();
  st.resume = std::move(*resume);
  return std::nullopt;
}

/// Loads the previous response into `st`; the error to answer, or nullopt. A parked turn is
/// only read here (validated against the answers); claim_pending() takes it.
asio::awaitable<std::optional<error>> load_previous(run_state& st, responses_deps& deps,
                                                    std::span<const std::string> names) {
  if (st.req.previous_response_id.empty()) {
    if (st.req.input.approvals.empty()) co_return std::nullopt;
    // A client that resends the history instead of chaining (the Agents SDK's HostedMCPTool):
    // the response that asked is found by the approval request id, then treated as chained to
    // (its stored conversation holds the history; the owner check below applies).
    std::optional<std::string> asking;
    if (deps.store) {
      store::response_store* db = deps.store;
      const std::string rid = st.req.input.approvals.front().approval_request_id;
      // Only the caller's own rows (an admin's: any): another key's id is as unknown.
      std::optional<std::string> owner;
      if (!st.caller.admin()) owner = st.caller.name;
      auto find = [db, rid, owner]() {
        return db->find_pending(rid, owner ? std::optional<std::string_view>(*owner) : std::nullopt);
      };  // named: see blocking_pool.h
      auto found = co_await off_thread(deps.pool, find);
      if (!found) co_return make_error(errc::internal, "the response store could not be read");
      asking = std::move(*found);
    }
    if (!asking) {
      co_return field_invalid("'mcp_approval_response' needs 'previous_response_id' (the response that asked), or "
                              "the approval_request_id of a response still waiting for it",
                              "input");
    }
    st.req.previous_response_id = std::move(*asking);
    st.req.input.messages.clear();
  }
  auto not_found = make_error(errc::not_found, "Previous response with id '" + st.req.previous_response_id + "' not found.",
                              "previous_response_id", "previous_response_not_found");
  if (!deps.store) co_return not_found;
  store::response_store* db = deps.store;
  const std::string id = st.req.previous_response_id;
  auto fetch = [db, id]() { return db->get(id); };  // named: see blocking_pool.h
  auto got = co_await off_thread(deps.pool, fetch);
  if (!got) co_return make_error(errc::internal, "the response store could not be read");
  if (!*got || !st.caller.may_access((*got)->owner)) co_return not_found;  // another key's: as unknown
  if (deps.runs && deps.runs->find(id)) {
    co_return field_invalid("response '" + id + "' is still running; wait for it to finish", "previous_response_id");
  }
  auto history = model::messages_from_json(json::parse((*got)->conversation_json, nullptr, false));
  if (!history) co_return history.error();
  st.history = std::move(*history);
  st.history_bytes = (*got)->conversation_json.size();
  if (st.req.input.approvals.empty()) co_return std::nullopt;
  co_return resume_parked(st, **got, names);
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

/// The budgets of budgets.h for this request; the error to answer, or nullopt.
asio::awaitable<std::optional<error>> check_budgets(const run_state& st, std::size_t body_bytes, responses_deps& deps) {
  if (auto e = check_history(deps.limits, body_bytes, st.history_bytes, st.req.previous_response_id)) co_return e;
  if (st.req.background && deps.runs) {
    if (auto e = check_background_runs(deps.limits, *deps.runs, st.req.loop.owner, run_session(st))) co_return e;
  }
  if (!st.req.store || !deps.store) co_return std::nullopt;
  store::response_store* db = deps.store;
  const responses_limits limits = deps.limits;
  const auto estimate = static_cast<std::int64_t>(2 * (body_bytes + st.history_bytes));
  auto check = [db, limits, estimate, owner = st.req.loop.owner, session = st.req.loop.session_id]() {
    return check_storage(limits, *db, estimate, owner, session);
  };  // named: see blocking_pool.h
  co_return co_await off_thread(deps.pool, check);
}

/// The one request-level gate (api/wire/admission.h) for the loop path; sets parking and how
/// the gate folds. The error to answer, or nullopt.
std::optional<error> gate_request(run_state& st, const responses_deps& deps) {
  const wire::admission verdict = admit_create(st.req, deps.tools, deps.store != nullptr, st.resume.has_value());
  if (verdict.refusal) return verdict.refusal;
  verdict.apply(st.req.loop);
  return std::nullopt;
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
  st.caller = http.caller;
  st.req.loop.owner = http.caller.name;  // the API key's, never the body's (common/principal.h)
  st.req.loop.may_bypass = http.caller.admin();
  if (st.req.background && (!deps.runs || !deps.store)) {
    co_await wire::send_error(out, responses_surface(), field_invalid("'background' runs need warden's response store", "background"));
    co_return;
  }
  if (co_await answer_live_run(st, out, deps)) co_return;
  if (auto e = co_await load_previous(st, deps, names)) {
    co_await wire::send_error(out, responses_surface(), *e);
    co_return;
  }
  if (auto e = co_await check_budgets(st, http.body.size(), deps)) {
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
  if (st.req.provider) {  // an external provider (engine/external_provider.h)
    const wire::provider_choice& c = *st.req.provider;
    std::string model = c.external_model.empty() ? st.req.model : c.external_model;  // named: GCC 12 coroutines
    auto pe = co_await engine::resolve_provider(deps.providers, c.id, c.type, std::move(model), http.caller.name);
    if (!pe) {
      co_await wire::send_error(out, responses_surface(), pe.error());
      co_return;
    }
    st.provider = std::move(*pe);
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
