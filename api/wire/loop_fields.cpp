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

/// One list of website_policy: domain strings (website_policy.h's form), at most 256 of them.
std::optional<error> take_domains(const json& policy, const char* camel, const char* snake, std::vector<std::string>& out) {
  auto it = policy.find(camel);
  if (it == policy.end()) it = policy.find(snake);
  if (it == policy.end() || it->is_null()) return std::nullopt;
  const std::string param = std::string("website_policy.") + camel;
  if (!it->is_array()) return field_wrong_type(param, "a list of domain names", *it);
  if (it->size() > 256) return field_invalid("'" + param + "' may list at most 256 domains", param);
  for (std::size_t i = 0; i < it->size(); ++i) {
    const json& d = (*it)[i];
    if (!d.is_string()) return field_wrong_type(param + "[" + std::to_string(i) + "]", "a domain name string", d);
    auto n = tools::normalise_domain(d.get<std::string>());
    if (!n) return field_invalid("'" + param + "[" + std::to_string(i) + "]' is not a domain name (ASCII, e.g. example.com)", param);
    out.push_back(std::move(*n));
  }
  return std::nullopt;
}

/// website_policy {allowedDomains?, blockedDomains?} (reference §4.7; snake_case accepted too).
std::optional<error> take_website_policy(const json& body, agent::loop_options& o) {
  auto it = body.find("website_policy");
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_object()) return field_wrong_type("website_policy", "an object with allowedDomains and blockedDomains", *it);
  tools::website_policy p;
  if (auto e = take_domains(*it, "allowedDomains", "allowed_domains", p.allowed_domains)) return e;
  if (auto e = take_domains(*it, "blockedDomains", "blocked_domains", p.blocked_domains)) return e;
  o.website_policy = std::move(p);
  return std::nullopt;
}

/// rag_scope's knowledge-base ids: kb_id (a string) and/or kb_ids (a list), 1..16 in all.
std::optional<error> take_kb_ids(const json& scope, tools::rag_scope& r) {
  auto add = [&r](const json& v, const std::string& param) -> std::optional<error> {
    if (!v.is_string()) return field_wrong_type(param, "a knowledge base id string", v);
    const auto& id = v.get_ref<const std::string&>();
    if (!agent::valid_session_id(id)) {
      return field_invalid("'" + param + "' must be a knowledge base id (1 to 64 characters from A-Z, a-z, 0-9, '_' and '-')", param);
    }
    if (std::find(r.kb_ids.begin(), r.kb_ids.end(), id) == r.kb_ids.end()) r.kb_ids.push_back(id);
    return std::nullopt;
  };
  if (auto it = scope.find("kb_id"); it != scope.end() && !it->is_null()) {
    if (auto e = add(*it, "rag_scope.kb_id")) return e;
  }
  if (auto it = scope.find("kb_ids"); it != scope.end() && !it->is_null()) {
    if (!it->is_array()) return field_wrong_type("rag_scope.kb_ids", "a list of knowledge base ids", *it);
    for (std::size_t i = 0; i < it->size(); ++i) {
      if (auto e = add((*it)[i], "rag_scope.kb_ids[" + std::to_string(i) + "]")) return e;
    }
  }
  if (r.kb_ids.empty()) return field_invalid("'rag_scope' needs a kb_id (or kb_ids)", "rag_scope.kb_id");
  if (r.kb_ids.size() > 16) return field_invalid("'rag_scope' may name at most 16 knowledge bases", "rag_scope.kb_ids");
  return std::nullopt;
}

/// rag_scope {kb_id?, kb_ids?, default_top_k?, mode?, autoinject?, autoinject_min_score?} (reference §1.2).
std::optional<error> take_rag_scope(const json& body, agent::loop_options& o) {
  auto it = body.find("rag_scope");
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_object()) return field_wrong_type("rag_scope", "an object with kb_id", *it);
  tools::rag_scope r;
  if (auto e = take_kb_ids(*it, r)) return e;
  if (auto e = check_int_field(*it, "default_top_k", 1, 8)) {
    e->param = "rag_scope.default_top_k";
    return e;
  }
  if (auto t = it->find("default_top_k"); t != it->end() && !t->is_null()) r.default_top_k = t->get<int>();
  if (auto e = check_bool_field(*it, "autoinject", r.autoinject)) {
    e->param = "rag_scope.autoinject";
    return e;
  }
  if (auto m = it->find("mode"); m != it->end() && !m->is_null()) {
    if (!m->is_string() || (*m != "hybrid" && *m != "lexical")) {
      return field_invalid("'rag_scope.mode' must be \"hybrid\" or \"lexical\"", "rag_scope.mode");
    }
    r.mode = m->get<std::string>();
  }
  if (auto s = it->find("autoinject_min_score"); s != it->end() && !s->is_null()) {
    if (!s->is_number() || s->get<double>() < -1.0 || s->get<double>() > 1.0) {
      return field_invalid("'rag_scope.autoinject_min_score' must be a number from -1 to 1", "rag_scope.autoinject_min_score");
    }
    r.autoinject_min_score = s->get<double>();
  }
  o.rag = std::move(r);
  return std::nullopt;
}

/// context_overflow: "error" | "truncate_middle" | "truncate_oldest" (null = the default, error).
std::optional<error> take_context_overflow(const json& body, agent::loop_options& o) {
  auto it = body.find("context_overflow");
  if (it == body.end() || it->is_null()) return std::nullopt;
  std::optional<model::overflow_policy> p;
  if (it->is_string()) p = model::parse_overflow_policy(it->get<std::string>());
  if (!p) {
    return make_error(errc::invalid_request, "context_overflow must be \"error\", \"truncate_middle\" or \"truncate_oldest\"",
                      "context_overflow", "invalid_value");
  }
  o.context_overflow = *p;
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
  if (auto e = take_website_policy(body, o)) return e;
  if (auto e = take_rag_scope(body, o)) return e;
  if (auto e = take_context_overflow(body, o)) return e;
  bool mcp = false;
  if (auto e = check_bool_field(body, "mcp_enabled", mcp)) return e;
  if (mcp) {  // every enabled MCP server's tools; it opens the loop by itself (reference §1.2)
    o.mcp_enabled = true;
    if (!o.enable_tools) o.builtin_tools = false;
    o.enable_tools = true;
  }
  for (const char* k : {"mcp_enabled", "enable_tools", "enabled_tools", "confirm_tool_calls", "confirm_code_execution",
                        "bypass_permissions", "permission_mode", "max_tool_calls_per_message", "tool_call_timeout",
                        "session_id", "cancel_id", "auto_heal_tool_calls", "tool_prompt_nudge", "tool_error_nudge",
                        "act_reprompts", "website_policy", "rag_scope", "context_overflow"}) {
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
