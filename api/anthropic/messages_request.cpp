#include "api/anthropic/messages_request.h"

#include <algorithm>
#include <cstdint>

#include "api/wire/loop_fields.h"
#include "api/anthropic/convert.h"
#include "api/anthropic/server_tools.h"
#include "common/field_table.h"
#include "common/json_fields.h"

namespace warden::api::anthropic {

namespace {

std::optional<error> need_string(const json& obj, const char* key, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return field_invalid("'" + where + "." + key + "' must be a string", where + "." + key);
  return std::nullopt;
}

std::optional<error> check_source(const json& b, const std::string& w) {
  auto src = b.find("source");
  if (src == b.end() || !src->is_object()) return field_invalid("'" + w + ".source' must be an object", w + ".source");
  return need_string(*src, "type", w + ".source");
}

std::optional<error> check_tool_result(const json& b, const std::string& w) {
  if (auto e = need_string(b, "tool_use_id", w)) return e;
  auto c = b.find("content");
  if (c != b.end() && !c->is_null() && !c->is_string() && !c->is_array()) {
    return field_wrong_type(w + ".content", "a string or a list of content blocks", *c);
  }
  if (c != b.end() && c->is_array()) {
    for (std::size_t i = 0; i < c->size(); ++i) {
      const json& item = (*c)[i];
      const std::string iw = w + ".content[" + std::to_string(i) + "]";
      if (!item.is_object()) return field_wrong_type(iw, "a content block object", item);
      if (auto e = need_string(item, "type", iw)) return e;
      const std::string type = item["type"];
      if (type == "text") {
        if (auto e = need_string(item, "text", iw)) return e;
      } else if (type == "document") {
        const json src = item.value("source", json());
        if (!src.is_object() || src.value("type", json()) != "text" || !src.value("data", json()).is_string()) {
          return field_invalid("'" + iw + ".source' is not supported: warden reads documents with a text source only",
                               iw + ".source");
        }
      } else if (type == "search_result") {
        const json inner = item.value("content", json());
        const bool texts = inner.is_array() && std::all_of(inner.begin(), inner.end(), [](const json& b) {
          return b.is_object() && b.value("type", json()) == "text" && b.value("text", json()).is_string();
        });
        if (!texts) return field_invalid("'" + iw + ".content' must be a list of text blocks", iw + ".content");
      } else if (type != "image") {
        return field_invalid("'" + iw + ".type' '" + type +
                                 "' cannot be part of a tool_result (text, image, document, search_result)",
                             iw + ".type");
      }
    }
  }
  if (auto ie = b.find("is_error"); ie != b.end() && !ie->is_null() && !ie->is_boolean()) {
    return field_wrong_type(w + ".is_error", "a boolean", *ie);
  }
  return std::nullopt;
}

std::optional<error> check_block(const json& b, const std::string& w) {
  if (!b.is_object()) return field_wrong_type(w, "a content block object", b);
  if (auto e = need_string(b, "type", w)) return e;
  const std::string type = b["type"];
  if (type == "text") return need_string(b, "text", w);
  if (type == "image" || type == "document") return check_source(b, w);
  if (type == "thinking") return need_string(b, "thinking", w);
  if (type == "tool_use" || type == "server_tool_use") {
    if (auto e = need_string(b, "id", w)) return e;
    if (auto e = need_string(b, "name", w)) return e;
    if (auto in = b.find("input"); in == b.end() || !in->is_object()) {
      return field_invalid("'" + w + ".input' must be an object", w + ".input");
    }
    return std::nullopt;
  }
  if (type == "tool_result") return check_tool_result(b, w);
  return std::nullopt;  // other types: convert.h accepts or refuses them by role
}

/// Anthropic's pairing rules: the tool_use ids of an assistant message are unique; the next
/// user message answers each of them with one tool_result, and its tool_result blocks come
/// before anything else in it; a tool_result answers nothing else. Otherwise the model would see
/// results for calls it never made, or calls without results.
std::optional<error> check_pairing(const json& messages) {
  std::vector<std::string> open;  // tool_use ids of the previous assistant message, not yet answered
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const json& c = messages[i]["content"];
    const std::string where = "messages[" + std::to_string(i) + "]";
    const bool user = messages[i]["role"] == "user";
    if (!user) {
      if (!open.empty()) {
        return field_invalid("'" + where + "' follows tool_use block(s) that no tool_result answered (" +
                                 open.front().substr(0, 100) + ")",
                             where);
      }
      for (std::size_t k = 0; c.is_array() && k < c.size(); ++k) {
        if (c[k].value("type", "") != "tool_use") continue;
        const std::string id = c[k].value("id", "");
        if (std::find(open.begin(), open.end(), id) != open.end()) {
          return field_invalid("'" + where + ".content[" + std::to_string(k) + "].id' repeats the tool_use id '" +
                                   id.substr(0, 100) + "'",
                               where + ".content[" + std::to_string(k) + "].id");
        }
        open.push_back(id);
      }
      continue;
    }
    bool other_seen = false;
    for (std::size_t k = 0; c.is_array() && k < c.size(); ++k) {
      const std::string w = where + ".content[" + std::to_string(k) + "]";
      if (c[k].value("type", "") != "tool_result") {
        other_seen = true;
        continue;
      }
      if (other_seen) return field_invalid("'" + w + "': tool_result blocks must come first in a user message", w);
      const std::string id = c[k].value("tool_use_id", "");
      auto it = std::find(open.begin(), open.end(), id);
      if (it == open.end()) {
        return field_invalid("'" + w + ".tool_use_id' '" + id.substr(0, 100) +
                                 "' answers no unanswered tool_use block of the previous assistant message",
                             w + ".tool_use_id");
      }
      open.erase(it);
    }
    if (!open.empty()) {
      return field_invalid("'" + where + "' leaves tool_use '" + open.front().substr(0, 100) +
                               "' without a tool_result; answer every call of the previous assistant message",
                           where);
    }
  }
  return std::nullopt;
}

std::optional<error> check_messages(const json& body) {
  auto it = body.find("messages");
  if (it == body.end() || it->is_null()) return field_invalid("'messages' is required", "messages", "missing_required_parameter");
  if (!it->is_array()) return field_wrong_type("messages", "a list of messages", *it);
  if (it->empty()) return field_invalid("'messages' must contain at least one message", "messages");
  for (std::size_t i = 0; i < it->size(); ++i) {
    const json& m = (*it)[i];
    const std::string where = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) return field_wrong_type(where, "an object", m);
    const json role = m.value("role", json());
    if (role != "user" && role != "assistant") {
      return field_invalid("'" + where + ".role' must be \"user\" or \"assistant\" (the system prompt goes in 'system')",
                           where + ".role");
    }
    auto c = m.find("content");
    if (c == m.end() || c->is_null()) {
      return field_invalid("'" + where + ".content' is required", where + ".content", "missing_required_parameter");
    }
    if (c->is_string()) continue;
    if (!c->is_array()) return field_wrong_type(where + ".content", "a string or a list of content blocks", *c);
    if (c->empty()) return field_invalid("'" + where + ".content' must not be an empty list", where + ".content");
    for (std::size_t k = 0; k < c->size(); ++k) {
      if (auto e = check_block((*c)[k], where + ".content[" + std::to_string(k) + "]")) return e;
    }
  }
  return check_pairing(*it);
}

std::optional<error> check_system(const json& body) {
  auto it = body.find("system");
  if (it == body.end() || it->is_null() || it->is_string()) return std::nullopt;
  if (!it->is_array()) return field_wrong_type("system", "a string or a list of text blocks", *it);
  for (std::size_t i = 0; i < it->size(); ++i) {
    const json& b = (*it)[i];
    const std::string w = "system[" + std::to_string(i) + "]";
    if (!b.is_object() || b.value("type", json()) != "text") {
      return field_invalid("'" + w + "' must be a text block {\"type\":\"text\",\"text\":…}", w);
    }
    if (auto e = need_string(b, "text", w)) return e;
  }
  return std::nullopt;
}

std::optional<error> take_stop_sequences(const json& body, std::vector<std::string>& out) {
  auto it = body.find("stop_sequences");
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_array()) return field_wrong_type("stop_sequences", "a list of strings", *it);
  for (std::size_t i = 0; i < it->size(); ++i) {
    const json& s = (*it)[i];
    if (!s.is_string() || s.get<std::string>().empty()) {
      return field_invalid("'stop_sequences[" + std::to_string(i) + "]' must be a non-empty string", "stop_sequences");
    }
    out.push_back(s.get<std::string>());
  }
  return std::nullopt;
}

/// One `tools` entry: a client tool → conv.tools; a server tool → server_tools.
std::optional<error> take_tool(const json& t, const std::string& w, std::span<const std::string> known, messages_request& r) {
  if (!t.is_object()) return field_wrong_type(w, "a tool object", t);
  const json type = t.value("type", json());
  if (!type.is_null() && !type.is_string()) return field_wrong_type(w + ".type", "a string", type);
  const std::string ty = type.is_string() ? type.get<std::string>() : "";
  if (ty.empty() || ty == "custom" || t.contains("input_schema")) {
    if (auto e = need_string(t, "name", w)) return e;
    const std::string name = t["name"].get<std::string>();
    if (auto why = model::tool_name_problem(name)) return field_invalid("'" + w + ".name' " + *why, w + ".name");
    for (const auto& have : r.conv.tools) {
      if (have.name == name) return field_invalid("'" + w + ".name' '" + name + "' is declared twice", w + ".name");
    }
    auto schema = t.find("input_schema");
    if (schema == t.end() || !schema->is_object()) {
      return field_invalid("'" + w + ".input_schema' must be a JSON schema object", w + ".input_schema");
    }
    if (auto d = t.find("description"); d != t.end() && !d->is_null() && !d->is_string()) {
      return field_wrong_type(w + ".description", "a string", *d);
    }
    r.conv.tools.push_back(model::tool_spec{t["name"], t.value("description", json("")).is_string() ? t.value("description", "") : "",
                                            *schema});
    r.client_tools = true;
    return std::nullopt;
  }
  auto mapped = server_tool_for(ty);
  if (!mapped) {
    std::string available;
    for (const char* t : {"python", "terminal", "web_search"}) {
      if (std::find(known.begin(), known.end(), t) != known.end()) available += std::string(available.empty() ? "" : ", ") + t;
    }
    return field_invalid("'" + w + ".type' '" + ty + "' is not a tool warden can run; server tools here: " +
                             (available.empty() ? std::string("none") : available) +
                             "; or give a client tool with 'input_schema'",
                         w + ".type", "unsupported_tool");
  }
  if (std::find(known.begin(), known.end(), *mapped) == known.end()) {
    return field_invalid("'" + w + ".type' '" + ty + "' maps to warden's " + *mapped +
                             " tool, which this server does not have yet",
                         w + ".type", "unsupported_tool");
  }
  if (std::find(r.server_tools.begin(), r.server_tools.end(), *mapped) == r.server_tools.end()) {
    r.server_tools.push_back(*mapped);
  }
  return std::nullopt;
}

std::optional<error> take_tools(const json& body, std::span<const std::string> known, messages_request& r) {
  auto it = body.find("tools");
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_array()) return field_wrong_type("tools", "a list of tools", *it);
  for (std::size_t i = 0; i < it->size(); ++i) {
    if (auto e = take_tool((*it)[i], "tools[" + std::to_string(i) + "]", known, r)) return e;
  }
  if (r.client_tools && !r.server_tools.empty()) {
    return field_invalid("'tools' mixes client tools (with input_schema) and server tools (" + r.server_tools.front() +
                             "); send one kind or the other",
                         "tools");
  }
  return std::nullopt;
}

std::optional<error> take_tool_choice(const json& body, std::span<const std::string> tool_names, messages_request& r) {
  auto it = body.find("tool_choice");
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_object()) return field_wrong_type("tool_choice", "an object such as {\"type\":\"auto\"}", *it);
  const std::string type = it->value("type", json("")).is_string() ? it->value("type", "") : "";
  model::tool_choice c;
  if (type == "auto") c.kind = model::tool_choice::mode::auto_;
  else if (type == "any" && r.conv.tools.size() == 1) {
    // "any tool" with one tool is that tool: a named choice, which warden enforces on
    // llama-server (engine/forced_tool_call.h) where "required" depends on the chat template.
    c.kind = model::tool_choice::mode::named;
    c.name = r.conv.tools.front().name;
  } else if (type == "any") {
    if (r.conv.tools.empty() && r.server_tools.empty() && wire::selected_names(r.loop, tool_names).empty()) {
      return field_invalid("'tool_choice' {\"type\":\"any\"} needs tools: send 'tools' (or enable warden's with "
                           "'enable_tools')",
                           "tool_choice");
    }
    c.kind = model::tool_choice::mode::required;
  }
  else if (type == "none") c.kind = model::tool_choice::mode::none;
  else if (type == "tool") {
    if (auto e = need_string(*it, "name", "tool_choice")) return e;
    c.kind = model::tool_choice::mode::named;
    c.name = (*it)["name"];
    const auto& tools = r.conv.tools;
    const auto enabled = wire::selected_names(r.loop, tool_names);  // warden's own, with enable_tools (as on chat)
    const bool listed = std::any_of(tools.begin(), tools.end(), [&](const model::tool_spec& t) { return t.name == c.name; }) ||
                        std::find(r.server_tools.begin(), r.server_tools.end(), c.name) != r.server_tools.end() ||
                        std::find(enabled.begin(), enabled.end(), c.name) != enabled.end();
    if (!listed) {
      return field_invalid("'tool_choice.name' '" + c.name + "' is not one of 'tools' (or of warden's tools enabled with "
                           "'enable_tools')",
                           "tool_choice.name");
    }
  } else {
    return field_invalid("'tool_choice.type' must be \"auto\", \"any\", \"tool\" or \"none\"", "tool_choice.type");
  }
  bool no_parallel = false;
  if (auto e = check_bool_field(*it, "disable_parallel_tool_use", no_parallel)) {
    return field_wrong_type("tool_choice.disable_parallel_tool_use", "a boolean", (*it)["disable_parallel_tool_use"]);
  }
  if (no_parallel) r.conv.parallel_tool_calls = false;
  r.conv.tool_choice = c;
  return std::nullopt;
}

std::optional<error> take_thinking(const json& body, std::int64_t max_tokens, body_kind kind, model::sampling& s) {
  auto it = body.find("thinking");
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_object()) return field_wrong_type("thinking", "an object such as {\"type\":\"enabled\",\"budget_tokens\":2048}", *it);
  const json type = it->value("type", json());
  if (type == "disabled") {
    s.extra["chat_template_kwargs"] = json{{"enable_thinking", false}};
    return std::nullopt;
  }
  if (type == "adaptive") {
    s.extra["chat_template_kwargs"] = json{{"enable_thinking", true}};
    return std::nullopt;
  }
  if (type != "enabled") return field_invalid("'thinking.type' must be \"enabled\", \"disabled\" or \"adaptive\"", "thinking.type");
  auto b = it->find("budget_tokens");
  if (b == it->end() || !b->is_number_integer()) {
    return field_invalid("'thinking.budget_tokens' must be an integer", "thinking.budget_tokens");
  }
  const std::int64_t budget = b->get<std::int64_t>();
  if (budget < 1024) return field_invalid("'thinking.budget_tokens' must be at least 1024", "thinking.budget_tokens");
  if (kind == body_kind::messages && budget >= max_tokens) {
    return field_invalid("'max_tokens' must be greater than 'thinking.budget_tokens'", "thinking.budget_tokens");
  }
  s.extra["chat_template_kwargs"] = json{{"enable_thinking", true}};
  s.extra["thinking_budget_tokens"] = budget;
  return std::nullopt;
}

std::optional<error> refuse_mcp_servers(json& body) {
  if (auto m = body.find("mcp_servers"); m != body.end() && m->is_array() && !m->empty()) {
    return field_invalid("'mcp_servers' is not supported by warden's /v1/messages", "mcp_servers", "unsupported_parameter");
  }
  return std::nullopt;
}
// The field table's checks take the body as they may normalise it; these two only read it.
std::optional<error> messages_row(json& body) { return check_messages(body); }
std::optional<error> system_row(json& body) { return check_system(body); }

using fields::field;
using fields::field_type;

constexpr fields::surface_mask surface_of(body_kind k) { return fields::surface_mask{1} << static_cast<unsigned>(k); }

/// The body fields of /v1/messages (and /v1/messages/count_tokens, which needs no max_tokens),
/// in the order their faults are reported. stop_sequences, warden's tool-loop extensions, tools,
/// tool_choice and thinking are read (into the typed request) after these.
constexpr field k_messages_fields[] = {
    {.name = "model", .type = field_type::string, .required = true},
    {.name = "max_tokens", .type = field_type::integer, .min = 1, .max = INT32_MAX, .required = true,
     .surfaces = surface_of(body_kind::messages)},
    {.name = "temperature", .type = field_type::number, .lo = 0.0, .hi = 1.0},
    {.name = "top_p", .type = field_type::number, .lo = 0.0, .hi = 1.0},
    {.name = "top_k", .type = field_type::integer, .min = 0, .max = 100000},
    {.name = "metadata", .type = field_type::object},
    {.name = "stream", .type = field_type::boolean},
    {.name = "mcp_servers", .type = field_type::custom, .check = &refuse_mcp_servers},  // refused when non-empty
    {.name = "container", .type = field_type::refused,
     .message = "'container' is not supported by warden (tools run in warden's own sandbox)",
     .code = "unsupported_parameter"},
    {.name = "messages", .type = field_type::custom, .check = &messages_row},
    {.name = "system", .type = field_type::custom, .check = &system_row},
};

void take_sampling(const json& body, model::sampling& s) {
  if (auto t = body.find("temperature"); t != body.end() && t->is_number()) s.temperature = t->get<double>();
  if (auto t = body.find("top_p"); t != body.end() && t->is_number()) s.top_p = t->get<double>();
  if (auto t = body.find("top_k"); t != body.end() && t->is_number_integer()) s.extra["top_k"] = *t;
  if (auto t = body.find("max_tokens"); t != body.end() && t->is_number_integer()) s.max_tokens = t->get<std::int64_t>();
}

/// `thread` (beta message-threads, which the SDKs' tool runners send): warden keeps no threads.
/// `create` → 400 thread_unsupported_request, on which the SDKs go on without threading; a
/// `continue` → 404 thread_not_found, on which they replay the whole history.
std::optional<error> refuse_thread(const json& body) {
  auto it = body.find("thread");
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_object()) return field_wrong_type("thread", "an object such as {\"type\":\"create\"}", *it);
  if (it->value("type", json()) == "continue") {
    return make_error(errc::not_found, "thread not found: warden keeps no message threads; send the whole history",
                      "thread", "thread_not_found");
  }
  return make_error(errc::invalid_request,
                    "warden does not keep message threads; send the whole history without 'thread'", "thread",
                    "thread_unsupported_request");
}

/// Structured output (Anthropic's `output_config.format`, and the older beta `output_format`):
/// {type: "json_schema", schema: object} → the upstream's response_format json_schema, which
/// llama-server turns into a grammar. Both at once are refused (which one would win is unclear).
std::optional<error> take_output_format(const json& body, model::sampling& s) {
  const json* fmt = nullptr;
  std::string where;
  if (auto oc = body.find("output_config"); oc != body.end() && !oc->is_null()) {
    if (!oc->is_object()) return field_wrong_type("output_config", "an object", *oc);
    if (auto f = oc->find("format"); f != oc->end() && !f->is_null()) fmt = &*f, where = "output_config.format";
  }
  if (auto of = body.find("output_format"); of != body.end() && !of->is_null()) {
    if (fmt) return field_invalid("send 'output_config.format' or 'output_format', not both", "output_format");
    fmt = &*of;
    where = "output_format";
  }
  if (!fmt) return std::nullopt;
  if (!fmt->is_object()) return field_wrong_type(where, "an object such as {\"type\":\"json_schema\",\"schema\":{…}}", *fmt);
  if (fmt->value("type", json()) != "json_schema") {
    return field_invalid("'" + where + ".type' must be \"json_schema\"", where + ".type");
  }
  auto schema = fmt->find("schema");
  if (schema == fmt->end() || !schema->is_object()) {
    return field_invalid("'" + where + ".schema' must be a JSON schema object", where + ".schema");
  }
  s.extra["response_format"] = {{"type", "json_schema"}, {"json_schema", {{"name", "output"}, {"schema", *schema}}}};
  return std::nullopt;
}

}  // namespace

result<messages_request> parse_messages_request(std::string_view text, std::span<const std::string> tool_names,
                                                body_kind kind) {
  auto parsed = parse_request_body(text, "'model', 'max_tokens' and 'messages'");
  if (!parsed) return parsed.error();
  json body = std::move(*parsed);
  if (auto e = fields::check_fields(body, k_messages_fields, surface_of(kind))) return *e;
  if (auto e = refuse_thread(body)) return *e;
  messages_request r;
  if (auto e = take_stop_sequences(body, r.stop_sequences)) return *e;
  if (auto e = wire::take_loop_fields(body, r.loop, tool_names)) return *e;
  auto provider = wire::take_provider_fields(body);
  if (!provider) return provider.error();
  r.provider = std::move(*provider);
  const json tools_sent = {{"tools", body.value("tools", json())}};  // for the provider rules
  if (auto e = take_tools(body, tool_names, r)) return *e;
  if (r.provider) {
    if (auto e = wire::apply_provider_rules(*r.provider, r.loop, tools_sent)) return *e;
  }
  if (r.client_tools && r.loop.enable_tools) {
    return field_invalid("'tools' with client tools cannot be combined with 'enable_tools' (tools warden runs); send "
                         "one or the other",
                         "tools");
  }
  if (auto e = take_tool_choice(body, tool_names, r)) return *e;
  take_sampling(body, r.conv.sampling);
  if (auto e = take_output_format(body, r.conv.sampling)) return *e;
  if (auto e = take_thinking(body, r.conv.sampling.max_tokens.value_or(0), kind, r.conv.sampling)) return *e;
  auto messages = to_model_messages(body.value("system", json()), body["messages"]);
  if (!messages) return messages.error();
  r.conv.messages = std::move(*messages);
  r.model = body["model"].get<std::string>();
  r.conv.route.model = r.model;  // a pool of engines routes by it, and by the session (engine/engine_pool.h)
  r.conv.route.follow = r.loop.session_id;
  if (!r.loop.session_id.empty()) r.conv.route.record.push_back(r.loop.session_id);
  r.stream = body.value("stream", json(false)).is_boolean() && body.value("stream", false);
  if (!r.server_tools.empty()) {
    r.loop.enable_tools = true;
    std::vector<std::string> names = r.loop.enabled_tools.value_or(std::vector<std::string>{});
    for (const auto& n : r.server_tools) {
      if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
    }
    r.loop.enabled_tools = std::move(names);
  }
  r.loop.stream = r.stream;
  r.loop.surface = "anthropic.messages";
  if (r.conv.parallel_tool_calls == std::optional<bool>(false)) r.loop.parallel_tool_calls = false;
  r.conv.include_usage = true;
  return r;
}

}  // namespace warden::api::anthropic
