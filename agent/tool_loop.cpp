#include "agent/tool_loop.h"

#include <set>

#include "engine/context_fit.h"
#include "engine/healing.h"

#include <algorithm>

#include "agent/approval_step.h"
#include "agent/call_plan.h"
#include "agent/call_runner.h"
#include "agent/loop_state.h"
#include "common/ids.h"
#include "agent/permission_rules.h"

namespace warden::agent {

namespace asio = boost::asio;

namespace {

/// A choice that obliges a call (a named function or "required"): it applies to the first turn.
bool forced_choice(const model::chat_request& req) {
  return req.tool_choice && (req.tool_choice->kind == model::tool_choice::mode::named ||
                             req.tool_choice->kind == model::tool_choice::mode::required);
}
bool choice_none(const model::chat_request& req) {
  return req.tool_choice && req.tool_choice->kind == model::tool_choice::mode::none;
}

/// The request of one pass: the conversation so far, with tools while they are on.
model::chat_request turn_request(const model::chat_request& base, const std::vector<model::message>& history,
                                 const std::vector<tools::tool*>& selected, const loop_state& state,
                                 const loop_options& opts) {
  model::chat_request r;
  r.messages = base.messages;
  r.messages.insert(r.messages.end(), history.begin(), history.end());
  r.sampling = base.sampling;
  r.include_usage = true;
  r.route = base.route;  // every turn of a loop on the same engine of a pool
  if (state.tools_on()) {
    for (auto* t : selected) r.tools.push_back(t->info().spec());  // built per turn: nothing kept while parked
    if (base.tool_choice && state.send_tool_choice()) r.tool_choice = base.tool_choice;
    if (!opts.parallel_tool_calls) r.parallel_tool_calls = false;
  }
  return r;
}

model::message tool_message(const std::string& id, std::string content) {
  model::message m;
  m.role = model::role::tool;
  m.content.emplace_back(model::tool_result_part{id, std::move(content), false});
  return m;
}

/// Closes provisional cards that will get no real card (reference §2.9) with `result`.
/// False when the client went away.
asio::awaitable<bool> close_cards(const std::vector<provisional_card>& cards, event_out& out, std::string result) {
  for (const auto& c : cards) {
    if (!co_await out.send(end_event(c.tool, c.call_id, result, false))) co_return false;
  }
  co_return true;
}

/// Opens and reads one turn; nullopt when the loop must end (failure, cancel, client gone).
/// The turn's request (turn_request) is built here, so that it lives in this short frame and
/// not in run_tool_loop's, which a parked stream keeps.
asio::awaitable<std::optional<turn_read>> run_turn(engine::chat_backend& backend, const model::chat_request& base,
                                                   const std::vector<tools::tool*>& selected, const loop_state& state,
                                                   loop_context& cx, const provisional_options& prov) {
  ++cx.res.turns;
  const bool tools_on = state.tools_on();
  const model::chat_request req = turn_request(base, cx.res.messages, selected, state, cx.opts);
  std::function<asio::awaitable<bool>()> keep_alive = [&cx]() -> asio::awaitable<bool> {
    const bool ok = co_await cx.out.send(ping_event());
    co_return ok;
  };
  // Calls written as text are healed for the selected tools, in a tool-less pass too, so their
  // markup never reaches the user (the calls of such a pass are not acted on: turn_reader.h).
  std::set<std::string> heal;
  if (cx.opts.heal_tool_calls.value_or(cx.rt.heal_tool_calls)) {
    for (const tools::tool* t : selected) heal.insert(t->info().name);
  }
  engine::context_fitting_backend fitting(backend, cx.opts.context_overflow);
  engine::healing_backend healing(fitting, std::move(heal));
  auto opened = co_await healing.open_turn(req, cx.token, std::move(keep_alive));
  if (!opened) {
    if (!cx.token->cancelled() && !cx.out.gone()) cx.res.failure = opened.error();
    co_return std::nullopt;
  }
  std::unique_ptr<engine::chat_turn> turn = std::move(*opened);
  auto stop_upstream = cx.token->on_cancel(turn->canceller());
  turn_read read = co_await read_turn(*turn, tools_on, cx.out, prov);
  if (read.usage) {
    if (!cx.res.usage) cx.res.usage.emplace();
    *cx.res.usage += *read.usage;
  }
  if (read.client_gone) cx.res.client_gone = true;
  cx.res.truncated = read.truncated;
  if (read.failure && !cx.token->cancelled()) cx.res.failure = std::move(read.failure);
  // A turn cut short by a cancel is not acted on; its provisional cards are closed.
  if (read.client_gone || cx.res.failure || cx.token->cancelled()) {
    if (!read.client_gone) co_await close_cards(read.provisional, cx.out, unresolved_card_result(cx.res.failure));
    co_return std::nullopt;
  }
  co_return read;
}

/// A call that shares a provisional card's id but is not the carded call (another tool, or a later
/// call of it) loses the id — the plan gives it a fresh one — so a card is only ever reconciled
/// with a call of its own tool, never with a call that will be gated.
void keep_card_ids(turn_read& turn) {
  for (const auto& card : turn.provisional) {
    bool kept = false;
    for (auto& c : turn.calls) {
      if (c.id != card.call_id) continue;
      if (!kept && c.name == card.tool) kept = true;
      else c.id.clear();
    }
  }
}

/// Applies the answers of a resumed turn; true when a call still needs a person and the loop
/// parks (loop_options::park_approvals).
bool preset_or_park(std::vector<call_plan>& plans, loop_context& cx) {
  bool park = false;
  for (auto& p : plans) {
    const bool asks = p.decision.verdict == call_verdict::ask;
    if (cx.resume) {
      auto it = cx.resume->decisions.find(p.call.id);
      // An answer applies to a call that asks; a person's "no" (or an expiry) also holds for a
      // call the policy would now let run, so no later change of policy overturns it.
      if (it != cx.resume->decisions.end() &&
          (asks || (p.decision.verdict == call_verdict::run && it->second != approval_outcome::allowed))) {
        p.preset = it->second;
        continue;
      }
    }
    if (asks && cx.opts.park_approvals) park = true;
  }
  return park;
}

/// Stops on a turn whose calls wait for answers: nothing runs, nothing is recorded yet.
void park(const std::string& text, std::vector<call_plan>& plans, loop_context& cx) {
  parked_turn t;
  t.text = text;
  for (auto& p : plans) {
    t.calls.push_back(parked_call{p.call.id, p.call.name, p.call.arguments, p.decision.verdict == call_verdict::ask,
                                  p.start.arguments});
    p.record.written();  // recorded when the turn resumes and the call settles
  }
  cx.res.parked = std::move(t);
}

/// What a settled call means for the guidance (loop_guidance.h): a call that ran and failed gets
/// the tool-error nudge in its model-visible result; a person's "no" (or an approval question
/// left unanswered) ends the re-prompts; a call that ran moves them to the after-a-tool cap. A
/// call refused for arguments that are not JSON is no one's "no": the model may still be
/// re-prompted to call again. (A call to a tool that is not enabled ends the loop's tools
/// altogether: call_runner's force_final.)
void note_guidance(const call_plan& p, loop_context& cx, std::string& result) {
  const call_record& r = p.record.value;
  if (r.status == run_status::ran) {
    cx.reprompts.note_tool_ran();
    if (r.is_error && cx.guidance.error_nudge) result += std::string("\n\n") + k_tool_error_nudge;
  } else if (!r.allowed && (r.by == decided_by::user || r.by == decided_by::expired)) {
    cx.reprompts.note_denial();
  }
}

/// Plans, asks about and settles a turn's calls; appends the assistant and tool messages.
/// False when the client went away.
asio::awaitable<bool> run_calls(turn_read& turn, const std::vector<tools::tool*>& selected, loop_context& cx,
                                loop_state& state) {
  if (!cx.opts.parallel_tool_calls && turn.calls.size() > 1) turn.calls.resize(1);
  keep_card_ids(turn);
  auto plans = plan_calls(std::move(turn.calls), selected, cx);
  if (preset_or_park(plans, cx)) {
    co_await close_cards(turn.provisional, cx.out, "");
    park(turn.text, plans, cx);
    co_return false;
  }
  // A provisional card is reconciled by id (the runner sends the real tool_start); the others
  // (a call dropped above, an id the plan had to replace) are closed now.
  std::erase_if(turn.provisional, [&plans](const provisional_card& c) {
    return std::any_of(plans.begin(), plans.end(),
                       [&c](const call_plan& p) { return p.call.id == c.call_id && p.call.name == c.tool; });
  });
  if (!co_await close_cards(turn.provisional, cx.out, "")) co_return false;
  if (!co_await open_approvals(plans, cx)) co_return false;
  std::vector<model::message> tool_messages;
  for (auto& p : plans) {
    auto result = co_await settle_call(p, cx, state);
    if (!result) co_return false;
    note_guidance(p, cx, *result);
    tool_messages.push_back(tool_message(p.call.id, std::move(*result)));
    p.deny_on_cancel.reset();
    p.ticket.reset();
    // After a cancel the remaining calls are still answered (declined), card by card.
  }
  co_await cx.out.send_status("");
  cx.res.messages.push_back(assistant_message(turn.text, plans));
  for (auto& m : tool_messages) cx.res.messages.push_back(std::move(m));
  co_return !cx.out.gone();
}

void append_budget_notice(std::vector<model::message>& messages) {
  auto& part = std::get<model::tool_result_part>(messages.back().content.back());
  part.content += std::string("\n\n") + k_budget_spent;
}

/// A turn without calls (or with tools off) ends the loop: its finish reason and message.
void note_final_turn(const turn_read& turn, loop_result& res) {
  const auto f = turn.finish.value_or(model::finish_reason::stop);
  res.finish_reason = f == model::finish_reason::tool_calls ? model::finish_reason::stop : f;
  model::message last;
  last.role = model::role::assistant;
  if (!turn.text.empty()) last.content.emplace_back(model::text_part{turn.text});
  res.messages.push_back(std::move(last));
}

/// The parked turn as if the model had just written it (its calls keep the ids they were given).
turn_read resumed_turn(const resume_turn& r) {
  turn_read t;
  t.text = r.turn.text;
  for (const auto& c : r.turn.calls) t.calls.push_back(pending_call{c.id, c.name, c.arguments, false});
  t.finish = model::finish_reason::tool_calls;
  return t;
}

/// Settles the calls of the resumed turn (cx.resume); false when the loop must not go on.
asio::awaitable<bool> run_resumed(const std::vector<tools::tool*>& selected, loop_context& cx, loop_state& state) {
  turn_read t = resumed_turn(*cx.resume);
  bool go_on = co_await run_calls(t, selected, cx, state);
  if (go_on && !cx.token->cancelled() && state.end_turn()) append_budget_notice(cx.res.messages);
  co_return go_on;
}

/// A turn that announced an action without calling a tool (loop_guidance.h): when a re-prompt
/// is due, the turn and the re-prompt join the conversation and the loop goes on (true).
asio::awaitable<bool> reprompted(const turn_read& turn, const std::vector<tools::tool*>& selected, loop_context& cx) {
  if (!cx.guidance.act_reprompts) co_return false;
  std::vector<std::string> names;
  for (const tools::tool* t : selected) names.push_back(t->info().name);
  auto reprompt = cx.reprompts.after_text_turn(turn.text, names);
  if (!reprompt) co_return false;
  model::message said;
  said.role = model::role::assistant;
  said.content.emplace_back(model::text_part{turn.text});
  model::message ask;
  ask.role = model::role::user;
  ask.content.emplace_back(model::text_part{std::move(*reprompt)});
  cx.res.messages.push_back(std::move(said));
  cx.res.messages.push_back(std::move(ask));
  // The re-prompted turn's text was streamed; the next turn's starts a paragraph of its own
  // instead of running on from it ("Let me check.Final answer").
  cx.out.break_paragraph();
  const bool sent = co_await cx.out.send_status(k_nudging_status);
  co_return sent;
}

/// The text of the conversation's last message when it is the user's ("" otherwise).
std::string last_user_text(const std::vector<model::message>& messages) {
  if (messages.empty() || messages.back().role != model::role::user) return {};
  std::string text;
  for (const auto& part : messages.back().content) {
    if (const auto* t = std::get_if<model::text_part>(&part)) text += (text.empty() ? "" : "\n") + t->text;
  }
  return text;
}

/// The synthetic turn of an auto-injected search (built outside the coroutine: GCC 12).
turn_read injected_turn(const std::string& tool, const std::string& query, std::size_t top_k) {
  turn_read t;
  const json args = {{"query", query}, {"top_k", top_k}};
  t.calls.push_back(pending_call{ids::new_id(ids::kind::rag_auto_call), tool, args.dump(), false});
  t.finish = model::finish_reason::tool_calls;
  return t;
}

/// RAG auto-inject (reference §2.10): before the first model turn, a search of the request's
/// rag_scope with the user's last message; when chunks pass the cosine floor, search_knowledge_base
/// runs on that message (top_k = how many passed; the tool's hybrid ranking) as a call through the same chokepoint as the model's calls (gate, audit row,
/// tool_start / tool_end with a rag_auto_ id, an assistant tool_calls message and its tool
/// message). Skipped under `ask`, when resuming, and without the tool or a scope. False when the
/// client went away.
asio::awaitable<bool> auto_inject(const model::chat_request& req, const std::vector<tools::tool*>& selected,
                                  loop_context& cx, loop_state& state) {
  const auto& o = cx.opts;
  if (!o.rag || !o.rag->autoinject || cx.rt.knowledge == nullptr || cx.resume != nullptr) co_return true;
  const gate_policy pol = o.policy();
  if (pol.confirm && !pol.bypass && pol.mode == permission_mode::ask) co_return true;
  auto tool = std::find_if(selected.begin(), selected.end(),
                           [](const tools::tool* t) { return t->info().traits.needs_knowledge_base; });
  const std::string query = last_user_text(req.messages);
  if (tool == selected.end() || query.find_first_not_of(" \t\r\n") == std::string::npos) co_return true;
  auto hits = co_await tools::autoinject_hits(*cx.rt.knowledge, *o.rag, query, o.owner, o.may_bypass);
  if (hits.empty()) co_return true;
  turn_read t = injected_turn((*tool)->info().name, query, hits.size());
  co_return co_await run_calls(t, selected, cx, state);
}

guidance_switches effective_guidance(const loop_options& o, const tool_runtime& rt) {
  return {.prompt_nudge = o.tool_prompt_nudge.value_or(rt.guidance.prompt_nudge),
          .error_nudge = o.tool_error_nudge.value_or(rt.guidance.error_nudge),
          .act_reprompts = o.act_reprompts.value_or(rt.guidance.act_reprompts)};
}

/// The prompt nudge (loop_guidance.h), once per loop so every turn's prompt starts the same.
void add_guidance(model::chat_request& req, const std::vector<tools::tool*>& selected, const loop_options& opts,
                  const guidance_switches& g) {
  if (!g.prompt_nudge) return;
  std::vector<const tools::tool_info*> infos;
  for (const tools::tool* t : selected) infos.push_back(&t->info());
  add_prompt_nudge(req.messages, tool_prompt_nudge(utc_date_today(), infos, opts.policy().bypass));
}

}  // namespace

asio::awaitable<loop_result> run_tool_loop(engine::chat_backend& backend, model::chat_request req,
                                           const loop_options& opts, tool_runtime& rt, loop_sink& sink,
                                           const resume_turn* resume) {
  loop_result res;
  event_out out(sink);
  if (req.route.follow.empty()) {  // every turn of this loop on one engine of a pool (its prompt cache)
    req.route.follow = "loop_" + ids::random_hex(8);
    req.route.record.push_back(req.route.follow);
  }
  const auto selected = opts.selected(rt.tools);
  const provisional_options prov(&selected, opts.policy(), opts.parallel_tool_calls);
  // tool_choice "none": no call runs, structured or written as text (the model is not offered
  // the tools, and whatever call it still writes is hidden and ignored).
  loop_state state(!selected.empty() && !choice_none(req), opts.max_tool_calls_per_message, forced_choice(req));
  std::string session = opts.session_id.empty() ? std::string(k_shared_session) : opts.session_id;
  std::shared_ptr<cancel_token> token = cancel_token::make();
  loop_context cx(opts, rt, session, token, out, res);
  std::optional<cancel_registry::registration> by_cancel_id;
  if (!opts.cancel_id.empty()) {
    by_cancel_id.emplace(rt.cancels.add(cancel_key::cancel_id, opts.cancel_id, cx.token, opts.owner));
  }
  auto by_session = rt.cancels.add(cancel_key::session_id, cx.session, cx.token, opts.owner);
  cx.resume = resume;
  cx.guidance = effective_guidance(opts, rt);
  if (state.tools_on()) add_guidance(req, selected, opts, cx.guidance);
  bool go_on = true;
  bool nudging = false;  ///< a re-prompt's status line is showing
  if (resume && state.tools_on()) go_on = co_await run_resumed(selected, cx, state);
  if (!resume && state.tools_on()) go_on = co_await auto_inject(req, selected, cx, state);
  cx.resume = nullptr;

  while (go_on && !cx.token->cancelled()) {
    auto turn = co_await run_turn(backend, req, selected, state, cx, prov);
    if (!turn) break;
    if (nudging) {  // the re-prompted turn is over
      nudging = false;
      const bool sent = co_await out.send_status("");
      if (!sent) break;
    }
    res.final_text = turn->text;
    if (turn->calls.empty() && state.tools_on()) {
      const bool again = co_await reprompted(*turn, selected, cx);
      if (again) {
        nudging = true;
        continue;
      }
    }
    if (turn->calls.empty() || !state.tools_on()) {
      note_final_turn(*turn, res);
      co_await close_cards(turn->provisional, out, "");  // none expected: no calls, or tools off for the turn
      break;
    }
    if (!co_await run_calls(*turn, selected, cx, state)) break;
    if (cx.token->cancelled()) break;
    if (state.end_turn()) append_budget_notice(res.messages);
  }
  res.client_gone = res.client_gone || out.gone();
  if (cx.token->cancelled()) {
    res.finish_reason = model::finish_reason::stop;
    const bool shutdown = cx.token->why() == k_shutdown_reason;
    if (shutdown && !res.failure) res.failure = make_error(errc::upstream_unavailable, describe(k_shutdown_reason));
    res.cancelled = !shutdown;
  }
  co_return res;
}

}  // namespace warden::agent
