#include "engine/forced_tool_call.h"

#include <algorithm>
#include <utility>

#include "common/ids.h"

namespace warden::engine {

namespace {

json tool_call_entry(const forced_call& call, const std::string& name, std::string arguments, bool with_index) {
  json tc = {{"id", call.call_id},
             {"type", "function"},
             {"function", {{"name", name}, {"arguments", std::move(arguments)}}}};
  if (with_index) tc["index"] = 0;
  return tc;
}

/// The `function` object of a chat tool entry with a string name; nullptr otherwise.
const json* function_of(const json& tool) {
  if (!tool.is_object() || !tool.contains("function") || !tool["function"].is_object()) return nullptr;
  const json& f = tool["function"];
  return f.contains("name") && f["name"].is_string() ? &f : nullptr;
}

/// No schema, or an empty one ({} is a common way to declare "no arguments"): still insist on a
/// JSON object, or the grammar would not constrain the output at all.
json arguments_schema(const json& f) {
  return f.contains("parameters") && f["parameters"].is_object() && !f["parameters"].empty() ? f["parameters"]
                                                                                             : json{{"type", "object"}};
}

std::string description_of(const json& f) {
  return f.contains("description") && f["description"].is_string() ? f["description"].get<std::string>() : "";
}

forced_call named_call(const json& f) {
  forced_call call;
  call.name = f["name"].get<std::string>();
  call.description = description_of(f);
  call.parameters = arguments_schema(f);
  call.call_id = ids::new_id(ids::kind::tool_call);
  return call;
}

/// The key of a choice's arguments. Not "arguments": the schema reaches llama-server with its keys
/// sorted (nlohmann's json), its grammar writes properties in that order, and the model should
/// name the function before it writes the arguments ("name" < "parameters"; Llama 3's own word).
constexpr const char* k_choice_args = "parameters";

/// `required`: the single declared function, or {"name","parameters"} as the anyOf of each (or,
/// past the limits of forced_tool_call.h, with the name alone constrained).
std::optional<forced_call> any_call(const json& tools) {
  std::vector<const json*> fns;
  for (const auto& t : tools) {
    if (const json* f = function_of(t)) fns.push_back(f);
  }
  if (fns.empty()) return std::nullopt;
  if (fns.size() == 1) return named_call(*fns[0]);
  forced_call call;
  json any = json::array();
  std::size_t schema_bytes = 0;
  bool names_only = fns.size() > k_any_of_max_functions;  // past a limit, no schema is copied or measured
  for (const json* f : fns) {
    const std::string name = (*f)["name"].get<std::string>();
    call.names.push_back(name);
    const std::string d = description_of(*f);
    call.description += (call.description.empty() ? "`" : "; `") + name + "`" + (d.empty() ? "" : " (" + d + ")");
    if (names_only) continue;
    json args = arguments_schema(*f);
    schema_bytes += dump_safe(args).size();
    names_only = schema_bytes > k_any_of_max_schema_bytes;
    any.push_back({{"type", "object"},
                   {"properties", {{"name", {{"const", name}}}, {k_choice_args, std::move(args)}}},
                   {"required", {"name", k_choice_args}}});
  }
  if (names_only) {
    call.parameters = {{"type", "object"},
                       {"properties", {{"name", {{"enum", call.names}}}, {k_choice_args, {{"type", "object"}}}}},
                       {"required", {"name", k_choice_args}}};
  } else {
    call.parameters = {{"anyOf", std::move(any)}};
  }
  call.call_id = ids::new_id(ids::kind::tool_call);
  return call;
}

/// An any_of answer → (name, compact arguments) when it is {"name": a declared function,
/// "parameters": {…}} ("arguments" is read too); missing or non-object arguments count as {}.
std::optional<std::pair<std::string, std::string>> parse_choice(const std::string& text, const forced_call& call) {
  auto j = parse_json(text);
  if (!j || !j->is_object()) return std::nullopt;
  auto n = j->find("name");
  if (n == j->end() || !n->is_string()) return std::nullopt;
  std::string name = n->get<std::string>();
  if (std::find(call.names.begin(), call.names.end(), name) == call.names.end()) return std::nullopt;
  auto a = j->find(k_choice_args);
  if (a == j->end()) a = j->find("arguments");
  return std::pair{std::move(name), a != j->end() && a->is_object() ? dump_safe(*a) : std::string("{}")};
}

void mark_tool_turn(json& choice) {
  if (choice.value("finish_reason", json()).is_string() && choice["finish_reason"] == "stop") {
    choice["finish_reason"] = "tool_calls";
  }
}

}  // namespace

std::optional<forced_call> find_forced_call(const json& body, bool force_required) {
  auto tools = body.find("tools");
  auto tc = body.find("tool_choice");
  if (tools == body.end() || !tools->is_array() || tc == body.end()) return std::nullopt;
  if (tc->is_string()) {
    if (force_required && *tc == "required") return any_call(*tools);
    return std::nullopt;
  }
  if (!tc->is_object()) return std::nullopt;
  auto fn = tc->find("function");
  if (fn == tc->end() || !fn->is_object() || !fn->contains("name") || !(*fn)["name"].is_string()) return std::nullopt;
  const std::string name = (*fn)["name"].get<std::string>();
  for (const auto& t : *tools) {
    const json* f = function_of(t);
    if (f && (*f)["name"] == name) return named_call(*f);
  }
  return std::nullopt;
}

void enforce_json_object(json& body) {
  auto rf = body.find("response_format");
  if (rf == body.end() || !rf->is_object() || rf->value("type", json()) != "json_object") return;
  *rf = {{"type", "json_schema"}, {"json_schema", {{"name", "json_object"}, {"schema", {{"type", "object"}}}}}};
}

void add_chatml_stop(json& body) {
  static const std::string k_end = "<|im_end|>";
  auto st = body.find("stop");
  if (st == body.end() || st->is_null()) {
    body["stop"] = json::array({k_end});
  } else if (st->is_string()) {
    if (*st != k_end) body["stop"] = json::array({st->get<std::string>(), k_end});
  } else if (st->is_array()) {
    if (std::find(st->begin(), st->end(), json(k_end)) == st->end()) st->push_back(k_end);
  }
}

json rewrite_request(json body, const forced_call& call) {
  body.erase("tools");
  body.erase("tool_choice");
  body.erase("parallel_tool_calls");
  body["response_format"] = {{"type", "json_schema"},
                             {"json_schema", {{"name", call.any_of() ? "tool_call" : call.name}, {"schema", call.parameters}}}};
  std::string instruction;
  if (call.any_of()) {
    instruction = "Call one of these functions: " + call.description +
                  ". Reply with only one JSON object {\"name\": the function's name, \"parameters\": its arguments "
                  "object matching its parameter schema}.";
  } else {
    instruction = "Call the function `" + call.name + "`";
    if (!call.description.empty()) instruction += " (" + call.description + ")";
    instruction += ". Reply with only its arguments, as one JSON object that matches its parameter schema.";
  }
  json& messages = body["messages"];
  if (!messages.empty() && messages[0].is_object() && messages[0].value("role", "") == "system" &&
      messages[0].contains("content") && messages[0]["content"].is_string()) {
    messages[0]["content"] = messages[0]["content"].get<std::string>() + "\n\n" + instruction;
  } else {
    messages.insert(messages.begin(), json{{"role", "system"}, {"content", instruction}});
  }
  return body;
}

json rewrite_completion(json completion, const forced_call& call) {
  auto choices = completion.find("choices");
  if (choices == completion.end() || !choices->is_array()) return completion;
  for (auto& choice : *choices) {
    if (!choice.is_object() || !choice.contains("message") || !choice["message"].is_object()) continue;
    json& msg = choice["message"];
    // Cut by max_tokens, a named call keeps its partial arguments with finish_reason length, as
    // OpenAI returns one and as warden's typed path (which reads the stream) does; a choice among
    // several that does not parse stays text below.
    std::string args = msg.contains("content") && msg["content"].is_string() ? msg["content"].get<std::string>() : "";
    std::string name = call.name;
    if (call.any_of()) {
      auto chosen = parse_choice(args, call);
      if (!chosen) continue;  // not a call (cut short): the text stays as the model wrote it
      name = std::move(chosen->first);
      args = std::move(chosen->second);
    }
    if (args.find_first_not_of(" \t\r\n") == std::string::npos) args = "{}";
    // Compact the arguments the way OpenAI sends them, when they parse.
    if (auto parsed = parse_json(args)) args = dump_safe(*parsed);
    msg["content"] = nullptr;
    msg["tool_calls"] = json::array({tool_call_entry(call, name, std::move(args), false)});
    mark_tool_turn(choice);
  }
  return completion;
}

void stream_rewriter::rewrite(json& chunk) {
  auto choices = chunk.find("choices");
  if (choices == chunk.end() || !choices->is_array()) return;
  for (auto& choice : *choices) {
    if (!choice.is_object()) continue;
    if (call_.any_of()) {
      rewrite_any_of(choice);
      continue;
    }
    if (choice.contains("delta") && choice["delta"].is_object()) {
      json& delta = choice["delta"];
      if (delta.contains("content") && delta["content"].is_string()) {
        std::string text = delta["content"].get<std::string>();
        delta.erase("content");
        if (!announced_) {
          announced_ = true;
          delta["tool_calls"] = json::array({tool_call_entry(call_, call_.name, std::move(text), true)});
        } else if (!text.empty()) {
          delta["tool_calls"] = json::array({{{"index", 0}, {"function", {{"arguments", std::move(text)}}}}});
        }
      }
    }
    mark_tool_turn(choice);
  }
}

void stream_rewriter::rewrite_any_of(json& choice) {
  if (!choice.contains("delta") || !choice["delta"].is_object()) choice["delta"] = json::object();
  json& delta = choice["delta"];
  if (delta.contains("content") && delta["content"].is_string()) {
    buffered_ += delta["content"].get<std::string>();
    delta.erase("content");
  }
  if (!choice.value("finish_reason", json()).is_string()) return;
  if (auto chosen = parse_choice(buffered_, call_)) {
    delta["tool_calls"] = json::array({tool_call_entry(call_, chosen->first, std::move(chosen->second), true)});
    mark_tool_turn(choice);
  } else if (!buffered_.empty()) {
    delta["content"] = buffered_;
  }
  buffered_.clear();
}

}  // namespace warden::engine
