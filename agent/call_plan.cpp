#include "agent/call_plan.h"

#include <algorithm>
#include <chrono>
#include <set>

#include "agent/rule_book.h"
#include "agent/tool_risk.h"
#include "common/ids.h"

namespace warden::agent {

std::string canonical_call_key(const std::string& name, const json& args) {
  // nlohmann's json objects keep keys sorted, so dump() is canonical.
  return name + ":" + dump_safe(args);
}

std::int64_t unix_ms_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

namespace {

tools::tool* enabled_tool(const std::vector<tools::tool*>& selected, const std::string& name) {
  for (auto* t : selected) {
    if (t->info().name == name) return t;
  }
  return nullptr;
}

/// The mode that was applied: a gate whose confirm is off (explicit confirm_tool_calls: false, or a
/// non-streaming request without a mode) asks nothing, whatever the folded mode says: "off".
permission_mode applied_mode(const gate_policy& p) {
  if (!p.bypass && !p.confirm && (p.mode == permission_mode::ask || p.mode == permission_mode::auto_)) {
    return permission_mode::off;
  }
  return p.mode;
}

risk_note note_of(const risk::risk_assessment& r) {
  risk_note n;
  n.level = to_string(r.level);
  n.reasons = r.reasons;
  return n;
}

call_plan plan_one(pending_call call, const std::vector<tools::tool*>& selected, const loop_context& cx,
                   const gate_policy& policy) {
  call_plan p;
  p.args = parse_json(call.arguments.empty() ? std::string_view("{}") : std::string_view(call.arguments));
  if (p.args && !p.args->is_object()) p.args.reset();
  p.tool = enabled_tool(selected, call.name);
  const tools::isolation mode = policy.bypass ? tools::isolation::bypass : tools::isolation::sandboxed;
  call_facts facts;
  facts.name = call.name;
  facts.raw_arguments = call.arguments;
  facts.arguments_valid = p.args.has_value();
  facts.enabled = p.tool != nullptr;
  if (p.tool) {
    facts.traits = p.args ? p.tool->traits_for_call(*p.args) : p.tool->info().traits;
    facts.unavailable = p.tool->unavailable(mode);
  }
  if (p.tool && p.args) {
    const risk::risk_assessment assessed = classify_tool_call(p.tool->info(), facts.traits, *p.args);
    facts.high_risk = assessed.level == risk::risk_level::high;
    p.start.risk = note_of(assessed);
    p.record.value.risk_level = to_string(assessed.level);
    p.record.value.risk_reasons = assessed.reasons;
    if (cx.rt.rules && needs_confirmation(policy, facts.traits, facts.high_risk)) {
      // A request that named no session (cx.session is then the shared "_default") uses no
      // session rules; the verdict goes along so that no prefix rule covers a named danger.
      facts.rule_id = cx.rt.rules->match(cx.opts.session_id, call.name, *p.args, unix_ms_now(), assessed,
                                          cx.opts.owner);
    }
  }
  p.decision = decide_call(facts, policy);
  p.start.tool = call.name;
  p.start.call_id = call.id;
  p.start.arguments = p.args ? *p.args : json::object();
  p.start.healed = call.from_text;
  p.call = std::move(call);
  return p;
}

}  // namespace

tracked_record::~tracked_record() {
  if (!recorder_ || done_) return;
  if (started_) {  // it ran: the row says so, with what happened next
    value.allowed = true;
    value.status = run_status::ran;
    if (value.reason.empty()) value.reason = "the client went away while the call was running; warden stopped it";
  } else {
    value.allowed = false;
    value.status = run_status::not_run;
    value.by = decided_by::client_gone;
    if (value.reason.empty()) value.reason = "the client went away before the call was settled";
  }
  if (std::find(value.notes.begin(), value.notes.end(), k_note_client_gone) == value.notes.end()) {
    value.notes.push_back(k_note_client_gone);
  }
  value.finished_unix_ms = unix_ms_now();
  recorder_->record_now(row, value);
}

std::vector<call_plan> plan_calls(std::vector<pending_call> calls, const std::vector<tools::tool*>& selected,
                                  const loop_context& cx) {
  const gate_policy policy = cx.opts.policy();
  std::vector<call_plan> plans;
  std::set<std::string> ids;
  for (auto& call : calls) {
    // Every call needs its own id: results, cards and approvals are matched by it.
    if (call.id.empty() || !ids.insert(call.id).second) {
      call.id = ids::new_id(ids::kind::tool_call);
      ids.insert(call.id);
    }
    call_plan p = plan_one(std::move(call), selected, cx, policy);
    auto& rec = p.record.value;
    rec.call_id = p.call.id;
    rec.session_id = cx.session;
    rec.owner = cx.opts.owner;
    rec.surface = cx.opts.surface;
    rec.mode = to_string(applied_mode(policy));
    rec.tool = p.call.name;
    rec.arguments = p.args ? dump_safe(*p.args) : p.call.arguments;
    rec.decision = p.decision.verdict;
    rec.by = p.decision.by;
    rec.rule_id = p.decision.rule_id;
    rec.started_unix_ms = unix_ms_now();
    p.record.track(cx.rt.recorder);
    plans.push_back(std::move(p));
  }
  return plans;
}

model::message assistant_message(const std::string& text, const std::vector<call_plan>& plans) {
  model::message m;
  m.role = model::role::assistant;
  if (!text.empty()) m.content.emplace_back(model::text_part{text});
  for (const auto& p : plans) {
    m.content.emplace_back(model::tool_call_part{p.call.id, p.call.name, p.args ? dump_safe(*p.args) : std::string("{}")});
  }
  return m;
}

}  // namespace warden::agent
