#include "tools/mcp_control.h"

namespace warden::tools {

json to_json(const mcp_tool_status& t) {
  json j = json::object();
  j["name"] = t.name;
  j["tool"] = t.tool;
  j["description"] = t.description;
  j["input_schema"] = t.input_schema;
  j["annotations"] = t.annotations;
  j["executable"] = t.executable;
  j["excluded_reason"] = t.excluded_reason;
  return j;
}

json to_json(const mcp_server_status& s) {
  json tools = json::array();
  for (const auto& t : s.tools) tools.push_back(to_json(t));
  json j = json::object();
  j["id"] = s.id;
  j["state"] = s.state;
  j["error"] = s.error;
  j["protocol_version"] = s.protocol_version;
  j["server_info"] = s.server_info;
  j["restarts"] = s.restarts;
  j["tools"] = std::move(tools);
  return j;
}

}  // namespace warden::tools
