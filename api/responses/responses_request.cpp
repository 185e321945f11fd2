#include "api/responses/responses_request.h"

#include <algorithm>

#include "api/wire/loop_fields.h"
#include "common/field_table.h"
#include "common/json_fields.h"

namespace warden::api::responses {

namespace {

/// One function tool (top level, or inside a namespace whose flat names are `prefix` + name).
std::optional<error> read_function_tool(const json& t, const std::string& w, const std::string& ns, responses_request& r) {
  const json name = t.value("name", json());
  if (!name.is_string() || name.get<std::string>().empty()) {
    return field_invalid("'" + w + ".name' is required for a function tool", "tools", "invalid_value");
  }
  const json params = t.value("parameters", json());
  if (!params.is_null() && !params.is_object()) return field_wrong_type(w + ".parameters", "a JSON schema object", params);
  if (auto why = model::tool_name_problem(name.get<std::string>())) {
    return field_invalid("'" + w + ".name' " + *why, "tools", "invalid_value");
  }
  const json desc = t.value("description", json());
  std::string flat = ns.empty() ? name.get<std::string>() : flat_namespaced_name(ns, name.get<std::string>());
  if (auto why = model::tool_name_problem(flat)) {  // the name the model sees: the namespace's and the tool's
    return field_invalid("'" + w + ".name' in namespace '" + ns + "' makes the tool name '" + flat.substr(0, 300) + "', which " +
                             *why,
                         "tools", "invalid_value");
  }
  for (const auto& have : r.conv.tools) {
    if (have.name == flat) return field_invalid("'" + w + ".name' '" + flat + "' is declared twice", "tools", "invalid_value");
  }
  if (!ns.empty()) r.namespaced[flat] = {ns, name.get<std::string>()};
  r.conv.tools.push_back(model::tool_spec{std::move(flat), desc.is_string() ? desc.get<std::string>() : "",
                                          params.is_object() ? params : json{{"type", "object"}, {"properties", json::object()}}});
  return std::nullopt;
}

/// A tool warden cannot serve (a hosted tool, a custom tool): left out, with a note.
void drop_tool(const std::string& w, const std::string& type, responses_request& r) {
  r.notes.push_back("'" + w + "' (" + type + ") was left out: warden does not serve this tool type");
}

std::optional<error> read_namespace(const json& t, const std::string& w, responses_request& r) {
  const json ns = t.value("name", json());
  if (!ns.is_string() || ns.get<std::string>().empty()) {
    return field_invalid("'" + w + ".name' is required for a namespace", "tools", "invalid_value");
  }
  if (auto why = model::tool_name_problem(ns.get<std::string>())) {
    return field_invalid("'" + w + ".name' " + *why, "tools", "invalid_value");
  }
  const json inner = t.value("tools", json());
  if (!inner.is_array()) return field_wrong_type(w + ".tools", "a list of tools", inner);
  for (std::size_t i = 0; i < inner.size(); ++i) {
    const std::string iw = w + ".tools[" + std::to_string(i) + "]";
    if (!inner[i].is_object()) return field_wrong_type(iw, "a tool object", inner[i]);
    const json type = inner[i].value("type", json());
    if (type != "function") {
      drop_tool(iw, type.is_string() ? type.get<std::string>() : "no type", r);
      continue;
    }
    if (auto e = read_function_tool(inner[i], iw, ns, r)) return e;
  }
  return std::nullopt;
}

/// A hosted `mcp` tool naming warden (server_label "warden", as warden's mcp_approval_request
/// items say): the switch for warden's own tools, as the Agents SDK's HostedMCPTool sends it.
/// Another server is left out with a note (warden is not an MCP client yet).
std::optional<error> read_hosted_mcp(const json& t, const std::string& w, responses_request& r) {
  const json label = t.value("server_label", json());
  if (label != "warden") {
    drop_tool(w, "mcp server '" + (label.is_string() ? label.get<std::string>() : std::string("?")) + "'", r);
    return std::nullopt;
  }
  if (r.hosted) return field_invalid("'" + w + "' names warden a second time; declare the hosted warden tool once", "tools");
  hosted_warden h;
  json allowed = t.value("allowed_tools", json());
  if (allowed.is_object()) allowed = allowed.value("tool_names", json());
  if (!allowed.is_null()) {
    if (!allowed.is_array()) return field_wrong_type(w + ".allowed_tools", "a list of tool names", allowed);
    std::vector<std::string> names;
    for (const auto& n : allowed) {
      if (!n.is_string()) return field_invalid("'" + w + ".allowed_tools' must hold tool names (strings)", w + ".allowed_tools");
      names.push_back(n);
    }
    h.allowed_tools = std::move(names);
  }
  const json approval = t.value("require_approval", json("always"));
  h.permission_mode = approval == "never" ? "off" : "ask";  // "always", or per-tool rules: every call asks
  r.hosted = std::move(h);
  return std::nullopt;
}

std::optional<error> read_tools(const json& body, responses_request& r) {
  auto it = body.find("tools");
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_array()) return field_wrong_type("tools", "a list of tools", *it);
  for (std::size_t i = 0; i < it->size(); ++i) {
    const json& t = (*it)[i];
    const std::string w = "tools[" + std::to_string(i) + "]";
    if (!t.is_object()) return field_wrong_type(w, "a tool object", t);
    const json type = t.value("type", json());
    if (!type.is_string()) return field_invalid("'" + w + ".type' is required (a string)", "tools", "invalid_value");
    std::optional<error> e;
    if (type == "function") e = read_function_tool(t, w, "", r);
    else if (type == "namespace") e = read_namespace(t, w, r);
    else if (type == "mcp") e = read_hosted_mcp(t, w, r);
    else drop_tool(w, type.get<std::string>(), r);
    if (e) return e;
  }
  r.client_tools = !r.conv.tools.empty();
  return std::nullopt;
}

std::optional<error> read_tool_choice(const json& body, responses_request& r) {
  auto it = body.find("tool_choice");
  if (it == body.end() || it->is_null()) return std::nullopt;
  using m = model::tool_choice::mode;
  if (it->is_string()) {
    const std::string s = *it;
    if (s == "auto") r.conv.tool_choice = model::tool_choice{m::auto_, ""};
    else if (s == "none") r.conv.tool_choice = model::tool_choice{m::none, ""};
    else if (s == "required") r.conv.tool_choice = model::tool_choice{m::required, ""};
    else return field_invalid("'tool_choice' must be auto, none, required or {\"type\":\"function\",\"name\":…}", "tool_choice");
    return std::nullopt;
  }
  if (!it->is_object()) return field_wrong_type("tool_choice", "a string or an object", *it);
  if (it->value("type", json()) != "function") {
    return field_invalid("'tool_choice.type' must be 'function' (hosted tool choices are not supported)", "tool_choice");
  }
  const json name = it->value("name", json());
  if (!name.is_string() || name.get<std::string>().empty()) {
    return field_invalid("'tool_choice' forces a function but gives no 'name'", "tool_choice");
  }
  r.conv.tool_choice = model::tool_choice{m::named, name};
  return std::nullopt;
}

std::optional<error> read_text_format(const json& body, responses_request& r) {
  auto it = body.find("text");
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_object()) return field_wrong_type("text", "an object", *it);
  const json fmt = it->value("format", json());
  if (fmt.is_null()) return std::nullopt;
  if (!fmt.is_object() || !fmt.value("type", json()).is_string()) return field_wrong_type("text.format", "an object with a type", fmt);
  const std::string type = fmt["type"];
  if (type == "text") return std::nullopt;
  if (type == "json_object") {
    r.conv.sampling.extra["response_format"] = {{"type", "json_object"}};
    return std::nullopt;
  }
  if (type != "json_schema") return field_invalid("'text.format.type' must be text, json_object or json_schema", "text.format.type");
  const json schema = fmt.value("schema", json());
  if (!schema.is_object()) return field_invalid("'text.format.schema' must be a JSON schema object", "text.format.schema");
  json js = {{"name", fmt.value("name", json("response"))}, {"schema", schema}};
  if (fmt.contains("strict")) js["strict"] = fmt["strict"];
  r.conv.sampling.extra["response_format"] = {{"type", "json_schema"}, {"json_schema", std::move(js)}};
  return std::nullopt;
}

std::optional<error> read_reasoning(const json& body, responses_request& r) {
  auto it = body.find("reasoning");
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_object()) return field_wrong_type("reasoning", "an object", *it);
  const json summary = it->value("summary", json());
  if (!summary.is_null() && summary != "auto" && summary != "concise" && summary != "detailed") {
    return field_invalid("'reasoning.summary' must be auto, concise or detailed", "reasoning.summary");
  }
  const json effort = it->value("effort", json());
  if (effort.is_null()) return std::nullopt;
  if (!effort.is_string()) return field_wrong_type("reasoning.effort", "a string", effort);
  const std::string e = effort;
  if (e == "none" || e == "minimal") {
    r.conv.sampling.extra["chat_template_kwargs"] = {{"enable_thinking", false}};
  } else if (e == "low" || e == "medium" || e == "high" || e == "xhigh") {
    r.conv.sampling.extra["reasoning_effort"] = e;
  } else {
    return field_invalid("'reasoning.effort' must be none, minimal, low, medium, high or xhigh", "reasoning.effort");
  }
  return std::nullopt;
}

std::optional<bool> flag(const json& body, const char* name) {
  auto it = body.find(name);
  if (it == body.end() || !it->is_boolean()) return std::nullopt;
  return it->get<bool>();
}

std::optional<error> background_needs_store(json& body) {
  if (flag(body, "background") == true && flag(body, "store") == false) {
    return field_invalid("'background' requires 'store': true (a background run is kept to be polled)", "background");
  }
  return std::nullopt;
}

std::optional<error> check_metadata(json& body) {
  const json meta = body.value("metadata", json());
  if (!meta.is_null() && (!meta.is_object() || meta.size() > 16)) return field_wrong_type("metadata", "an object of at most 16 string values", meta);
  if (meta.is_object()) {
    for (const auto& [k, v] : meta.items()) {
      if (!v.is_string()) return field_wrong_type("metadata." + k, "a string", v);
    }
  }
  return std::nullopt;
}

using fields::field;
using fields::field_type;

constexpr std::string_view k_approval_formats[] = {"mcp", "stream"};

/// The flags and state fields of POST /v1/responses, checked after warden's tool-loop
/// extensions, in the order their faults are reported.
constexpr field k_request_fields[] = {
    {.name = "store", .type = field_type::boolean},
    {.name = "stream", .type = field_type::boolean},
    {.name = "background", .type = field_type::boolean},
    {.name = "parallel_tool_calls", .type = field_type::boolean},
    {.name = "background", .type = field_type::custom, .check = &background_needs_store},
    {.name = "approval_format", .type = field_type::one_of, .one_of = k_approval_formats,
     .message = "'approval_format' must be 'mcp' or 'stream'"},
    {.name = "previous_response_id", .type = field_type::string, .want = "a response id", .nonempty = true},
    // state a client would wrongly think is kept
    {.name = "conversation", .type = field_type::refused,
     .message = "'conversation' is not supported; chain responses with 'previous_response_id'"},
    {.name = "prompt", .type = field_type::refused,
     .message = "'prompt' is not supported; chain responses with 'previous_response_id'"},
    {.name = "instructions", .type = field_type::string},
    {.name = "metadata", .type = field_type::custom, .check = &check_metadata},
};

/// The sampling fields, checked after input, tools and tool_choice.
constexpr field k_sampling_fields[] = {
    {.name = "temperature", .type = field_type::number, .lo = 0.0, .hi = 2.0},
    {.name = "top_p", .type = field_type::number, .lo = 0.0, .hi = 1.0},
    {.name = "max_output_tokens", .type = field_type::integer, .min = 1, .max = std::int64_t{1} << 40},
};

/// The checked flags and state fields into `r`.
void read_flags(const json& body, responses_request& r) {
  r.store = flag(body, "store").value_or(true);
  r.stream = flag(body, "stream").value_or(false);
  r.background = flag(body, "background").value_or(false);
  if (auto parallel = flag(body, "parallel_tool_calls")) r.conv.parallel_tool_calls = *parallel;
  r.approval_mcp = body.value("approval_format", json()) == "mcp";
  if (const json prev = body.value("previous_response_id", json()); prev.is_string()) r.previous_response_id = prev;
  if (const json instr = body.value("instructions", json()); instr.is_string()) r.instructions = instr;
}

/// The checked sampling fields into `r`.
std::optional<error> read_sampling(json& body, responses_request& r) {
  if (auto e = fields::check_fields(body, k_sampling_fields)) return e;
  if (body.contains("temperature") && body["temperature"].is_number()) r.conv.sampling.temperature = body["temperature"].get<double>();
  if (body.contains("top_p") && body["top_p"].is_number()) r.conv.sampling.top_p = body["top_p"].get<double>();
  if (body.contains("max_output_tokens") && body["max_output_tokens"].is_number()) {
    r.conv.sampling.max_tokens = body["max_output_tokens"].get<std::int64_t>();
  }
  return std::nullopt;
}

/// Takes `input` out of `body` (moved, not copied: it can hold hundreds of thousands of items).
std::optional<error> read_input(json& body, responses_request& r) {
  json input;
  if (auto it = body.find("input"); it != body.end()) input = std::move(*it);
  const bool empty = input.is_null() || (input.is_string() && input.get<std::string>().empty()) ||
                     (input.is_array() && input.empty());
  if (empty) return field_invalid("No input provided.", "input");
  auto in = to_model_input(std::move(input), r.store);
  if (!in) return in.error();
  r.input = std::move(*in);
  if (!r.input.has_user_or_assistant) {
    return field_invalid("'input' has only system or developer messages; add a user message", "input");
  }
  return std::nullopt;
}

/// OpenAI's `truncation`: "auto" drops input items from the middle when the conversation does
/// not fit: warden's truncate_middle (unless context_overflow names a policy); "disabled" (the
/// default) fails with context_length_exceeded.
std::optional<error> read_truncation(const json& body, responses_request& r) {
  auto it = body.find("truncation");
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_string() || (*it != "auto" && *it != "disabled")) {
    return field_invalid("'truncation' must be \"auto\" or \"disabled\"", "truncation");
  }
  if (*it == "auto") r.loop.context_overflow = model::overflow_policy::truncate_middle;
  return std::nullopt;
}

void keep_echo(const json& body, responses_request& r) {
  for (const char* k : {"tools", "tool_choice", "temperature", "top_p", "max_output_tokens", "parallel_tool_calls", "text",
                        "reasoning", "metadata", "instructions", "truncation", "user"}) {
    if (body.contains(k)) r.echo[k] = body[k];
  }
}

/// The hosted warden tool (read_hosted_mcp) as warden's loop fields: its tools on (those of
/// allowed_tools), require_approval as the permission mode, approvals as mcp_approval_request
/// items; kept in loop_fields so a parked turn resumes with them.
std::optional<error> apply_hosted_warden(responses_request& r, std::span<const std::string> tool_names) {
  if (!r.hosted) return std::nullopt;
  if (r.loop_fields.value("enable_tools", json()) == false) {
    return field_invalid("'tools' names warden as a hosted mcp tool, which turns its tools on, but 'enable_tools' is false",
                         "enable_tools");
  }
  if (r.hosted->allowed_tools) {
    for (const auto& n : *r.hosted->allowed_tools) {
      if (std::find(tool_names.begin(), tool_names.end(), n) == tool_names.end()) {
        return field_invalid("'allowed_tools' names '" + n + "', which is not one of warden's tools", "tools");
      }
    }
    r.loop.enabled_tools = r.hosted->allowed_tools;
    r.loop_fields["enabled_tools"] = *r.hosted->allowed_tools;
  }
  r.loop.enable_tools = true;
  r.loop_fields["enable_tools"] = true;
  r.loop_fields_sent = true;
  if (!r.loop.gate.permission_mode) {
    r.loop.gate.permission_mode = r.hosted->permission_mode;
    r.loop_fields["permission_mode"] = r.hosted->permission_mode;
  }
  // Approvals as mcp_approval_request items, when a call can be asked about at all ("never": none).
  r.approval_mcp = r.loop.gate.permission_mode != std::optional<std::string>("off");
  return std::nullopt;
}

}  // namespace

result<responses_request> parse_responses_request(std::string_view text, std::span<const std::string> tool_names) {
  auto parsed = parse_request_body(text, "'input'");
  if (!parsed) return parsed.error();
  json body = std::move(*parsed);
  responses_request r;
  const json model = body.value("model", json());
  if (!model.is_string() || model.get<std::string>().empty()) return field_invalid("'model' is required (a string)", "model");
  r.model = model;
  for (const char* k : {"enable_tools", "enabled_tools", "confirm_tool_calls", "confirm_code_execution", "bypass_permissions",
                        "permission_mode", "max_tool_calls_per_message", "tool_call_timeout", "session_id",
                        "context_overflow"}) {
    if (body.contains(k)) r.loop_fields[k] = body[k];
  }
  r.loop_fields_sent = body.contains("enable_tools");
  if (auto e = read_truncation(body, r)) return *e;  // before: an explicit context_overflow wins
  if (auto e = wire::take_loop_fields(body, r.loop, tool_names)) return *e;
  auto provider = wire::take_provider_fields(body);
  if (!provider) return provider.error();
  r.provider = std::move(*provider);
  if (auto e = fields::check_fields(body, k_request_fields)) return *e;
  read_flags(body, r);
  if (auto e = read_input(body, r)) return *e;
  const json tools_sent = {{"tools", body.value("tools", json())}};  // for the provider rules
  for (auto* step : {&read_tools, &read_tool_choice}) {
    if (auto e = step(body, r)) return *e;
  }
  if (r.provider) {
    if (auto e = wire::apply_provider_rules(*r.provider, r.loop, tools_sent)) return *e;
  }
  if (auto e = read_sampling(body, r)) return *e;
  for (auto* step : {&read_text_format, &read_reasoning}) {
    if (auto e = step(body, r)) return *e;
  }
  if (auto e = apply_hosted_warden(r, tool_names)) return *e;
  if (r.client_tools && r.loop.enable_tools) {
    return field_invalid("'tools' (function tools) cannot be combined with 'enable_tools': warden runs its own tools "
                         "or the client runs its functions, one per request",
                         "tools");
  }
  if (r.conv.tool_choice && r.conv.tool_choice->kind == model::tool_choice::mode::named && !r.loop.enable_tools) {
    const auto& n = r.conv.tool_choice->name;
    bool known = false;
    for (const auto& t : r.conv.tools) known = known || t.name == n;
    if (!known) return field_invalid("'tool_choice' names function '" + n + "', which is not in 'tools'", "tool_choice");
  }
  if (r.conv.tool_choice && r.conv.tool_choice->kind == model::tool_choice::mode::required && r.conv.tools.empty() &&
      wire::selected_names(r.loop, tool_names).empty()) {
    return field_invalid("'tool_choice' 'required' needs tools: send function 'tools' (or enable warden's with "
                         "'enable_tools')",
                         "tool_choice");
  }
  r.loop.surface = "openai.responses";
  keep_echo(body, r);
  // The response says whether it may truncate (OpenAI's field), whichever field asked.
  if (r.loop.context_overflow != model::overflow_policy::error) r.echo["truncation"] = "auto";
  if (!r.notes.empty()) r.echo["warden_notes"] = r.notes;
  r.conv.messages = r.input.messages;
  return r;
}

}  // namespace warden::api::responses
