#include "api/responses/items.h"

#include "common/ids.h"
#include "common/json_fields.h"

namespace warden::api::responses {

namespace {

std::string where(std::size_t i) { return "input[" + std::to_string(i) + "]"; }

std::optional<error> need_string(const json& obj, const char* key, const std::string& w) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return field_invalid("'" + w + "." + key + "' must be a string", w + "." + key);
  return std::nullopt;
}

result<model::content_part> read_part(const json& p, const std::string& w, model::role role) {
  if (!p.is_object()) return field_wrong_type(w, "a content part object", p);
  if (auto e = need_string(p, "type", w)) return *e;
  const std::string type = p["type"];
  if (type == "input_text" || type == "output_text" || type == "text") {
    if (auto e = need_string(p, "text", w)) return *e;
    return model::content_part(model::text_part{p["text"].get<std::string>()});
  }
  if (type == "refusal") {
    if (auto e = need_string(p, "refusal", w)) return *e;
    return model::content_part(model::text_part{p["refusal"].get<std::string>()});
  }
  if (type == "input_image") {
    if (role != model::role::user) return field_invalid("'" + w + "': images belong in user messages", w + ".type");
    auto url = p.find("image_url");
    if (url == p.end() || !url->is_string() || url->get<std::string>().empty()) {
      return field_invalid("'" + w + ".image_url' must be a URL or a data: URL (file_id is not supported: warden "
                           "has no Files API)", w + ".image_url");
    }
    std::string detail = p.value("detail", json("auto")).is_string() ? p.value("detail", std::string("auto")) : "auto";
    if (detail == "auto") detail.clear();
    return model::content_part(model::image_part{url->get<std::string>(), detail});
  }
  return field_invalid("'" + w + ".type' '" + type +
                           "' is not supported (input_text, input_image, output_text, refusal)",
                       w + ".type");
}

result<model::message> read_message(const json& item, const std::string& w) {
  if (auto e = need_string(item, "role", w)) return *e;
  const std::string role_name = item["role"];
  auto role = model::parse_role(role_name);
  if (!role || *role == model::role::tool) {
    return field_invalid("'" + w + ".role' must be user, assistant, system or developer", w + ".role");
  }
  model::message m;
  m.role = *role;
  const json content = item.value("content", json());
  if (content.is_string()) {
    m.content.emplace_back(model::text_part{content.get<std::string>()});
    return m;
  }
  if (!content.is_array()) return field_wrong_type(w + ".content", "a string or a list of content parts", content);
  for (std::size_t i = 0; i < content.size(); ++i) {
    auto part = read_part(content[i], w + ".content[" + std::to_string(i) + "]", m.role);
    if (!part) return part.error();
    m.content.push_back(std::move(*part));
  }
  return m;
}

/// The assistant message a call or reasoning item joins: the last one, when it is an assistant's.
model::message& assistant_tail(std::vector<model::message>& ms) {
  if (ms.empty() || ms.back().role != model::role::assistant) {
    model::message m;
    m.role = model::role::assistant;
    ms.push_back(std::move(m));
  }
  return ms.back();
}

std::optional<error> read_function_call(const json& item, const std::string& w, model_input& in) {
  for (const char* k : {"call_id", "name", "arguments"}) {
    if (auto e = need_string(item, k, w)) return e;
  }
  if (item.contains("namespace") && !item["namespace"].is_null() && !item["namespace"].is_string()) {
    return field_wrong_type(w + ".namespace", "a string", item["namespace"]);
  }
  assistant_tail(in.messages).content.emplace_back(model::tool_call_part{item["call_id"], model_name_of_call(item), item["arguments"]});
  return std::nullopt;
}

std::optional<error> read_call_output(const json& item, const std::string& w, model_input& in) {
  if (auto e = need_string(item, "call_id", w)) return e;
  const json out = item.value("output", json());
  if (!out.is_string() && !out.is_array()) return field_wrong_type(w + ".output", "a string or a list of content parts", out);
  model::message m;
  m.role = model::role::tool;
  m.content.emplace_back(model::tool_result_part{item["call_id"], content_text(out), false});
  in.messages.push_back(std::move(m));
  return std::nullopt;
}

std::optional<error> read_reasoning(const json& item, const std::string& w, model_input& in) {
  std::string text;
  const json content = item.value("content", json());
  const json summary = item.value("summary", json());
  if (!content.is_null() && !content.is_array()) return field_wrong_type(w + ".content", "a list", content);
  if (!summary.is_null() && !summary.is_array()) return field_wrong_type(w + ".summary", "a list", summary);
  text = content_text(content.is_array() && !content.empty() ? content : summary);
  if (!text.empty()) assistant_tail(in.messages).content.emplace_back(model::reasoning_part{text});
  return std::nullopt;
}

std::optional<error> read_approval(const json& item, const std::string& w, model_input& in) {
  if (auto e = need_string(item, "approval_request_id", w)) return e;
  auto ap = item.find("approve");
  if (ap == item.end() || !ap->is_boolean()) return field_invalid("'" + w + ".approve' must be a boolean", w + ".approve");
  const json reason = item.value("reason", json());
  if (!reason.is_null() && !reason.is_string()) return field_wrong_type(w + ".reason", "a string", reason);
  in.approvals.push_back(approval_answer{item["approval_request_id"], ap->get<bool>(), reason.is_string() ? reason.get<std::string>() : ""});
  return std::nullopt;
}

std::optional<error> read_item(const json& item, std::size_t i, model_input& in) {
  const std::string w = where(i);
  if (!item.is_object()) return field_wrong_type(w, "an input item object", item);
  const json type_j = item.value("type", json("message"));
  if (!type_j.is_string()) return field_wrong_type(w + ".type", "a string", type_j);
  const std::string type = type_j;
  if (type == "message") {
    auto m = read_message(item, w);
    if (!m) return m.error();
    if (m->role == model::role::user || m->role == model::role::assistant) in.has_user_or_assistant = true;
    in.messages.push_back(std::move(*m));
    return std::nullopt;
  }
  if (type == "function_call") {
    in.has_user_or_assistant = true;
    return read_function_call(item, w, in);
  }
  if (type == "function_call_output") {
    in.has_user_or_assistant = true;
    return read_call_output(item, w, in);
  }
  if (type == "reasoning") return read_reasoning(item, w, in);
  if (type == "mcp_approval_response") {
    in.has_user_or_assistant = true;
    return read_approval(item, w, in);
  }
  if (type == "mcp_approval_request" || type == "mcp_call" || type == "mcp_list_tools") return std::nullopt;
  return field_invalid("'" + w + ".type' '" + type +
                           "' is not supported (message, function_call, function_call_output, reasoning, "
                           "mcp_approval_response)",
                       w + ".type");
}

json listed_item(json&& item) {
  json out = item.is_object() ? std::move(item) : json::object();
  if (!out.contains("type")) out["type"] = "message";
  if (out["type"] == "message" && out.value("content", json()).is_string()) {
    const std::string role = out.value("role", std::string("user"));
    const char* part = role == "assistant" ? "output_text" : "input_text";
    out["content"] = json::array({{{"type", part}, {"text", out["content"]}}});
  }
  if (!out.value("id", json()).is_string()) {
    out["id"] = ids::new_id(out["type"] == "message" ? ids::kind::message : ids::kind::input_item);
  }
  return out;
}

}  // namespace

std::string content_text(const json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string text;
  if (!content.is_array()) return text;
  for (const auto& p : content) {
    if (p.is_object() && p.value("text", json()).is_string()) text += p["text"].get<std::string>();
  }
  return text;
}

result<model_input> to_model_input(json input, bool list_items) {
  model_input in;
  if (input.is_string()) {
    model::message m;
    m.content.emplace_back(model::text_part{input.get<std::string>()});
    in.messages.push_back(std::move(m));
    in.has_user_or_assistant = true;
    if (list_items) in.items.push_back(listed_item({{"type", "message"}, {"role", "user"}, {"content", input}}));
    return in;
  }
  if (!input.is_array()) return field_wrong_type("input", "a string or a list of input items", input);
  for (std::size_t i = 0; i < input.size(); ++i) {
    if (auto e = read_item(input[i], i, in)) return *e;
    if (list_items) in.items.push_back(listed_item(std::move(input[i])));
  }
  return in;
}

}  // namespace warden::api::responses
