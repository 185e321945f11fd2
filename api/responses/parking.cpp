#include "api/responses/parking.h"

#include "api/wire/loop_fields.h"
#include "common/json_fields.h"
#include "model/serialize.h"

namespace warden::api::responses {

namespace {

constexpr int k_version = 2;

json loop_json(const agent::loop_options& o) {
  json j = {{"enable_tools", o.enable_tools},
            {"confirm_code_execution", o.gate.confirm_code_execution},
            {"bypass_permissions", o.gate.bypass_permissions},
            {"max_tool_calls_per_message", o.max_tool_calls_per_message},
            {"tool_call_timeout_s", o.tool_call_timeout_s},
            {"session_id", o.session_id}};
  if (o.enabled_tools) j["enabled_tools"] = *o.enabled_tools;
  if (o.mcp_enabled) j["mcp_enabled"] = true;
  if (!o.builtin_tools) j["builtin_tools"] = false;
  if (o.gate.confirm_tool_calls) j["confirm_tool_calls"] = *o.gate.confirm_tool_calls;
  if (o.gate.permission_mode) j["permission_mode"] = *o.gate.permission_mode;
  if (o.context_overflow != model::overflow_policy::error) j["context_overflow"] = model::to_string(o.context_overflow);
  return j;
}

/// The typed options back; nullopt when a value has the wrong type (a damaged row).
std::optional<agent::loop_options> loop_from_json(const json& j) {
  if (!j.is_object()) return std::nullopt;
  try {
    agent::loop_options o;
    o.enable_tools = j.at("enable_tools").get<bool>();
    o.gate.confirm_code_execution = j.at("confirm_code_execution").get<bool>();
    o.gate.bypass_permissions = j.at("bypass_permissions").get<bool>();
    o.max_tool_calls_per_message = j.at("max_tool_calls_per_message").get<int>();
    o.tool_call_timeout_s = j.at("tool_call_timeout_s").get<int>();
    o.session_id = j.at("session_id").get<std::string>();
    if (j.contains("enabled_tools")) o.enabled_tools = j["enabled_tools"].get<std::vector<std::string>>();
    if (j.contains("confirm_tool_calls")) o.gate.confirm_tool_calls = j["confirm_tool_calls"].get<bool>();
    if (j.contains("mcp_enabled")) o.mcp_enabled = j["mcp_enabled"].get<bool>();
    if (j.contains("builtin_tools")) o.builtin_tools = j["builtin_tools"].get<bool>();
    if (j.contains("permission_mode")) o.gate.permission_mode = j["permission_mode"].get<std::string>();
    if (j.contains("context_overflow")) {
      auto p = model::parse_overflow_policy(j["context_overflow"].get<std::string>());
      if (!p) return std::nullopt;
      o.context_overflow = *p;
    }
    o.surface = "openai.responses";
    return o;
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

/// The turn as one assistant message: its text, then its calls.
model::message turn_message(const agent::parked_turn& t) {
  model::message m;
  m.role = model::role::assistant;
  m.content.emplace_back(model::text_part{t.text});
  for (const auto& c : t.calls) m.content.emplace_back(model::tool_call_part{c.id, c.name, c.arguments});
  return m;
}

std::map<std::string, std::string> read_requests(const json& j) {
  std::map<std::string, std::string> out;
  const json requests = j.value("requests", json::object());  // named: items() must not outlive it
  for (const auto& [rid, call] : requests.items()) {
    if (call.is_string()) out[rid] = call.get<std::string>();
  }
  return out;
}

error unreadable() { return make_error(errc::internal, "the parked turn could not be read"); }

result<parked_state> decode_v2(const json& j) {
  auto m = model::message_from_json(j.value("message", json()));
  if (!m) return unreadable();
  const json calls = j.value("calls", json::array());
  parked_state p;
  std::size_t i = 0;
  for (const auto& part : m->content) {
    if (const auto* t = std::get_if<model::text_part>(&part)) {
      p.turn.text = t->text;
      continue;
    }
    const auto* c = std::get_if<model::tool_call_part>(&part);
    if (!c || i >= calls.size() || !calls[i].is_object() || calls[i].value("id", std::string()) != c->id) return unreadable();
    p.turn.calls.push_back(agent::parked_call{c->id, c->name, c->arguments, calls[i].value("needs_approval", false),
                                              calls[i].value("card", json::object())});
    ++i;
  }
  auto loop = loop_from_json(j.value("loop", json()));
  if (!loop) return make_error(errc::internal, "the parked request's tool fields could not be read");
  p.loop = std::move(*loop);
  p.requests = read_requests(j);
  p.expires_at_ms = j.value("expires_at_ms", std::int64_t{0});
  return p;
}

/// A row written before version 2: the turn as it was, the loop fields as the client sent them.
result<parked_state> decode_v1(const json& j, std::string_view request_json, std::span<const std::string> names) {
  parked_state p;
  p.turn.text = j.value("text", std::string());
  for (const auto& c : j.value("calls", json::array())) {
    p.turn.calls.push_back(agent::parked_call{c.value("id", std::string()), c.value("name", std::string()),
                                              c.value("arguments", std::string()), c.value("needs_approval", false),
                                              c.value("card", json::object())});
  }
  p.requests = read_requests(j);
  p.expires_at_ms = j.value("expires_at_ms", std::int64_t{0});
  json fields = json::parse(request_json, nullptr, false);
  if (!fields.is_object()) return make_error(errc::internal, "the parked request's tool fields could not be read");
  if (auto e = wire::take_loop_fields(fields, p.loop, names)) return *e;
  p.loop.surface = "openai.responses";
  return p;
}

}  // namespace

std::string encode_parked(const parked_state& p) {
  json calls = json::array();
  for (const auto& c : p.turn.calls) {
    calls.push_back({{"id", c.id}, {"needs_approval", c.needs_approval}, {"card", c.card_arguments}});
  }
  json j = {{"version", k_version},         {"message", model::to_json(turn_message(p.turn))},
            {"calls", std::move(calls)},    {"requests", p.requests},
            {"expires_at_ms", p.expires_at_ms}, {"loop", loop_json(p.loop)}};
  return dump_safe(j);
}

result<std::optional<parked_state>> decode_parked(std::string_view pending_json, std::string_view request_json,
                                                  std::span<const std::string> tool_names) {
  if (pending_json.empty()) return std::optional<parked_state>();
  json j = json::parse(pending_json, nullptr, false);
  if (!j.is_object()) return std::optional<parked_state>();
  auto p = j.value("version", 1) >= k_version ? decode_v2(j) : decode_v1(j, request_json, tool_names);
  if (!p) return p.error();
  return std::optional<parked_state>(std::move(*p));
}

result<agent::resume_turn> match_answers(const model_input& input, const std::string& previous_id,
                                         const std::optional<parked_state>& parked, std::int64_t now_ms) {
  if (!parked) {
    return field_invalid("'input' answers an approval request, but response '" + previous_id + "' has none pending",
                         "input");
  }
  if (!input.messages.empty()) {
    return field_invalid("'input' that answers approval requests may hold only mcp_approval_response items (the "
                         "parked tool calls are answered first)",
                         "input");
  }
  agent::resume_turn r;
  r.turn = parked->turn;
  for (const auto& a : input.approvals) {
    auto it = parked->requests.find(a.approval_request_id);
    if (it == parked->requests.end()) {
      return field_invalid("'approval_request_id' '" + a.approval_request_id.substr(0, 100) + "' is not one of response '" +
                               previous_id + "''s approval requests",
                           "input");
    }
    if (r.decisions.count(it->second)) {
      return field_invalid("'approval_request_id' '" + a.approval_request_id.substr(0, 100) + "' is answered twice", "input");
    }
    r.decisions[it->second] = a.approve ? agent::approval_outcome::allowed : agent::approval_outcome::denied;
  }
  const bool expired = parked->expires_at_ms > 0 && now_ms > parked->expires_at_ms;
  for (const auto& c : r.turn.calls) {
    if (!c.needs_approval) continue;
    if (expired) r.decisions[c.id] = agent::approval_outcome::timed_out;
    else r.decisions.try_emplace(c.id, agent::approval_outcome::denied);  // unanswered: declined
  }
  return r;
}

result<agent::loop_options> resumed_options(const parked_state& parked, bool client_tools) {
  if (client_tools) return field_invalid("'tools' (function tools) cannot resume a turn of warden's tools", "tools");
  agent::loop_options o = parked.loop;
  o.surface = "openai.responses";
  return o;
}

}  // namespace warden::api::responses
