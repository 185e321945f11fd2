#include "api/wire/loop_fields.h"

#include <algorithm>
#include <cstdint>

#include "common/json_fields.h"

namespace warden::api::wire {

namespace {

/// permission_mode: a string; an unknown value folds to "ask" (reference §3.1), never an error.
std::optional<error> take_mode(const json& body, std::optional<std::string>& out) {
  auto it = body.find("permission_mode");
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_string()) return field_wrong_type("permission_mode", "one of \"ask\", \"auto\", \"off\", \"full\"", *it);
  out = it->get<std::string>();
  return std::nullopt;
}

std::optional<error> take_enabled_tools(const json& body, agent::loop_options& o, std::span<const std::string> known) {
  auto it = body.find("enabled_tools");
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_array()) return field_wrong_type("enabled_tools", "a list of tool names", *it);
  std::vector<std::string> names;
  for (std::size_t i = 0; i < it->size(); ++i) {
    const json& n = (*it)[i];
    if (!n.is_string()) return field_wrong_type("enabled_tools[" + std::to_string(i) + "]", "a tool name string", n);
    const std::string name = n.get<std::string>();
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::string list;
      for (const auto& t : known) list += (list.empty() ? "" : ", ") + t;
      return field_invalid("'enabled_tools' names an unknown tool '" + name + "'; available: " + list, "enabled_tools");
    }
    names.push_back(name);
  }
  o.enabled_tools = std::move(names);
  return std::nullopt;
}

std::optional<error> take_ids(const json& body, agent::loop_options& o) {
  if (auto it = body.find("session_id"); it != body.end() && !it->is_null()) {
    if (!it->is_string()) return field_wrong_type("session_id", "a string", *it);
    if (!agent::valid_session_id(it->get<std::string>())) {
      return field_invalid("'session_id' must be 1 to 64 characters from A-Z, a-z, 0-9, '_' and '-'", "session_id");
    }
    o.session_id = it->get<std::string>();
  }
  if (auto it = body.find("cancel_id"); it != body.end() && !it->is_null()) {
    if (!it->is_string()) return field_wrong_type("cancel_id", "a string", *it);
    const auto& s = it->get_ref<const std::string&>();
    if (s.empty() || s.size() > 128) return field_invalid("'cancel_id' must be 1 to 128 characters", "cancel_id");
    o.cancel_id = s;
  }
  return std::nullopt;
}

}  // namespace

std::optional<error> take_loop_fields(json& body, agent::loop_options& o, std::span<const std::string> known) {
  if (auto e = check_bool_field(body, "enable_tools", o.enable_tools)) return e;
  if (auto e = check_bool_field(body, "confirm_tool_calls", o.gate.confirm_tool_calls)) return e;
  if (auto e = take_mode(body, o.gate.permission_mode)) return e;
  if (auto e = check_bool_field(body, "confirm_code_execution", o.gate.confirm_code_execution)) return e;
  if (auto e = check_bool_field(body, "bypass_permissions", o.gate.bypass_permissions)) return e;
  if (auto e = check_bool_field(body, "parallel_tool_calls", o.parallel_tool_calls)) return e;
  if (auto e = check_bool_field(body, "auto_heal_tool_calls", o.heal_tool_calls)) return e;
  if (auto e = check_bool_field(body, "tool_prompt_nudge", o.tool_prompt_nudge)) return e;
  if (auto e = check_bool_field(body, "tool_error_nudge", o.tool_error_nudge)) return e;
  if (auto e = check_bool_field(body, "act_reprompts", o.act_reprompts)) return e;
  if (auto e = take_enabled_tools(body, o, known)) return e;
  if (auto e = check_int_field(body, "max_tool_calls_per_message", 0, INT32_MAX)) return e;
  if (auto it = body.find("max_tool_calls_per_message"); it != body.end() && !it->is_null()) {
    o.max_tool_calls_per_message = it->get<int>();
  }
  if (auto e = check_int_field(body, "tool_call_timeout", 1, INT32_MAX)) return e;
  if (auto it = body.find("tool_call_timeout"); it != body.end() && !it->is_null()) {
    o.tool_call_timeout_s = it->get<int>();
  }
  if (auto e = take_ids(body, o)) return e;
  for (const char* k : {"enable_tools", "enabled_tools", "confirm_tool_calls", "confirm_code_execution",
                        "bypass_permissions", "permission_mode", "max_tool_calls_per_message", "tool_call_timeout",
                        "session_id", "cancel_id", "auto_heal_tool_calls", "tool_prompt_nudge", "tool_error_nudge",
                        "act_reprompts"}) {
    body.erase(k);
  }
  return std::nullopt;
}

std::set<std::string> names_to_heal(const agent::loop_options& o, const model::chat_request& req, bool server_heals) {
  if (!o.heal_tool_calls.value_or(server_heals)) return {};
  std::set<std::string> out;
  for (const auto& t : req.tools) out.insert(t.name);
  return out;
}

std::vector<std::string> selected_names(const agent::loop_options& o, std::span<const std::string> known) {
  std::vector<std::string> out;
  if (!o.enable_tools) return out;
  for (const auto& n : known) {
    if (!o.enabled_tools || std::find(o.enabled_tools->begin(), o.enabled_tools->end(), n) != o.enabled_tools->end()) {
      out.push_back(n);
    }
  }
  return out;
}

}  // namespace warden::api::wire
