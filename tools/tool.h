// tools — the server-side tools a model may call, and how they run.
//
// Each built-in is a `tool_def` (name, label for status lines, JSON schema, whether it runs
// code) plus an executor. `render_html {code, title?}` only acknowledges (the client renders;
// reference §4.9). `python {code}` and `terminal {command}` run through
// sandbox::run (reference unsloth-studio.md §4.2–§4.4):
//   - python: the code is written to a hidden file in the workspace and run by the real
//     /usr/bin/python3 (never a user shim) with `-I -u` (isolated: nothing from the workspace or
//     HOME runs first); terminal: `/bin/bash --noprofile --norc -c command`.
//   - cwd = the session workspace (ensure_workspace: one for sandboxed runs, a separate one for
//     bypass runs; 0700, created on first use). HOME is never the workspace (runner.h).
//   - merged stdout/stderr goes to `on_output` live (valid UTF-8, at most k_max_live_chars,
//     then one notice), and into the result.
//   - result text: "(no output)" when empty; "Exit code N:\n…" on a non-zero exit;
//     "Execution timed out after N seconds." / "Execution cancelled." (+ output so far);
//     capped at k_max_result_chars with a truncation notice (cap_for_model).
// Errors are results (is_error = true) the model sees, never exceptions: bad arguments, a
// spawn failure, a non-zero exit.
// Thread-safety: everything here may run concurrently from many coroutines.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/cancel_token.h"
#include "common/json_util.h"
#include "common/result.h"
#include "sandbox/runner.h"

namespace warden::tools {

/// Characters of a tool result the model sees (reference §4.1, UNSLOTH_TOOL_RESULT_MAX_CHARS).
inline constexpr std::size_t k_max_result_chars = 16000;
/// Characters of live output streamed to the client per call (reference §4.1).
inline constexpr std::size_t k_max_live_chars = 400000;

struct tool_def {
  std::string name;         ///< wire name, e.g. "python"
  std::string label;        ///< for status lines: "Python", "command"
  bool runs_code = false;   ///< gated by confirm_code_execution (DESIGN.md §6)
  std::string description;
  json parameters;          ///< JSON schema of the arguments object
  /// {"type":"function","function":{name, description, parameters}}
  json openai_spec() const;
};

/// Built-in tools in the reference order (unsloth-studio.md §2.2, the ones that exist here).
const std::vector<tool_def>& builtin_tools();
/// nullptr when unknown.
const tool_def* find_tool(std::string_view name);
/// True for python and terminal.
bool is_code_tool(std::string_view name);

struct tool_context {
  std::string workspace;                           ///< absolute, exists
  sandbox::isolation mode = sandbox::isolation::sandboxed;
  std::chrono::milliseconds timeout{300000};       ///< 0 = no limit
  std::shared_ptr<cancel_token> cancel;
  std::function<boost::asio::awaitable<void>(std::string)> on_output;  ///< live text
  std::function<boost::asio::awaitable<void>()> on_idle;              ///< keep-alives
  std::chrono::milliseconds idle_interval{15000};
};

struct tool_result {
  std::string text;        ///< what the model sees (already capped)
  bool is_error = false;
};

/// Runs `tool` with already-parsed arguments.
boost::asio::awaitable<tool_result> execute(const tool_def& tool, const json& args, tool_context& ctx);

/// `text` capped at `max_chars` characters with "... (truncated to N chars for the model;
/// M chars total)" appended; unchanged when short enough. `total_bytes` is given when `text` is
/// only the head of a longer output: the notice then always appears and names the byte total.
std::string cap_for_model(std::string_view text, std::size_t max_chars = k_max_result_chars,
                          std::optional<std::uint64_t> total_bytes = std::nullopt);

/// Formats a finished run as the model sees it (pure; table-tested).
tool_result format_run(const sandbox::run_result& r, std::chrono::milliseconds timeout);

/// True for `[A-Za-z0-9_-]{1,64}` (reference §4.4).
bool valid_session_id(std::string_view id);

/// Folder under the workspaces root that holds the workspaces of bypass runs. A session id can
/// never be ".host" (ids have no dots), and the jail sees only its own workspace, so code run in
/// the sandbox can never plant anything that a later bypass run (on the host) would execute.
inline constexpr const char* k_host_workspaces = ".host";

/// Creates (0700) and returns the session's workspace: `<root>/<session_id>` for sandboxed runs
/// (handed to the sandbox user), `<root>/.host/<session_id>` for bypass runs (the server user's).
/// errc::invalid_request for a bad id, errc::internal when it cannot be created.
result<std::string> ensure_workspace(const std::string& root, const std::string& session_id,
                                     sandbox::isolation mode = sandbox::isolation::sandboxed);

}  // namespace warden::tools
