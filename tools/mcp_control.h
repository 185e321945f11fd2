// mcp_control — what the control surface (api/control/mcp_routes.h) and start-up
// (--mcp-config) ask of the running MCP servers (issue 26): the interface the server-wide MCP
// manager (tools/mcp_manager.h) implements, so routes are tested without real servers.
//
// Statuses: state "disabled" (enabled false), "idle" (not started yet: an enabled server starts
// when configure() gets it, and again on use after it failed), "starting", "ready", "restarting" (a stdio child died: restarted with
// back-off 1 s, 2 s, 4 s … 60 s), "error" (the last attempt failed: `error` says why).
// Thread-safety: every member may be called from any thread / coroutine.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/json_util.h"
#include "common/result.h"
#include "tools/mcp_config.h"

namespace warden::tools {

/// One tool a server offers, as warden exposes it.
struct mcp_tool_status {
  std::string name;         ///< the qualified name the model sees (`<server>__<tool>`, sanitised)
  std::string tool;         ///< the server's own name
  std::string description;  ///< as warden offers it (neutralised when it carried template markup)
  json input_schema = json::object();
  json annotations = json::object();  ///< as the server sent them (traits only when trusted)
  bool executable = true;             ///< false: not offered (excluded_reason says why)
  std::string excluded_reason;        ///< "not in allowed_tools", "description carries chat-template markup", …
};

struct mcp_server_status {
  std::string id;
  std::string state;             ///< see the top of this file
  std::string error;             ///< "" unless state is "error" or "restarting"
  std::string protocol_version;  ///< negotiated ("" before the first initialize)
  json server_info = json::object();  ///< initialize's serverInfo
  std::vector<mcp_tool_status> tools;
  int restarts = 0;
};
json to_json(const mcp_tool_status& t);
json to_json(const mcp_server_status& s);

class mcp_control {
 public:
  virtual ~mcp_control() = default;
  /// The configured servers changed (the store's list after a change): servers whose entry
  /// changed or went away are stopped; new or changed ones start on next use.
  virtual void configure(std::vector<mcp_server_config> servers) = 0;
  /// Connects (or reconnects) `id` now and lists its tools; nullopt for an unknown id.
  virtual boost::asio::awaitable<std::optional<mcp_server_status>> refresh(std::string id) = 0;
  /// Connects to `cfg` without registering it (initialize, tools/list, close): its status, or
  /// why it failed (errc::upstream_unavailable naming the step).
  virtual boost::asio::awaitable<result<mcp_server_status>> test(mcp_server_config cfg) = 0;
  /// Every configured server's status, in id order (starts nothing).
  virtual std::vector<mcp_server_status> statuses() const = 0;
  /// prompts/list of `id` (connecting when needed): the result's "prompts" array.
  virtual boost::asio::awaitable<result<json>> list_prompts(std::string id) = 0;
};

}  // namespace warden::tools
