#include "tools/mcp_protocol.h"

#include <algorithm>
#include <array>
#include <cstdio>

namespace warden::tools::mcp {

bool supported_version(std::string_view v) noexcept {
  return std::any_of(std::begin(k_protocol_versions), std::end(k_protocol_versions),
                     [v](const char* s) { return v == s; });
}

json make_request(std::int64_t id, std::string_view method, json params) {
  json j = json::object();
  j["jsonrpc"] = "2.0";
  j["id"] = id;
  j["method"] = std::string(method);
  j["params"] = std::move(params);
  return j;
}

json make_notification(std::string_view method, json params) {
  json j = json::object();
  j["jsonrpc"] = "2.0";
  j["method"] = std::string(method);
  if (!params.empty()) j["params"] = std::move(params);
  return j;
}

json make_response(const json& id, json result) {
  json j = json::object();
  j["jsonrpc"] = "2.0";
  j["id"] = id;
  j["result"] = std::move(result);
  return j;
}

json make_error_response(const json& id, int code, std::string_view message) {
  json j = json::object();
  j["jsonrpc"] = "2.0";
  j["id"] = id;
  j["error"] = json{{"code", code}, {"message", std::string(message)}};
  return j;
}

json initialize_params(bool elicitation) {
  json caps = json::object();
  if (elicitation) caps["elicitation"] = json{{"form", json::object()}, {"url", json::object()}};
  return json{{"protocolVersion", k_protocol_versions[0]},
              {"capabilities", caps},
              {"clientInfo", json{{"name", "warden"}, {"version", "0.1"}}}};
}

namespace {
bool valid_id(const json& id) { return id.is_number_integer() || id.is_string(); }
}  // namespace

namespace {
/// A key's value when it is exactly `true` (a value of another type is not true; nothing throws).
bool is_true(const json& j, const char* key) {
  if (!j.is_object()) return false;
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() && it->get<bool>();
}
}  // namespace

incoming classify(const json& msg) {
  incoming in;
  if (!msg.is_object()) return in;
  const auto version = msg.find("jsonrpc");
  if (version == msg.end() || *version != "2.0") return in;
  const auto method = msg.find("method");
  const auto id = msg.find("id");
  if (method != msg.end()) {
    if (!method->is_string()) return in;
    in.method = method->get<std::string>();
    if (auto p = msg.find("params"); p != msg.end() && p->is_object()) in.params = *p;
    if (id == msg.end()) {
      in.kind = message_kind::notification;
    } else if (valid_id(*id)) {
      in.kind = message_kind::request;
      in.id = *id;
    }
    return in;
  }
  if (id == msg.end() || !valid_id(*id)) return in;
  in.id = *id;
  if (auto r = msg.find("result"); r != msg.end()) {
    in.kind = message_kind::response;
    in.result = *r;
  } else if (auto e = msg.find("error"); e != msg.end() && e->is_object()) {
    in.kind = message_kind::error_response;
    const auto code = e->find("code");
    in.error_code = code != e->end() && code->is_number_integer() ? static_cast<int>(code->get<std::int64_t>()) : 0;
    in.error_message = e->contains("message") && (*e)["message"].is_string() ? (*e)["message"].get<std::string>() : "";
  }
  return in;
}

result<std::string> negotiated_version(const json& r) {
  if (!r.is_object() || !r.contains("protocolVersion") || !r["protocolVersion"].is_string()) {
    return make_error(errc::upstream_error, "the MCP server's initialize result has no protocolVersion");
  }
  const std::string v = r["protocolVersion"].get<std::string>();
  if (!supported_version(v)) {
    return make_error(errc::upstream_error, "the MCP server speaks protocol revision " + v +
                                                "; warden speaks 2025-11-25 and 2025-06-18");
  }
  return v;
}

namespace {

std::string string_field(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool app_only(const json& t) {
  const auto meta = t.find("_meta");
  if (meta == t.end() || !meta->is_object()) return false;
  const auto ui = meta->find("ui");
  if (ui == meta->end() || !ui->is_object()) return false;
  const auto vis = ui->find("visibility");
  if (vis == ui->end() || !vis->is_array()) return false;
  return std::none_of(vis->begin(), vis->end(), [](const json& v) { return v == "model"; });
}

}  // namespace

result<tools_page> parse_tools_page(const json& r) {
  if (!r.is_object() || !r.contains("tools") || !r["tools"].is_array()) {
    return make_error(errc::upstream_error, "the MCP server's tools/list result has no tools array");
  }
  tools_page page;
  for (const auto& t : r["tools"]) {
    if (!t.is_object() || !t.contains("name") || !t["name"].is_string() || t["name"].get<std::string>().empty()) continue;
    tool_def d;
    d.name = t["name"].get<std::string>();
    d.title = string_field(t, "title");
    d.description = string_field(t, "description");
    if (auto s = t.find("inputSchema"); s != t.end() && s->is_object()) d.input_schema = *s;
    if (!d.input_schema.contains("type")) d.input_schema["type"] = "object";
    if (auto a = t.find("annotations"); a != t.end() && a->is_object()) d.annotations = *a;
    d.app_only = app_only(t);
    page.tools.push_back(std::move(d));
  }
  page.next_cursor = string_field(r, "nextCursor");
  return page;
}

namespace {

std::string sanitise(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!ok) c = '_';
  }
  return out;
}

std::uint32_t fnv1a(std::string_view s) {
  std::uint32_t h = 2166136261u;
  for (unsigned char c : s) {
    h ^= c;
    h *= 16777619u;
  }
  return h;
}

}  // namespace

std::string qualified_name(std::string_view server_id, std::string_view tool) {
  std::string name = sanitise(server_id) + "__" + sanitise(tool);
  if (name.size() <= 64) return name;
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "_%08x", fnv1a(tool));
  return name.substr(0, 55) + suffix;
}

namespace {
// Chat-template markup of the common families (ChatML, Llama, Gemma, Mistral, Hermes tool calls,
// Jinja itself): a tool description carrying one could end the system turn early (#7066).
constexpr std::array<std::string_view, 16> k_markup = {
    "<|", "|>", "<tool_call>", "</tool_call>", "<tool_response>", "[INST]", "[/INST]", "<s>", "</s>",
    "<start_of_turn>", "<end_of_turn>", "{%", "%}", "{{", "}}", "<function",
};
}  // namespace

bool has_template_markup(std::string_view text) noexcept {
  return std::any_of(k_markup.begin(), k_markup.end(), [text](std::string_view m) { return text.find(m) != std::string_view::npos; });
}

std::string neutralise(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '<': out += "\u2039"; break;  // ‹
      case '>': out += "\u203a"; break;  // ›
      case '{': out += "\u2774"; break;  // ❴
      case '}': out += "\u2775"; break;  // ❵
      case '[': out += "\u27e6"; break;  // ⟦
      case ']': out += "\u27e7"; break;  // ⟧
      default: out.push_back(c);
    }
  }
  return out;
}

tool_traits traits_for(const json& annotations, bool trusted) {
  tool_traits t;
  if (!trusted || !annotations.is_object()) return t;  // untrusted hints count for nothing
  const bool read_only = is_true(annotations, "readOnlyHint");
  const bool open_world = !annotations.contains("openWorldHint") || annotations["openWorldHint"] != false;
  t.read_only = read_only && !is_true(annotations, "destructiveHint");
  t.reads_network = open_world;
  return t;
}

namespace {

std::string part_text(const json& part) {
  const std::string type = string_field(part, "type");
  if (type == "text") return string_field(part, "text");
  if (type == "image" || type == "audio") {
    const std::string data = string_field(part, "data");
    return "[" + type + ": " + string_field(part, "mimeType") + ", " + std::to_string(data.size() / 4 * 3) + " bytes]";
  }
  if (type == "resource") {
    const json res = part.value("resource", json::object());
    if (res.is_object() && res.contains("text") && res["text"].is_string()) return res["text"].get<std::string>();
    return "[resource: " + (res.is_object() ? string_field(res, "uri") : std::string()) + "]";
  }
  if (type == "resource_link") return "[resource: " + string_field(part, "uri") + "]";
  return "[" + (type.empty() ? std::string("unknown") : type) + " content]";
}

}  // namespace

call_output flatten_result(const json& r) {
  call_output out;
  if (!r.is_object()) {
    out.text = "the MCP server returned a result that is not an object";
    out.is_error = true;
    return out;
  }
  out.is_error = is_true(r, "isError");
  if (auto c = r.find("content"); c != r.end() && c->is_array()) {
    for (const auto& part : *c) {
      if (!part.is_object()) continue;
      if (!out.text.empty()) out.text += "\n";
      out.text += part_text(part);
    }
  }
  if (out.text.empty()) {
    if (auto s = r.find("structuredContent"); s != r.end()) out.text = s->dump();
  }
  return out;
}

namespace {

result<void> bad_schema(const std::string& why) {
  return make_error(errc::invalid_request, "the elicitation's requestedSchema " + why);
}

/// The choices of a (multi-)select: `enum`, or the titled form's `oneOf` / `anyOf` consts
/// (2025-11-25); empty when there are none.
std::vector<json> choices_of(const json& p) {
  std::vector<json> out;
  if (!p.is_object()) return out;
  if (auto e = p.find("enum"); e != p.end() && e->is_array()) return std::vector<json>(e->begin(), e->end());
  for (const char* k : {"oneOf", "anyOf"}) {
    auto it = p.find(k);
    if (it == p.end() || !it->is_array()) continue;
    for (const auto& c : *it) {
      if (c.is_object() && c.contains("const")) out.push_back(c["const"]);
    }
  }
  return out;
}

/// A multi-select (2025-11-25): an array whose items are a string enum or titled consts.
bool multi_select(const json& p) {
  return string_field(p, "type") == "array" && p.contains("items") && !choices_of(p["items"]).empty();
}

result<void> check_schema(const json& schema) {
  if (!schema.is_object() || string_field(schema, "type") != "object") return bad_schema("is not an object schema");
  const auto props = schema.find("properties");
  if (props == schema.end() || !props->is_object()) return bad_schema("has no properties");
  for (const auto& [name, p] : props->items()) {
    const std::string type = p.is_object() ? string_field(p, "type") : "";
    const bool primitive = type == "string" || type == "number" || type == "integer" || type == "boolean";
    if (!primitive && !(p.is_object() && multi_select(p))) {
      return bad_schema("property '" + name + "' is not a string, number, integer, boolean or multi-select");
    }
  }
  return {};
}

}  // namespace

result<elicitation_request> parse_elicitation(const json& params) {
  elicitation_request r;
  if (!params.is_object()) return make_error(errc::invalid_request, "elicitation/create has no params");
  r.mode = params.contains("mode") ? string_field(params, "mode") : "form";
  r.message = string_field(params, "message");
  if (r.mode == "url") {
    r.url = string_field(params, "url");
    r.elicitation_id = string_field(params, "elicitationId");
    if (r.url.rfind("https://", 0) != 0 && r.url.rfind("http://", 0) != 0) {
      return make_error(errc::invalid_request, "a URL elicitation needs an http(s) url");
    }
    return r;
  }
  if (r.mode != "form") return make_error(errc::invalid_request, "unknown elicitation mode '" + r.mode + "'");
  r.requested_schema = params.value("requestedSchema", json());
  if (auto ok = check_schema(r.requested_schema); !ok) return ok.error();
  return r;
}

namespace {

result<void> field_error(const std::string& name, const std::string& why) {
  return make_error(errc::invalid_request, "'" + name + "' " + why, name);
}

result<void> check_choices(const std::string& name, const json& p, const json& v) {
  const auto choices = choices_of(p);
  if (choices.empty() || std::find(choices.begin(), choices.end(), v) != choices.end()) return {};
  return field_error(name, "must be one of " + json(choices).dump());
}

result<void> check_multi(const std::string& name, const json& p, const json& v) {
  if (!v.is_array()) return field_error(name, "must be a list of choices");
  const auto n = static_cast<std::int64_t>(v.size());
  if (p.contains("minItems") && p["minItems"].is_number() && n < p["minItems"].get<std::int64_t>()) return field_error(name, "needs more choices");
  if (p.contains("maxItems") && p["maxItems"].is_number() && n > p["maxItems"].get<std::int64_t>()) return field_error(name, "has too many choices");
  for (const auto& item : v) {
    if (auto ok = check_choices(name, p["items"], item); !ok) return ok;
  }
  return {};
}

result<void> check_value(const std::string& name, const json& p, const json& v) {
  const std::string type = string_field(p, "type");
  if (type == "array") return check_multi(name, p, v);
  if (type == "boolean" && !v.is_boolean()) return field_error(name, "must be true or false");
  if (type == "integer" && !v.is_number_integer()) return field_error(name, "must be a whole number");
  if (type == "number" && !v.is_number()) return field_error(name, "must be a number");
  if (type == "string") {
    if (!v.is_string()) return field_error(name, "must be text");
    std::int64_t len = 0;  // in characters (code points), as the spec's JSON Schema counts them
    for (unsigned char ch : v.get_ref<const std::string&>()) len += (ch & 0xC0) != 0x80 ? 1 : 0;
    if (p.contains("minLength") && p["minLength"].is_number() && len < p["minLength"].get<std::int64_t>()) return field_error(name, "is too short");
    if (p.contains("maxLength") && p["maxLength"].is_number() && len > p["maxLength"].get<std::int64_t>()) return field_error(name, "is too long");
    if (auto ok = check_choices(name, p, v); !ok) return ok;
  }
  if (v.is_number()) {
    const double x = v.get<double>();
    if (p.contains("minimum") && p["minimum"].is_number() && x < p["minimum"].get<double>()) return field_error(name, "is below the minimum");
    if (p.contains("maximum") && p["maximum"].is_number() && x > p["maximum"].get<double>()) return field_error(name, "is above the maximum");
  }
  return {};
}

}  // namespace

result<void> check_elicitation_content(const json& schema, const json& content) {
  if (!content.is_object()) return make_error(errc::invalid_request, "'content' must be an object", "content");
  const json props = schema.value("properties", json::object());
  if (auto req = schema.find("required"); req != schema.end() && req->is_array()) {
    for (const auto& r : *req) {
      if (r.is_string() && !content.contains(r.get<std::string>())) return field_error(r.get<std::string>(), "is required");
    }
  }
  for (const auto& [name, v] : content.items()) {
    if (!props.contains(name)) return field_error(name, "is not a field of this form");
    if (auto ok = check_value(name, props[name], v); !ok) return ok;
  }
  return {};
}

}  // namespace warden::tools::mcp
