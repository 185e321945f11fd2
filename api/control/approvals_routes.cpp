#include "api/control/approvals_routes.h"

#include <spdlog/spdlog.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <deque>
#include <mutex>

#include "agent/approvals.h"
#include "agent/permission_rules.h"
#include "agent/rule_book.h"
#include "api/control/extensions.h"
#include "api/wire/vocabulary.h"
#include "common/ids.h"
#include "common/query.h"
#include "tools/mcp_protocol.h"

namespace warden::api::control {

namespace asio = boost::asio;

namespace {

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

error bad(std::string message, std::string param, std::string code = "invalid_value") {
  return make_error(errc::invalid_request, std::move(message), std::move(param), std::move(code));
}

json approval_json(const agent::approval_info& a) {
  json risk = nullptr;
  if (a.risk) risk = {{"level", a.risk->level}, {"reasons", a.risk->reasons}};
  json j = {{"approval_id", a.approval_id}, {"session_id", a.session_id}, {"owner", a.owner}, {"tool", a.tool},
            {"tool_call_id", a.call_id},    {"arguments", a.arguments},   {"risk", risk},
            {"created_at_ms", a.created_unix_ms}, {"expires_at_ms", a.expires_unix_ms}, {"kind", a.kind}};
  if (a.kind == "elicitation") j["elicitation"] = a.elicitation;
  return j;
}

json rule_json(const agent::permission_rule& r) {
  json j = {{"id", r.id},     {"scope", agent::to_string(r.scope)}, {"session_id", r.session_id},
            {"owner", r.owner}, {"tool", r.tool},                       {"created_at_ms", r.created_unix_ms}};
  if (r.command_prefix) j["command_prefix"] = *r.command_prefix;
  if (r.path_prefix) j["path_prefix"] = *r.path_prefix;
  if (r.arguments) j["arguments"] = parse_json(*r.arguments).value_or(json(*r.arguments));
  j["expires_at_ms"] = r.expires_unix_ms == 0 ? json(nullptr) : json(r.expires_unix_ms);
  return j;
}

std::string list_body(json data) { return dump_safe(json{{"object", "list"}, {"data", std::move(data)}}); }
std::string deleted_body(const std::string& id) { return dump_safe(json{{"deleted", true}, {"id", id}}); }
std::string resolved_body(const std::optional<agent::permission_rule>& rule, std::string_view note = {}) {
  json body = {{"resolved", true}};
  if (rule) body["rule"] = rule_json(*rule);
  if (!note.empty()) {
    body["rule"] = nullptr;
    body["note"] = std::string(note);
  }
  return dump_safe(body);
}

/// What an allow_session answer for a call of the shared session says (issue 22).
constexpr std::string_view k_allowed_once_note =
    "allowed once, and no rule was remembered: the request that asked sent no session_id, so there is no "
    "session to remember it for (send a session_id with your requests to use \"allow_session\")";

/// Runs f on the blocking pool when there is one (SQLite), else inline.
template <class F>
asio::awaitable<std::invoke_result_t<F>> off_thread(control_deps& deps, F f) {
  co_return co_await warden::off_thread(deps.tools->pool, std::move(f));
}

/// The session_id query parameter ("" when absent), or the 400.
result<std::string> session_param(const http_request& req) {
  auto s = query_param(req.query, "session_id");
  if (!s) return s.error();
  if (*s && !s->value().empty() && !agent::valid_session_id(**s)) {
    return bad("'session_id' must be 1 to 64 characters from A-Z, a-z, 0-9, '_' and '-'", "session_id");
  }
  return s->value_or("");
}

// ---- tool-confirm -------------------------------------------------------------------------

struct confirm_body {
  std::string approval_id;
  std::string decision;
  std::optional<std::string> session_id;
  std::optional<agent::rule_request> rule;
  json content = json::object();  ///< an elicitation's accepted form (issue 26)
};

bool elicitation_decision(const std::string& d) { return d == "accept" || d == "decline" || d == "cancel"; }

result<std::optional<agent::rule_request>> read_rule(const json& body, const std::string& decision) {
  auto it = body.find("rule");
  if (it == body.end() || it->is_null()) return std::optional<agent::rule_request>();
  if (decision != wire::names::allow_session && decision != wire::names::allow_always) {
    return bad("'rule' is only used with decision \"allow_session\" or \"allow_always\"", "rule");
  }
  if (!it->is_object()) return bad("'rule' must be an object", "rule", "invalid_type");
  for (const auto& [key, value] : it->items()) {
    if (key != "tool" && key != "command_prefix" && key != "path_prefix" && key != "expires_in_s") {
      return bad("'rule." + key.substr(0, 64) + "' is not a rule field (tool, command_prefix, path_prefix, expires_in_s)",
                 "rule." + key.substr(0, 64), "unknown_parameter");
    }
  }
  agent::rule_request r;
  for (const char* k : {"tool", "command_prefix", "path_prefix"}) {
    auto f = it->find(k);
    if (f == it->end() || f->is_null()) continue;
    if (!f->is_string()) return bad(std::string("'rule.") + k + "' must be a string", std::string("rule.") + k, "invalid_type");
    const std::string v = f->get<std::string>();
    if (std::string_view(k) == "tool") r.tool = v;
    else if (std::string_view(k) == "command_prefix") r.command_prefix = v;
    else r.path_prefix = v;
  }
  if (auto e = it->find("expires_in_s"); e != it->end() && !e->is_null()) {
    if (!e->is_number_integer()) return bad("'rule.expires_in_s' must be an integer", "rule.expires_in_s", "invalid_type");
    r.expires_in_s = e->get<std::int64_t>();
  }
  return std::optional<agent::rule_request>(std::move(r));
}

result<confirm_body> read_confirm(std::string_view raw) {
  auto body = parse_control_object(raw);
  if (!body) return body.error();
  auto strings = parse_control_body(raw, {"approval_id", "decision", "session_id"});
  if (!strings) return strings.error();
  confirm_body c;
  auto get = [&](const char* k) { auto it = strings->find(k); return it == strings->end() ? std::string() : it->second; };
  c.approval_id = get("approval_id");
  c.decision = get("decision");
  if (c.approval_id.empty()) return bad("'approval_id' is required", "approval_id", "missing_required_parameter");
  namespace n = wire::names;
  if (c.decision != n::allow && c.decision != n::deny && c.decision != n::allow_session &&
      c.decision != n::allow_always && !elicitation_decision(c.decision)) {
    return bad("'decision' must be \"allow\", \"deny\", \"allow_session\" or \"allow_always\" (an elicitation: "
               "\"accept\", \"decline\" or \"cancel\")",
               "decision");
  }
  if (auto s = strings->find("session_id"); s != strings->end()) c.session_id = s->second;
  if (auto it = body->find("content"); it != body->end() && !it->is_null()) {
    if (c.decision != "accept") return bad("'content' is only used with decision \"accept\"", "content");
    if (!it->is_object()) return bad("'content' must be an object", "content", "invalid_type");
    c.content = *it;
  }
  auto rule = read_rule(*body, c.decision);
  if (!rule) return rule.error();
  c.rule = std::move(*rule);
  return c;
}

/// Whether the tool declares a `path` argument (path_prefix rules are only for such tools: a
/// model could add a stray "path" to any call).
bool has_path_parameter(const tools::registry& reg, const std::string& tool) {
  const tools::tool* t = reg.find(tool);
  if (!t) return false;
  const json& params = t->info().parameters;
  auto props = params.find("properties");
  return props != params.end() && props->is_object() && props->contains("path");
}

/// The rule an allow_session / allow_always decision remembers, checked against what was asked.
result<agent::permission_rule> rule_for(const confirm_body& c, const agent::approval_info& asked,
                                        const tools::registry& reg) {
  if (c.rule && c.rule->path_prefix && !has_path_parameter(reg, asked.tool)) {
    return bad("path_prefix is only for tools with a 'path' argument; '" + asked.tool + "' has none", "rule.path_prefix");
  }
  const auto scope = c.decision == wire::names::allow_always ? agent::rule_scope::always : agent::rule_scope::session;
  auto r = agent::make_rule(c.rule, asked.tool, asked.arguments, scope,
                            scope == agent::rule_scope::session ? asked.session_id : std::string(), now_ms());
  if (!r) return r.error();
  r->id = ids::new_id(ids::kind::rule);
  r->owner = asked.owner;  // it covers the calls of whoever asked (who may answer: that owner or an admin)
  return r;
}

std::optional<std::string_view> scope_of(const confirm_body& c) {
  return c.session_id ? std::optional<std::string_view>(*c.session_id) : std::nullopt;
}

error not_pending() {
  return make_error(errc::not_found, "no pending tool call with this approval_id (unknown, already decided, or another session)",
                    "approval_id", "approval_not_found");
}

/// The pending question `c` answers, when the caller may see it: another owner's is answered
/// exactly like an unknown id (404), so ids of other keys do not leak.
std::optional<agent::approval_info> visible_ticket(const confirm_body& c, const principal& caller, control_deps& deps) {
  auto asked = deps.tools->approvals.find(c.approval_id, scope_of(c));
  if (!asked || !caller.may_access(asked->owner)) return std::nullopt;
  return asked;
}

/// An elicitation's answer: the decision must be one of its three, an accepted form must fit the
/// server's schema (the field named in `param`).
std::optional<error> elicitation_answer_error(const confirm_body& c, const agent::approval_info& asked) {
  const bool is_elicitation = asked.kind == "elicitation";
  if (is_elicitation != elicitation_decision(c.decision)) {
    return is_elicitation ? bad("this is an MCP server's request for input: answer it with decision \"accept\" (and its "
                                "'content'), \"decline\" or \"cancel\"",
                                "decision")
                          : bad("this is a tool call: answer it with \"allow\", \"deny\", \"allow_session\" or "
                                "\"allow_always\"",
                                "decision");
  }
  const auto mode = asked.elicitation.find("mode");
  const bool url_mode = mode != asked.elicitation.end() && *mode == "url";
  if (!is_elicitation || c.decision != "accept" || url_mode) return std::nullopt;
  auto ok = tools::mcp::check_elicitation_content(asked.elicitation.value("requestedSchema", json::object()), c.content);
  if (!ok) return bad(ok.error().message, "content." + ok.error().param);
  return std::nullopt;
}

asio::awaitable<void> answer_elicitation(const confirm_body& c, response_writer& out, control_deps& deps) {
  if (!deps.tools->approvals.resolve_elicitation(c.approval_id, c.decision, c.content, scope_of(c))) {
    co_return co_await wire::send_error(out, control_surface(), not_pending());
  }
  std::string text = resolved_body(std::nullopt);
  co_await out.send(200, "application/json", std::move(text));
}

asio::awaitable<void> tool_confirm(const http_request& req, response_writer& out, control_deps& deps) {
  auto c = read_confirm(req.body);
  if (!c) co_return co_await wire::send_error(out, control_surface(), c.error());
  {
    auto seen = visible_ticket(*c, req.caller, deps);
    if (!seen) co_return co_await wire::send_error(out, control_surface(), not_pending());
    if (auto e = elicitation_answer_error(*c, *seen)) co_return co_await wire::send_error(out, control_surface(), *e);
    if (seen->kind == "elicitation") co_return co_await answer_elicitation(*c, out, deps);
  }
  const bool remember = c->decision == wire::names::allow_session || c->decision == wire::names::allow_always;
  // The owner check comes first, for every decision: the ticket's owner never changes, so a
  // resolve() of the same id afterwards acts on the ticket checked here.
  auto asked = visible_ticket(*c, req.caller, deps);
  if (!asked) co_return co_await wire::send_error(out, control_surface(), not_pending());
  std::optional<agent::permission_rule> rule;
  std::string_view note;
  if (remember) {
    if (c->decision == wire::names::allow_session && asked->session_id == agent::k_shared_session) {
      // Requests without a session_id share one session: a rule made there would cover every
      // other id-less client, so the call is allowed once and nothing is remembered (issue 22).
      note = k_allowed_once_note;
    } else {
      auto made = rule_for(*c, *asked, deps.tools->tools);
      if (!made) co_return co_await wire::send_error(out, control_surface(), made.error());
      if (!deps.tools->rules) {
        co_return co_await wire::send_error(out, control_surface(), make_error(errc::upstream_unavailable, "remembered rules are not available"));
      }
      rule = std::move(*made);
      auto add = [&deps, r = *rule] { return deps.tools->rules->add(r); };
      result<void> added = co_await off_thread(deps, add);
      if (!added) co_return co_await wire::send_error(out, control_surface(), added.error());  // the call stays pending
    }
  }
  const auto d = c->decision == "deny" ? agent::approval_decision::deny : agent::approval_decision::allow;
  if (!deps.tools->approvals.resolve(c->approval_id, d, scope_of(*c))) {
    if (rule) {
      auto drop = [&deps, id = rule->id] { return deps.tools->rules->remove(id); };
      (void)co_await off_thread(deps, drop);
    }
    co_return co_await wire::send_error(out, control_surface(), not_pending());
  }
  if (!note.empty()) spdlog::info("tool-confirm: allow_session for a call of a request without a session_id: allowed once, no rule");
  std::string text = resolved_body(rule, note);
  co_await out.send(200, "application/json", std::move(text));
}

// ---- the inbox ----------------------------------------------------------------------------

asio::awaitable<void> list_approvals(const http_request& req, response_writer& out, control_deps& deps) {
  auto session = session_param(req);
  if (!session) co_return co_await wire::send_error(out, control_surface(), session.error());
  json data = json::array();
  for (const auto& a : deps.tools->approvals.list(*session)) {
    if (req.caller.may_access(a.owner)) data.push_back(approval_json(a));
  }
  std::string text = list_body(std::move(data));
  co_await out.send(200, "application/json", std::move(text));
}

std::string requested_frame(const agent::approval_info& a) {
  return "event: approval_requested\ndata: " +
         dump_safe(json{{"type", "approval_requested"}, {"approval", approval_json(a)}}) + "\n\n";
}

std::string settled_frame(const agent::approval_event& ev) {
  return "event: approval_settled\ndata: " +
         dump_safe(json{{"type", "approval_settled"},
                        {"approval_id", ev.info.approval_id},
                        {"session_id", ev.info.session_id},
                        {"outcome", ev.outcome}}) +
         "\n\n";
}

/// What one inbox stream has yet to send; the registry's listener fills it from any thread and
/// wakes the stream's coroutine through its timer (touched on the stream's executor only).
class inbox_feed {
 public:
  explicit inbox_feed(asio::any_io_executor ex) : timer(std::move(ex)) {}
  void push(std::string frame) {
    std::lock_guard lk(mu_);
    if (overflowed_ || frames_.size() >= k_max_queued || bytes_ + frame.size() > k_max_queued_bytes) {
      overflowed_ = true;  // the reader stopped reading: drop it rather than grow without bound
      frames_.clear();
      bytes_ = 0;
      return;
    }
    bytes_ += frame.size();
    frames_.push_back(std::move(frame));
  }
  bool empty() {
    std::lock_guard lk(mu_);
    return frames_.empty() && !overflowed_;
  }
  std::deque<std::string> take(bool& overflowed) {
    std::lock_guard lk(mu_);
    overflowed = overflowed_;
    bytes_ = 0;
    return std::exchange(frames_, {});
  }
  asio::steady_timer timer;

 private:
  // A reader that stopped reading is dropped once this much waits for it.
  static constexpr std::size_t k_max_queued = 10000;
  static constexpr std::size_t k_max_queued_bytes = 8u << 20;
  std::mutex mu_;
  std::deque<std::string> frames_;
  std::size_t bytes_ = 0;
  bool overflowed_ = false;
};

class subscription {
 public:
  subscription(agent::approval_registry& reg, std::shared_ptr<inbox_feed> feed, std::string session, principal who)
      : reg_(reg) {
    id_ = reg_.subscribe([feed, session = std::move(session), who = std::move(who)](const agent::approval_event& ev) {
      if (!session.empty() && ev.info.session_id != session) return;
      if (!who.may_access(ev.info.owner)) return;  // another key's questions are not in this inbox
      feed->push(ev.settled ? settled_frame(ev) : requested_frame(ev.info));
      asio::post(feed->timer.get_executor(), [feed] { feed->timer.cancel(); });
    });
  }
  ~subscription() { reg_.unsubscribe(id_); }
  subscription(const subscription&) = delete;
  subscription& operator=(const subscription&) = delete;

 private:
  agent::approval_registry& reg_;
  std::uint64_t id_ = 0;
};

/// Sends what is queued; false when the client is gone or fell too far behind.
asio::awaitable<bool> flush(inbox_feed& feed, response_writer& out) {
  bool overflowed = false;
  auto frames = feed.take(overflowed);
  for (auto& f : frames) {
    if (!co_await out.write_stream(std::move(f))) co_return false;
  }
  co_return !overflowed;
}

asio::awaitable<void> approvals_stream(const http_request& req, response_writer& out, control_deps& deps) {
  auto session = session_param(req);
  if (!session) co_return co_await wire::send_error(out, control_surface(), session.error());
  auto ex = co_await asio::this_coro::executor;
  auto feed = std::make_shared<inbox_feed>(ex);
  subscription sub(deps.tools->approvals, feed, *session, req.caller);  // before the snapshot: nothing is missed
  if (!co_await out.begin_stream()) co_return;
  for (const auto& a : deps.tools->approvals.list(*session)) {
    if (req.caller.may_access(a.owner)) feed->push(requested_frame(a));
  }
  while (true) {
    const bool open = co_await flush(*feed, out);
    if (!open) co_return;
    // A frame queued while a write was in flight found no wait to cancel: send it now. (Checked
    // on the strand just before waiting: a later push posts its cancel after the wait begins.)
    if (!feed->empty()) continue;
    feed->timer.expires_after(deps.tools->ping_interval);
    auto [ec] = co_await feed->timer.async_wait(asio::as_tuple(asio::use_awaitable));
    if ((co_await asio::this_coro::cancellation_state).cancelled() != asio::cancellation_type::none) co_return;
    if (ec) continue;  // woken by a new frame
    const bool alive = co_await out.write_stream(": ping\n\n");
    if (!alive) co_return;
  }
}

// ---- rules ---------------------------------------------------------------------------------

asio::awaitable<void> list_rules(const http_request& req, response_writer& out, control_deps& deps) {
  auto session = session_param(req);
  if (!session) co_return co_await wire::send_error(out, control_surface(), session.error());
  json data = json::array();
  if (deps.tools->rules) {
    for (const auto& r : deps.tools->rules->list(*session, now_ms())) {
      if (req.caller.may_access(r.owner)) data.push_back(rule_json(r));
    }
  }
  std::string text = list_body(std::move(data));
  co_await out.send(200, "application/json", std::move(text));
}

asio::awaitable<void> delete_rule(const http_request& req, response_writer& out, control_deps& deps) {
  constexpr std::string_view prefix = "/api/permissions/rules/";
  const std::string id = req.path.substr(std::min(req.path.size(), prefix.size()));
  if (id.empty() || id.find('/') != std::string::npos || !deps.tools->rules) {
    co_return co_await wire::send_error(out, control_surface(), make_error(errc::not_found, "no rule with this id", "id", "rule_not_found"));
  }
  // Another key's rule is answered like an unknown one (its owner never changes).
  if (auto r = deps.tools->rules->find(id); !r || !req.caller.may_access(r->owner)) {
    co_return co_await wire::send_error(out, control_surface(), make_error(errc::not_found, "no rule with this id", "id", "rule_not_found"));
  }
  auto drop = [&deps, id] { return deps.tools->rules->remove(id); };
  result<bool> removed = co_await off_thread(deps, drop);
  if (!removed) co_return co_await wire::send_error(out, control_surface(), removed.error());
  if (!*removed) {
    co_return co_await wire::send_error(out, control_surface(), make_error(errc::not_found, "no rule with this id", "id", "rule_not_found"));
  }
  std::string text = deleted_body(id);
  co_await out.send(200, "application/json", std::move(text));
}

using handler_fn = asio::awaitable<void> (*)(const http_request&, response_writer&, control_deps&);

route_handler bind(control_deps& deps, handler_fn fn) {
  return [&deps, fn](const http_request& req, response_writer& out) -> asio::awaitable<void> {
    if (!deps.tools) {
      co_return co_await wire::send_error(out, control_surface(), make_error(errc::upstream_unavailable, "the tool loop is not available"));
    }
    co_await fn(req, out, deps);
  };
}

}  // namespace

std::vector<route> approval_routes(control_deps& deps) {
  const surface* s = &control_surface();
  return {
      {"POST", "/api/inference/tool-confirm", false, auth_policy::api_key, s, bind(deps, &tool_confirm)},
      {"GET", "/api/inference/approvals", false, auth_policy::api_key, s, bind(deps, &list_approvals)},
      {"GET", "/api/inference/approvals/stream", false, auth_policy::api_key, s, bind(deps, &approvals_stream)},
      {"GET", "/api/permissions/rules", false, auth_policy::api_key, s, bind(deps, &list_rules)},
      {"DELETE", "/api/permissions/rules/", true, auth_policy::api_key, s, bind(deps, &delete_rule)},
  };
}

}  // namespace warden::api::control
