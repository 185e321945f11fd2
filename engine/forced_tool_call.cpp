#include "engine/forced_tool_call.h"

#include "common/ids.h"

namespace warden::engine {

namespace {

json tool_call_entry(const forced_call& call, std::string arguments, bool with_index) {
  json tc = {{"id", call.call_id},
             {"type", "function"},
             {"function", {{"name", call.name}, {"arguments", std::move(arguments)}}}};
  if (with_index) tc["index"] = 0;
  return tc;
}

}  // namespace

std::optional<forced_call> find_forced_call(const json& body) {
  auto tc = body.find("tool_choice");
  if (tc == body.end() || !tc->is_object()) return std::nullopt;
  auto fn = tc->find("function");
  if (fn == tc->end() || !fn->is_object() || !fn->contains("name") || !(*fn)["name"].is_string()) return std::nullopt;
  const std::string name = (*fn)["name"].get<std::string>();
  auto tools = body.find("tools");
  if (tools == body.end() || !tools->is_array()) return std::nullopt;
  for (const auto& t : *tools) {
    if (!t.is_object() || !t.contains("function") || !t["function"].is_object()) continue;
    const json& f = t["function"];
    if (!f.contains("name") || f["name"] != name) continue;
    forced_call call;
    call.name = name;
    if (f.contains("description") && f["description"].is_string()) call.description = f["description"];
    // No schema, or an empty one ({} is a common way to declare "no arguments"): still insist
    // on a JSON object, or the grammar would not constrain the output at all.
    call.parameters = f.contains("parameters") && f["parameters"].is_object() && !f["parameters"].empty()
                          ? f["parameters"]
                          : json{{"type", "object"}};
    call.call_id = ids::new_id(ids::kind::tool_call);
    return call;
  }
  return std::nullopt;
}

json rewrite_request(json body, const forced_call& call) {
  body.erase("tools");
  body.erase("tool_choice");
  body.erase("parallel_tool_calls");
  body["response_format"] = {{"type", "json_schema"},
                             {"json_schema", {{"name", call.name}, {"schema", call.parameters}}}};
  std::string instruction = "Call the function `" + call.name + "`";
  if (!call.description.empty()) instruction += " (" + call.description + ")";
  instruction += ". Reply with only its arguments, as one JSON object that matches its parameter schema.";
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
    std::string args = msg.contains("content") && msg["content"].is_string() ? msg["content"].get<std::string>() : "";
    if (args.find_first_not_of(" \t\r\n") == std::string::npos) args = "{}";
    // Compact the arguments the way OpenAI sends them, when they parse.
    if (auto parsed = parse_json(args)) args = dump_safe(*parsed);
    msg["content"] = nullptr;
    msg["tool_calls"] = json::array({tool_call_entry(call, std::move(args), false)});
    if (choice.value("finish_reason", json()).is_string() && choice["finish_reason"] == "stop") {
      choice["finish_reason"] = "tool_calls";
    }
  }
  return completion;
}

void stream_rewriter::rewrite(json& chunk) {
  auto choices = chunk.find("choices");
  if (choices == chunk.end() || !choices->is_array()) return;
  for (auto& choice : *choices) {
    if (!choice.is_object()) continue;
    if (choice.contains("delta") && choice["delta"].is_object()) {
      json& delta = choice["delta"];
      if (delta.contains("content") && delta["content"].is_string()) {
        std::string text = delta["content"].get<std::string>();
        delta.erase("content");
        if (!announced_) {
          announced_ = true;
          delta["tool_calls"] = json::array({tool_call_entry(call_, std::move(text), true)});
        } else if (!text.empty()) {
          delta["tool_calls"] = json::array({{{"index", 0}, {"function", {{"arguments", std::move(text)}}}}});
        }
      }
    }
    if (choice.value("finish_reason", json()).is_string() && choice["finish_reason"] == "stop") {
      choice["finish_reason"] = "tool_calls";
    }
  }
}

}  // namespace warden::engine
