#include "api/wire/provider_fields.h"

#include "common/json_fields.h"

namespace warden::api::wire {

namespace {

bool valid_id(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                    c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

std::optional<error> take_string(const json& body, const char* name, std::string& out) {
  auto it = body.find(name);
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_string()) return make_error(errc::invalid_request, std::string(name) + " must be a string", name, "invalid_type");
  out = it->get<std::string>();
  return std::nullopt;
}

bool carries_tools(const agent::loop_options& o, const json& body) {
  auto t = body.find("tools");
  const bool listed = t != body.end() && t->is_array() && !t->empty();
  return listed || o.enable_tools || o.mcp_enabled || (o.enabled_tools && !o.enabled_tools->empty());
}

}  // namespace

const std::set<std::string>& provider_types() {
  static const std::set<std::string> types = {"openai",  "anthropic", "gemini", "deepseek",   "mistral",
                                              "kimi",    "qwen",      "huggingface", "vllm", "custom",
                                              "ollama",  "llama_cpp", "openrouter"};
  return types;
}

result<std::optional<provider_choice>> take_provider_fields(json& body) {
  provider_choice c;
  if (auto e = take_string(body, "provider_id", c.id)) return *e;
  if (auto e = take_string(body, "provider_type", c.type)) return *e;
  if (auto e = take_string(body, "external_model", c.external_model)) return *e;
  if (auto e = check_bool_field(body, "run_tools_locally", c.run_tools_locally)) return *e;
  const bool named = body.contains("provider_id") || body.contains("provider_type");
  const bool extras = body.contains("external_model") || body.contains("run_tools_locally");
  for (const char* k : {"provider_id", "provider_type", "external_model", "run_tools_locally"}) body.erase(k);
  if (!named) {
    if (!extras) return std::optional<provider_choice>();
    const char* field = c.external_model.empty() && !c.run_tools_locally ? "run_tools_locally" : "external_model";
    return make_error(errc::invalid_request, std::string(field) + " needs provider_id or provider_type", field,
                      "invalid_value");
  }
  if (!c.id.empty() && !valid_id(c.id)) {
    return make_error(errc::invalid_request, "provider_id must be 1-64 characters of letters, digits, '_', '-' or '.'",
                      "provider_id", "invalid_value");
  }
  if (c.id.empty() && !c.type.empty() && !provider_types().count(c.type)) {
    return make_error(errc::invalid_request, "unknown provider_type '" + c.type.substr(0, 64) + "'", "provider_type",
                      "invalid_value");
  }
  if (c.id.empty() && c.type.empty()) {
    return make_error(errc::invalid_request, "provider_id or provider_type must not be empty", "provider_id",
                      "invalid_value");
  }
  if (c.external_model.size() > 256) {
    return make_error(errc::invalid_request, "external_model is longer than 256 characters", "external_model",
                      "invalid_value");
  }
  return std::optional<provider_choice>(std::move(c));
}

std::optional<error> apply_provider_rules(const provider_choice& c, agent::loop_options& o, const json& body) {
  if (auto n = body.find("n"); n != body.end() && n->is_number() && n->get<double>() > 1) {
    return make_error(errc::invalid_request, "n > 1 is not supported with an external provider: ask for one choice",
                      "n", "invalid_value");
  }
  if (runs_loop_locally(c, o)) return std::nullopt;  // warden's loop, warden's gate
  if (o.gate.confirm_tool_calls && carries_tools(o, body)) {
    return make_error(errc::invalid_request,
                      "confirm_tool_calls is only supported for local streaming tools (an external provider runs its "
                      "own tools; send run_tools_locally: true with stream: true to run warden's tools behind the gate)",
                      "confirm_tool_calls", "invalid_value");
  }
  o.gate.confirm_code_execution = false;  // the provider's hosted code runs in its sandbox
  o.enable_tools = false;                 // relayed: warden's loop does not run
  o.mcp_enabled = false;
  return std::nullopt;
}

}  // namespace warden::api::wire
