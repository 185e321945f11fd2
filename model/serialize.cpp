#include "model/serialize.h"

#include <string>

namespace warden::model {

namespace {

json part_json(const content_part& p) {
  return std::visit(
      [](const auto& v) -> json {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, text_part>) return {{"type", "text"}, {"text", v.text}};
        else if constexpr (std::is_same_v<T, reasoning_part>) return {{"type", "reasoning"}, {"text", v.text}};
        else if constexpr (std::is_same_v<T, tool_call_part>)
          return {{"type", "tool_call"}, {"id", v.id}, {"name", v.name}, {"arguments", v.arguments}};
        else if constexpr (std::is_same_v<T, tool_result_part>)
          return {{"type", "tool_result"}, {"tool_call_id", v.tool_call_id}, {"content", v.content}, {"is_error", v.is_error}};
        else if constexpr (std::is_same_v<T, image_part>) return {{"type", "image"}, {"url", v.url}, {"detail", v.detail}};
        else return {{"type", "opaque"}, {"value", v.value}};
      },
      p);
}

std::string str(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::optional<content_part> part_from_json(const json& j) {
  if (!j.is_object()) return std::nullopt;
  const std::string type = str(j, "type");
  if (type == "text") return text_part{str(j, "text")};
  if (type == "reasoning") return reasoning_part{str(j, "text")};
  if (type == "tool_call") return tool_call_part{str(j, "id"), str(j, "name"), str(j, "arguments")};
  if (type == "tool_result") {
    return tool_result_part{str(j, "tool_call_id"), str(j, "content"), j.value("is_error", false)};
  }
  if (type == "image") return image_part{str(j, "url"), str(j, "detail")};
  if (type == "opaque") return opaque_part{j.contains("value") ? j["value"] : json()};
  return std::nullopt;
}

}  // namespace

json to_json(const message& m) {
  json parts = json::array();
  for (const auto& p : m.content) parts.push_back(part_json(p));
  json j = {{"role", to_string(m.role)}, {"content", std::move(parts)}};
  if (!m.name.empty()) j["name"] = m.name;
  if (!m.extra.is_null()) j["extra"] = m.extra;
  return j;
}

json to_json(const std::vector<message>& ms) {
  json a = json::array();
  for (const auto& m : ms) a.push_back(to_json(m));
  return a;
}

result<message> message_from_json(const json& j) {
  if (!j.is_object() || !j.contains("content") || !j["content"].is_array()) {
    return make_error(errc::internal, "stored message is not an object with a content array");
  }
  auto r = parse_role(str(j, "role"));
  if (!r) return make_error(errc::internal, "stored message has an unknown role");
  message m;
  m.role = *r;
  m.name = str(j, "name");
  if (j.contains("extra")) m.extra = j["extra"];
  for (const auto& pj : j["content"]) {
    auto p = part_from_json(pj);
    if (!p) return make_error(errc::internal, "stored message has an unknown content part");
    m.content.push_back(std::move(*p));
  }
  return m;
}

result<std::vector<message>> messages_from_json(const json& j) {
  if (!j.is_array()) return make_error(errc::internal, "stored conversation is not an array");
  std::vector<message> out;
  for (std::size_t i = 0; i < j.size(); ++i) {
    auto m = message_from_json(j[i]);
    if (!m) return make_error(errc::internal, "stored conversation, message " + std::to_string(i) + ": " + m.error().message);
    out.push_back(std::move(*m));
  }
  return out;
}

}  // namespace warden::model
