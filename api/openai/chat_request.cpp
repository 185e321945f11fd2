#include "api/openai/chat_request.h"

#include "api/wire/loop_fields.h"
#include "common/field_table.h"
#include "common/json_fields.h"

#include <array>
#include <cmath>
#include <algorithm>
#include <functional>

#include <set>
#include <span>

namespace warden::api::openai {
namespace {

error invalid(std::string message, std::string param, std::string code = "invalid_value") {
  return field_invalid(std::move(message), std::move(param), std::move(code));
}

error wrong_type(const std::string& param, const char* want, const json& got) { return field_wrong_type(param, want, got); }


std::optional<error> check_content(const json& m, const std::string& where, bool required) {
  auto it = m.find("content");
  if (it == m.end() || it->is_null()) {
    if (required) return invalid("'" + where + ".content' is required for this role", where + ".content",
                                 "missing_required_parameter");
    return std::nullopt;
  }
  if (it->is_string()) return std::nullopt;
  if (!it->is_array()) return wrong_type(where + ".content", "a string or a list of content parts", *it);
  for (std::size_t i = 0; i < it->size(); ++i) {
    const json& part = (*it)[i];
    const std::string p = where + ".content[" + std::to_string(i) + "]";
    if (!part.is_object()) return wrong_type(p, "an object", part);
    auto t = part.find("type");
    if (t == part.end() || !t->is_string()) {
      return invalid("'" + p + ".type' must be a string such as \"text\"", p + ".type");
    }
    if (*t == "text") {
      auto tx = part.find("text");
      if (tx == part.end() || !tx->is_string()) return invalid("'" + p + ".text' must be a string", p + ".text");
    }
  }
  return std::nullopt;
}

std::optional<error> check_messages(json& body) {
  auto it = body.find("messages");
  if (it == body.end() || it->is_null()) {
    return invalid("'messages' is required", "messages", "missing_required_parameter");
  }
  if (!it->is_array()) return wrong_type("messages", "a list of messages", *it);
  if (it->empty()) return invalid("'messages' must contain at least one message", "messages");
  bool has_non_system = false;
  for (std::size_t i = 0; i < it->size(); ++i) {
    json& m = (*it)[i];
    const std::string where = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) return wrong_type(where, "an object", m);
    auto r = m.find("role");
    if (r == m.end() || !r->is_string()) {
      return invalid("'" + where + ".role' must be one of system, developer, user, assistant, tool",
                     where + ".role");
    }
    std::string role = r->get<std::string>();
    if (role == "developer") {
      role = "system";
      *r = "system";
    }
    if (role == "system" || role == "user") {
      if (auto e = check_content(m, where, true)) return e;
      if (role == "user") has_non_system = true;
    } else if (role == "assistant") {
      if (auto e = check_content(m, where, false)) return e;
      auto tc = m.find("tool_calls");
      if (tc != m.end() && !tc->is_null() && !tc->is_array()) {
        return wrong_type(where + ".tool_calls", "a list", *tc);
      }
      const bool no_content = !m.contains("content") || m["content"].is_null();
      const bool no_calls = tc == m.end() || tc->is_null() || tc->empty();
      if (no_content && no_calls) {
        return invalid("'" + where + "' needs content or tool_calls", where + ".content",
                       "missing_required_parameter");
      }
      has_non_system = true;
    } else if (role == "tool" || role == "function") {
      auto c = m.find("content");
      if (c == m.end() || c->is_null()) m["content"] = "";  // reference §1.2: null → ""
      else if (auto e = check_content(m, where, false)) return e;
      auto id = m.find("tool_call_id");
      if (id != m.end() && !id->is_null() && !id->is_string()) {
        return wrong_type(where + ".tool_call_id", "a string", *id);
      }
      has_non_system = true;
    } else {
      return invalid("'" + where + ".role' must be one of system, developer, user, assistant, tool; got '" +
                         role + "'",
                     where + ".role");
    }
  }
  if (!has_non_system) {
    return invalid("'messages' must contain at least one user, assistant or tool message, not only system messages",
                   "messages");
  }
  return std::nullopt;
}

std::optional<error> check_tools(const json& body) {
  auto it = body.find("tools");
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_array()) return wrong_type("tools", "a list", *it);
  std::set<std::string> seen;
  for (std::size_t i = 0; i < it->size(); ++i) {
    const json& t = (*it)[i];
    const std::string where = "tools[" + std::to_string(i) + "]";
    if (!t.is_object()) return wrong_type(where, "an object", t);
    auto type = t.find("type");
    if (type != t.end() && !type->is_null() && *type != "function") {
      return invalid("'" + where + ".type' must be \"function\"", "tools");
    }
    auto f = t.find("function");
    if (f == t.end() || !f->is_object()) return invalid("'" + where + ".function' must be an object", "tools");
    auto name = f->find("name");
    if (name == f->end() || !name->is_string() || name->get<std::string>().empty()) {
      return invalid("'" + where + ".function.name' must be a non-empty string", "tools");
    }
    const std::string n = name->get<std::string>();
    if (auto why = model::tool_name_problem(n)) return invalid("'" + where + ".function.name' " + *why, "tools");
    if (!seen.insert(n).second) return invalid("'" + where + ".function.name' '" + n + "' is declared twice", "tools");
  }
  return std::nullopt;
}

std::optional<error> check_tool_choice(const json& body, const std::vector<std::string>& builtins) {
  auto it = body.find("tool_choice");
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (it->is_string()) {
    const auto s = it->get<std::string>();
    const auto tools = body.find("tools");
    const bool has_tools = !builtins.empty() || (tools != body.end() && tools->is_array() && !tools->empty());
    if (s == "required" && !has_tools) {
      return invalid("'tool_choice' 'required' needs tools: send 'tools' (or enable warden's with 'enable_tools')",
                     "tool_choice");
    }
    if (s == "none" || s == "auto" || s == "required") return std::nullopt;
    return invalid("'tool_choice' must be none, auto, required or {\"type\":\"function\",\"function\":{\"name\":…}}",
                   "tool_choice");
  }
  if (!it->is_object()) return wrong_type("tool_choice", "a string or an object", *it);
  if (auto type = it->find("type"); type != it->end() && *type != "function") {
    return invalid("'tool_choice.type' must be \"function\" (other choices are the strings none, auto and required), "
                   "not " + dump_safe(*type).substr(0, 100),
                   "tool_choice");
  }
  auto f = it->find("function");
  if (f == it->end() || !f->is_object() || !f->contains("name") || !(*f)["name"].is_string() ||
      (*f)["name"].get<std::string>().empty()) {
    return invalid("'tool_choice.function.name' must name a function", "tool_choice");
  }
  const std::string name = (*f)["name"].get<std::string>();
  if (std::find(builtins.begin(), builtins.end(), name) != builtins.end()) return std::nullopt;
  auto tools = body.find("tools");
  if (!builtins.empty() && (tools == body.end() || !tools->is_array())) {
    std::string list;
    for (const auto& b : builtins) list += (list.empty() ? "" : ", ") + b;
    return invalid("'tool_choice' names function '" + name + "', which is not among the enabled tools (" + list + ")",
                   "tool_choice");
  }
  if (tools == body.end() || !tools->is_array()) {
    return invalid("'tool_choice' names function '" + name + "' but 'tools' lists none", "tool_choice");
  }
  for (const auto& t : *tools) {
    if (t.is_object() && t.contains("function") && t["function"].is_object() && t["function"].value("name", "") == name) {
      return std::nullopt;
    }
  }
  return invalid("'tool_choice' names function '" + name + "', which is not in 'tools'", "tool_choice");
}

std::optional<error> check_stop(const json& body) {
  auto it = body.find("stop");
  if (it == body.end() || it->is_null() || it->is_string()) return std::nullopt;
  if (!it->is_array()) return wrong_type("stop", "a string or a list of strings", *it);
  for (const auto& s : *it) {
    if (!s.is_string()) return wrong_type("stop", "a string or a list of strings", *it);
  }
  return std::nullopt;
}

/// Largest llama.cpp `n_probs` accepted (OpenAI's top_logprobs stops at 20).
constexpr std::int64_t k_max_n_probs = 100;

/// llama-server request fields that constrain the output with a grammar (tools/server README).
constexpr const char* k_raw_grammar_fields[] = {"grammar", "grammar_lazy", "grammar_triggers", "json_schema",
                                                 "preserved_tokens"};

// The field table's checks take the body as they may normalise it; these two only read it.
std::optional<error> stop_row(json& body) { return check_stop(body); }
std::optional<error> tools_row(json& body) { return check_tools(body); }

using fields::field;
using fields::field_type;

/// The body fields of /v1/chat/completions, in the order their faults are reported. warden's
/// tool-loop extensions (api/wire/loop_fields.h) and tool_choice (it depends on the enabled tools)
/// are checked after these.
constexpr field k_chat_fields[] = {
    {.name = "messages", .type = field_type::custom, .check = &check_messages},
    {.name = "model", .type = field_type::string},
    {.name = "stream", .type = field_type::boolean},
    {.name = "temperature", .type = field_type::number, .lo = 0.0, .hi = 2.0},
    {.name = "top_p", .type = field_type::number, .lo = 0.0, .hi = 1.0},
    {.name = "min_p", .type = field_type::number, .lo = 0.0, .hi = 1.0},
    {.name = "presence_penalty", .type = field_type::number, .lo = -2.0, .hi = 2.0},
    {.name = "frequency_penalty", .type = field_type::number, .lo = -2.0, .hi = 2.0},
    {.name = "repetition_penalty", .type = field_type::number, .lo = 0.0, .hi = 2.0},
    // max_completion_tokens is OpenAI's newer name for max_tokens
    {.name = "max_tokens", .type = field_type::integer, .alias = "max_completion_tokens", .min = 1, .max = INT32_MAX},
    {.name = "n", .type = field_type::integer, .min = 1, .max = 128},
    {.name = "top_k", .type = field_type::integer, .min = -1, .max = 100000},
    {.name = "seed", .type = field_type::integer, .min = INT64_MIN, .max = INT64_MAX},
    {.name = "logprobs", .type = field_type::boolean},
    {.name = "top_logprobs", .type = field_type::integer, .min = 0, .max = 20},
    // llama.cpp's n_probs: probabilities of that many candidates for every token; unbounded, one
    // request could make the response arbitrarily large (an adversarial run built 52 MB from 2 tokens).
    {.name = "n_probs", .type = field_type::integer, .min = 0, .max = k_max_n_probs},
    {.name = "parallel_tool_calls", .type = field_type::boolean},
    {.name = "user", .type = field_type::string},
    {.name = "response_format", .type = field_type::object},
    {.name = "logit_bias", .type = field_type::object},
    {.name = "stream_options", .type = field_type::object},
    {.name = "stop", .type = field_type::custom, .check = &stop_row},
    {.name = "tools", .type = field_type::custom, .check = &tools_row},
};

/// With warden's own tools on: llama.cpp's raw sampling constraints pass through to
/// llama-server and could force a call the request did not choose (e.g. a <tool_call> under
/// tool_choice "none"), and client tools would compete with warden's; both are refused.
std::optional<error> check_tool_loop_conflicts(const json& body) {
  for (const char* k : k_raw_grammar_fields) {
    if (auto g = body.find(k); g != body.end() && !g->is_null()) {
      return invalid(std::string("'") + k + "' (a raw llama.cpp output constraint) cannot be combined with "
                     "'enable_tools': warden decides what the model may call; use 'tool_choice' or 'response_format'",
                     k, "unsupported_parameter");
    }
  }
  auto t = body.find("tools");
  if (t != body.end() && t->is_array() && !t->empty()) {
    return invalid("'tools' (tools the client runs) cannot be combined with 'enable_tools' (tools warden runs); "
                   "send one or the other",
                   "tools");
  }
  return std::nullopt;
}

/// stream, stream_options.include_usage and the rules tying them to n.
std::optional<error> read_streaming(const json& body, chat_request& req) {
  req.stream = body.value("stream", json(false)).is_boolean() && body.value("stream", false);
  req.loop.stream = req.stream;
  if (auto so = body.find("stream_options"); so != body.end() && so->is_object()) {
    auto iu = so->find("include_usage");
    if (iu != so->end() && !iu->is_null()) {
      if (!iu->is_boolean()) return wrong_type("stream_options.include_usage", "a boolean", *iu);
      req.include_usage = iu->get<bool>();
    }
    if (!req.stream) {
      return invalid("'stream_options' is only allowed when 'stream' is true", "stream_options");
    }
  }
  if (req.stream && body.contains("n") && body["n"].is_number_integer() && body["n"].get<int>() > 1) {
    return invalid("'n' greater than 1 is not supported with streaming", "n", "unsupported_parameter");
  }
  return std::nullopt;
}

}  // namespace

result<chat_request> parse_chat_request(std::string_view text, std::span<const std::string> tool_names) {
  auto parsed = parse_request_body(text);
  if (!parsed) return parsed.error();
  json body = std::move(*parsed);

  if (auto e = fields::check_fields(body, k_chat_fields)) return *e;
  chat_request req;
  if (auto e = wire::take_loop_fields(body, req.loop, tool_names)) return *e;
  auto provider = wire::take_provider_fields(body);
  if (!provider) return provider.error();
  req.provider = std::move(*provider);
  if (req.provider) {
    if (auto e = wire::apply_provider_rules(*req.provider, req.loop, body)) return *e;
  }
  req.use_tool_loop = req.loop.enable_tools;
  if (auto e = check_tool_choice(body, wire::selected_names(req.loop, tool_names))) return *e;
  if (req.use_tool_loop) {
    if (auto e = check_tool_loop_conflicts(body)) return *e;
  }
  if (auto e = read_streaming(body, req)) return *e;
  req.body = std::move(body);
  return req;
}

}  // namespace warden::api::openai
