// mcp_manager — the MCP servers of one warden (issue 26): their entries, their live sessions
// (mcp_session.h), their tools in the registry (tool.h registry::set_dynamic), and mcp_control for
// the control surface.
//
// An enabled server starts when configure() gets it (start-up, an entry added or changed), on its
// own coroutine, so its tools are known to mcp_enabled requests; one that failed starts again on
// its next use (a call of one of its tools, a refresh, prompts/list). It stays up: stdio servers
// as long-lived children in the terminal tool's jail (sandbox/runner.h start_service: no network
// unless `network`, its own workspace <workspaces>/.mcp/<id>, the server's secrets never passed: only sandbox_env() plus the entry's
// own `env`, references resolved from warden's environment), or `sandbox: false` on the host (the
// environment minus secrets, plus `env`; the entry is refused unless --max-permission is full).
// A server that dies is restarted on its next use with back-off (1 s, doubling to 60 s after
// consecutive failures; reset by a good start). notifications/tools/list_changed re-lists the
// tools. The tools offered are `<id>__<tool>` (mcp_protocol.h), minus the ones outside
// `allowed_tools`, the app-only ones and those whose description carries template markup.
// Tool objects are reused while their definition is unchanged, so remembered rules and selected
// pointers stay stable.
// Resources: a server that offers them (capability "resources") has them listed at start
// (resources/list, up to 5 pages); one built-in `read_mcp_resource {server, uri}` tool reads them
// (resources/read), listed in its description; it is read-only (never asks in auto) for a trusted
// server and asks otherwise. prompts/list is offered to the API (list_prompts).
// The MCP tool (mcp_tool.cpp) calls tools/call with a progressToken: progress becomes live
// output (tool_output), elicitation/create goes to tool_context::elicit (none: declined), the
// run's cancel sends notifications/cancelled, the call's timeout (tool_call_timeout, and the
// entry's timeout_ms without progress) ends it. An error result (isError) is an error the model sees.
// Thread-safety: every member from any thread; sessions are shared_ptrs, closed when replaced.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "common/blocking_pool.h"
#include "common/permission_mode.h"
#include "sandbox/runner.h"
#include "tools/mcp_control.h"
#include "tools/mcp_protocol.h"
#include "tools/mcp_session.h"
#include "tools/tool.h"

namespace warden::tools {

struct mcp_options {
  sandbox::sandbox* sb = nullptr;    ///< stdio servers' jail (required for stdio)
  blocking_pool* pool = nullptr;     ///< where children are started (must outlive them; null: inline)
  registry* reg = nullptr;           ///< where the tools are published (null: nowhere)
  std::string workspaces_root;       ///< each server's workspace: <root>/.mcp/<id>
  permission_mode max_permission = permission_mode::full;  ///< sandbox: false needs full
  boost::asio::any_io_executor ex;   ///< where list_changed refreshes run
  /// Variables for ${env:NAME} references (default: warden's own environment).
  std::function<std::optional<std::string>(const std::string&)> lookup_env;
};

class mcp_manager final : public mcp_control {
 public:
  explicit mcp_manager(mcp_options o);
  ~mcp_manager() override;

  void configure(std::vector<mcp_server_config> servers) override;
  boost::asio::awaitable<std::optional<mcp_server_status>> refresh(std::string id) override;
  boost::asio::awaitable<result<mcp_server_status>> test(mcp_server_config cfg) override;
  std::vector<mcp_server_status> statuses() const override;
  boost::asio::awaitable<result<json>> list_prompts(std::string id) override;

  /// The live session of server `id`, started (or restarted) when needed; the entry's timeout
  /// applies. Errors name the server and the step.
  boost::asio::awaitable<result<std::shared_ptr<mcp::session>>> session_for(std::string id);
  /// The entry of `id` (nullopt: unknown).
  std::optional<mcp_server_config> config_of(const std::string& id) const;
  /// Stops every server (shutdown).
  void close_all();

 private:
  struct server;
  boost::asio::awaitable<result<std::shared_ptr<mcp::session>>> connect(mcp_server_config cfg);
  boost::asio::awaitable<result<std::vector<mcp::tool_def>>> list_tools(std::shared_ptr<mcp::session> s,
                                                                        std::chrono::milliseconds timeout);
  boost::asio::awaitable<result<void>> start(std::string id);
  void set_tools(const std::string& id, std::vector<mcp::tool_def> defs);
  void publish();
  void watch(const std::string& id, const std::shared_ptr<mcp::session>& s);
  mcp_server_status status_of(const server& s) const;

  boost::asio::awaitable<std::vector<json>> list_resources(std::shared_ptr<mcp::session> s, std::chrono::milliseconds timeout);
  std::shared_ptr<tool> resource_tool_locked();

  mcp_options o_;
  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<server>> servers_;
  std::shared_ptr<tool> resource_tool_;  ///< read_mcp_resource, rebuilt when its listing changes
  std::string resource_print_;
};

/// read_mcp_resource (mcp_resource_tool.cpp): {server, uri} → resources/read; `servers` those that
/// offer resources, `trusted` those whose reads never ask (traits_for_call), `listing` the
/// resources named in its description.
std::shared_ptr<tool> make_resource_tool(mcp_manager& mgr, std::vector<std::string> servers, std::vector<std::string> trusted,
                                         std::string listing);

/// The MCP tool `qualified` (mcp_tool.cpp): server `server_id`'s tool `def`, called through `mgr`.
std::shared_ptr<tool> make_mcp_tool(mcp_manager& mgr, const std::string& server_id, const std::string& qualified,
                                    const mcp::tool_def& def, bool trusted);

}  // namespace warden::tools
