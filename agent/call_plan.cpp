#include "agent/call_plan.h"

#include <chrono>
#include <set>

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

call_plan plan_one(pending_call call, const std::vector<tools::tool*>& selected, const gate_flags& flags) {
  call_plan p;
  p.args = parse_json(call.arguments.empty() ? std::string_view("{}") : std::string_view(call.arguments));
  if (p.args && !p.args->is_object()) p.args.reset();
  p.tool = enabled_tool(selected, call.name);
  const tools::isolation mode = flags.bypass_permissions ? tools::isolation::bypass : tools::isolation::sandboxed;
  call_facts facts{call.name, call.arguments, p.args.has_value(), p.tool != nullptr,
                   p.tool ? p.tool->info().traits : tools::tool_traits{},
                   p.tool ? p.tool->unavailable(mode) : std::nullopt};
  p.decision = decide_call(facts, flags);
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
  value.allowed = false;
  value.by = store::decided_by::cancel;
  if (value.reason.empty()) value.reason = "the client went away before the call was settled";
  value.finished_unix_ms = unix_ms_now();
  recorder_->record_now(value);
}

std::vector<call_plan> plan_calls(std::vector<pending_call> calls, const std::vector<tools::tool*>& selected,
                                  const gate_flags& flags, const std::string& session_id, call_recorder* recorder) {
  std::vector<call_plan> plans;
  std::set<std::string> ids;
  for (auto& call : calls) {
    // Every call needs its own id: results, cards and approvals are matched by it.
    if (call.id.empty() || !ids.insert(call.id).second) {
      call.id = ids::new_id(ids::kind::tool_call);
      ids.insert(call.id);
    }
    call_plan p = plan_one(std::move(call), selected, flags);
    p.record.value.call_id = p.call.id;
    p.record.value.session_id = session_id;
    p.record.value.tool = p.call.name;
    p.record.value.arguments = p.args ? dump_safe(*p.args) : p.call.arguments;
    p.record.value.decision = p.decision.verdict;
    p.record.value.by = flags.bypass_permissions ? store::decided_by::bypass : store::decided_by::policy;
    p.record.value.started_unix_ms = unix_ms_now();
    p.record.track(recorder);
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
