#include "api/wire/control_frames.h"

namespace warden::api::wire {

using namespace agent;  // the loop's event types

namespace {

json provenance(bool healed) { return json{{"source", "local"}, {"healed", healed}}; }

json start_frame(const tool_start& s) {
  json prov = provenance(s.healed);
  if (s.provisional) prov["provisional"] = true;
  json j{{"type", "tool_start"},       {"tool_name", s.tool},         {"tool_call_id", s.call_id},
         {"arguments", s.arguments},   {"provenance", std::move(prov)}, {"approval_id", s.approval_id},
         {"awaiting_confirmation", s.awaiting_confirmation}};
  if (s.risk) j["risk"] = json{{"level", s.risk->level}, {"reasons", s.risk->reasons}};
  return j;
}

}  // namespace

json control_json(const loop_event& ev) {
  if (const auto* s = std::get_if<tool_status>(&ev)) return json{{"type", "tool_status"}, {"content", s->text}};
  if (const auto* s = std::get_if<tool_start>(&ev)) return start_frame(*s);
  if (const auto* a = std::get_if<tool_args>(&ev)) {
    return json{{"type", "tool_args"}, {"tool_name", a->tool}, {"tool_call_id", a->call_id}, {"text", a->text}};
  }
  if (const auto* o = std::get_if<tool_output>(&ev)) {
    return json{{"type", "tool_output"}, {"tool_name", o->tool}, {"tool_call_id", o->call_id}, {"text", o->text}};
  }
  const auto& e = std::get<tool_end>(ev);
  json j{{"type", "tool_end"}, {"tool_name", e.tool}, {"tool_call_id", e.call_id}, {"result", e.result},
         {"provenance", provenance(e.healed)}};
  if (!e.decided_by.empty()) {
    j["decided_by"] = e.decided_by;
    j["allowed"] = e.allowed;
  }
  return j;
}

}  // namespace warden::api::wire
