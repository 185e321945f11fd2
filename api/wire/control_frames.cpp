#include "api/wire/control_frames.h"

#include "api/wire/vocabulary.h"

namespace warden::api::wire {

using namespace agent;  // the loop's event types
namespace n = names;

namespace {

json provenance(bool healed) { return json{{"source", "local"}, {"healed", healed}}; }

json start_frame(const tool_start& s) {
  json prov = provenance(s.healed);
  if (s.provisional) prov[n::provisional] = true;
  json j{{n::type, n::tool_start},       {n::tool_name, s.tool},         {n::tool_call_id, s.call_id},
         {n::arguments, s.arguments},   {n::provenance, std::move(prov)}, {n::approval_id, s.approval_id},
         {n::awaiting_confirmation, s.awaiting_confirmation}};
  if (s.risk) j[n::risk] = json{{"level", s.risk->level}, {"reasons", s.risk->reasons}};
  return j;
}

json elicitation_frame(const elicitation_request& q) {
  json j{{n::type, "elicitation_request"}, {n::tool_name, q.tool},  {n::tool_call_id, q.call_id},
         {n::approval_id, q.approval_id},  {"server", q.server},    {"mode", q.mode},
         {"message", q.message}};
  if (q.mode == "url") {
    j["url"] = q.url;
  } else {
    j["requested_schema"] = q.requested_schema;
  }
  return j;
}

}  // namespace

json truncation_json(const model::context_truncated& t) {
  json dropped = json::array();
  for (const auto& d : t.dropped) {
    json m{{"index", d.index}, {"role", d.role}, {"preview", d.preview}};
    if (!d.tool_call_ids.empty()) m["tool_call_ids"] = d.tool_call_ids;
    dropped.push_back(std::move(m));
  }
  return json{{"policy", t.policy},
              {"dropped_messages", t.dropped.size()},
              {"dropped", std::move(dropped)},
              {"prompt_tokens_before", t.prompt_tokens_before},
              {"prompt_tokens_after", t.prompt_tokens_after},
              {"n_ctx", t.n_ctx}};
}

json control_json(const loop_event& ev) {
  if (const auto* c = std::get_if<model::context_truncated>(&ev)) {
    json j = truncation_json(*c);
    j[n::type] = "context_truncated";
    return j;
  }
  if (const auto* s = std::get_if<tool_status>(&ev)) return json{{n::type, n::tool_status}, {n::content, s->text}};
  if (const auto* s = std::get_if<tool_start>(&ev)) return start_frame(*s);
  if (const auto* a = std::get_if<tool_args>(&ev)) {
    return json{{n::type, n::tool_args}, {n::tool_name, a->tool}, {n::tool_call_id, a->call_id}, {n::text, a->text}};
  }
  if (const auto* q = std::get_if<elicitation_request>(&ev)) return elicitation_frame(*q);
  if (const auto* o = std::get_if<tool_output>(&ev)) {
    return json{{n::type, n::tool_output}, {n::tool_name, o->tool}, {n::tool_call_id, o->call_id}, {n::text, o->text}};
  }
  const auto& e = std::get<tool_end>(ev);
  json j{{n::type, n::tool_end}, {n::tool_name, e.tool}, {n::tool_call_id, e.call_id}, {n::result, e.result},
         {n::provenance, provenance(e.healed)}};
  if (!e.decided_by.empty()) {
    j[n::decided_by] = e.decided_by;
    j[n::allowed] = e.allowed;
  }
  return j;
}

}  // namespace warden::api::wire
