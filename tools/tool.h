// tools — the interface every server-side tool implements, and the registry that holds them.
//
// A tool is an object (one file each: python_tool.cpp, terminal_tool.cpp, render_html_tool.cpp)
// with its wire name, a label for status lines, a description and JSON-schema `parameters` for
// the model, and traits that the gate, the call policy and the risk classifier read instead of
// names (a new tool declares its traits and gets the treatment they call for):
//   runs_code     — it runs a program (needs the sandbox unless bypassed; gated by
//                   confirm_code_execution, DESIGN §6) — read by agent/call_policy.h, agent/gate.h
//   once_per_answer — it may succeed once per answer (render_html, reference §2.6) — read by
//                   agent/loop_state.h
//   read_only     — it changes nothing and runs nothing (searches): the auto classifier never
//                   asks about it ("always safe", reference §3.6) unless it reads_network and
//                   is given a "url" — read by agent/gate.h and risk/risk.h (through agent/)
//   reads_network — it fetches from the network (a read-only one is high risk with a "url")
//   writes_files  — it changes files in the workspace (without a code argument: always asks)
//   code, code_argument — the language of its code argument and that argument's name
//                   (terminal: shell in "command"; python: python in "code"; render_html: html in
//                   "code"): the rules the auto classifier judges it by (risk/risk.h)
// `run()` gets already-parsed arguments and a tool_context; errors are results the model sees
// (is_error = true), never exceptions. `unavailable()` says why the tool cannot run right now
// (python/terminal: the sandbox is missing) so the loop refuses before asking anyone.
//
// The registry is an instance (built in app/serve.cpp by make_builtin_registry, builtins.h / builtin_registry.cpp),
// never a global; `select()` is a request's view: the tools it enabled, in registry order.
// Thread-safety: tools and the registry are immutable after start-up; run() may be called
// concurrently from many coroutines.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/cancel_token.h"
#include "common/json_util.h"
#include "model/conversation.h"
#include "tools/website_policy.h"

namespace warden::tools {

/// Characters of a tool result the model sees (reference §4.1, UNSLOTH_TOOL_RESULT_MAX_CHARS).
inline constexpr std::size_t k_max_result_chars = 16000;
/// Characters of live output streamed to the client per call (reference §4.1).
inline constexpr std::size_t k_max_live_chars = 400000;

/// Where a call runs: in the jail, or on the host (the request's `bypass_permissions`).
enum class isolation { sandboxed, bypass };

/// The language of a tool's code argument (risk/risk.h's rules for it).
enum class code_language { none, shell, python, html };

struct tool_traits {
  bool runs_code = false;
  bool reads_network = false;
  bool writes_files = false;
  bool once_per_answer = false;
  bool read_only = false;
  code_language code = code_language::none;
  std::string code_argument = {};  ///< with code: the argument that holds it
  /// It searches the request's knowledge bases: offered only when the request has a rag_scope
  /// (reference §2.2) — read by agent/gate.h's loop_options::selected
  bool needs_knowledge_base = false;
};

/// A request's `rag_scope` (reference §1.2, §2.10): the knowledge bases its searches cover.
struct rag_scope {
  std::vector<std::string> kb_ids;         ///< at least one
  std::optional<int> default_top_k;        ///< hits per search (1..8; default 5)
  std::string mode = "hybrid";             ///< "hybrid" | "lexical"
  bool autoinject = true;                  ///< search before the first model turn (§2.10)
  double autoinject_min_score = 0.70;      ///< the cosine floor of an auto-injected hit (§2.10)
};

struct tool_info {
  std::string name;         ///< wire name, e.g. "python"
  std::string label;        ///< for status lines: "Python", "command"
  std::string description;
  json parameters;          ///< JSON schema of the arguments object
  tool_traits traits;
  model::tool_spec spec() const { return {name, description, parameters}; }
};

struct tool_context {
  std::string workspace;                           ///< absolute, exists
  isolation mode = isolation::sandboxed;
  std::chrono::milliseconds timeout{300000};       ///< 0 = no limit
  std::shared_ptr<cancel_token> cancel;
  std::function<boost::asio::awaitable<void>(std::string)> on_output;  ///< live text (valid UTF-8)
  std::function<boost::asio::awaitable<void>()> on_idle;              ///< keep-alives
  std::chrono::milliseconds idle_interval{15000};
  /// The request's website_policy (website_policy.h): which sites web_search may search and read;
  /// null = every site.
  const website_policy* website = nullptr;
  /// The request's rag_scope (null: none) and whose knowledge bases it may search: `owner`'s, or
  /// every one when `any_owner` (an admin key or the single user).
  const rag_scope* rag = nullptr;
  std::string owner;
  bool any_owner = true;
  /// Knowledge-base searches made in this answer so far (shared by the calls of one loop; null: no cap).
  std::shared_ptr<std::atomic<int>> kb_searches;
  /// Asks the person for input on behalf of an MCP server (its elicitation/create params, already
  /// checked: mcp_protocol.h) and returns the answer to send back ({action: "accept", content} |
  /// {action: "decline"} | {action: "cancel"}). Null: nobody can be asked (the call declines).
  std::function<boost::asio::awaitable<json>(json)> elicit;
};

struct tool_result {
  std::string text;                 ///< what the model sees (already capped)
  bool is_error = false;
  std::optional<int> exit_status;   ///< a program's exit status (128+N when killed by signal N)
  std::uint64_t output_bytes = 0;   ///< bytes the program wrote (0 for tools without a program)
  /// Set when the tool's program was never started (the sandbox could not start it or was
  /// unavailable, the workspace is over its quota, the program could not be written): why. The
  /// call is then recorded as not run, with this reason (agent/call_runner.cpp).
  std::optional<std::string> not_run = std::nullopt;
};

/// An error result the model sees (built outside coroutine bodies: GCC 12 rejects a braced
/// initializer from a string literal inside one).
inline tool_result error_result(std::string text) { return tool_result{std::move(text), true, std::nullopt, 0}; }
inline tool_result ok_result(std::string text) { return tool_result{std::move(text), false, std::nullopt, 0}; }

class tool {
 public:
  virtual ~tool() = default;
  virtual const tool_info& info() const = 0;
  /// Why the tool cannot run in `mode` now (shown to the model as an execution error); nullopt
  /// when it can.
  virtual std::optional<std::string> unavailable(isolation mode) const = 0;
  virtual boost::asio::awaitable<tool_result> run(const json& args, tool_context& ctx) = 0;
  /// The status line shown while a call with `args` runs ("Running Python"; web_search:
  /// "Searching: …" / "Reading: host", reference §4.7). One line, at most ~120 characters.
  virtual std::string status_text(const json& args) const;
  /// The traits the gate and the classifier judge one call by: info().traits, unless the call's
  /// arguments change them (read_mcp_resource: read-only for a server the user trusts, issue 26).
  virtual tool_traits traits_for_call(const json& args) const;
};

class registry {
 public:
  void add(std::unique_ptr<tool> t);
  /// nullptr when unknown (built-in or run-time).
  tool* find(std::string_view name) const;
  /// Every built-in tool, in the order added.
  std::vector<tool*> all() const;
  /// The built-in tools a request enabled: all of them (nullopt) or the named ones, in registry order.
  std::vector<tool*> select(const std::optional<std::vector<std::string>>& names) const;
  /// Every name a request may list in enabled_tools: the built-ins, then the run-time tools.
  std::vector<std::string> names() const;

  /// Run-time tools (MCP servers' tools, issue 26; tools/mcp_manager.h): the whole set replaced at
  /// once. A tool taken out stays alive (it is kept, not freed, for the registry's lifetime) so a
  /// request that selected it still holds a valid pointer; its run() then says its server is gone.
  /// Replacing with the same objects costs nothing. Thread-safe, like the readers below.
  void set_dynamic(std::vector<std::shared_ptr<tool>> ts);
  /// The run-time tools named in `names`, or all of them when `names` is nullopt, in set order.
  std::vector<tool*> select_dynamic(const std::optional<std::vector<std::string>>& names) const;
  bool is_dynamic(std::string_view name) const;

 private:
  std::vector<std::unique_ptr<tool>> tools_;
  mutable std::mutex dynamic_mu_;
  std::vector<std::shared_ptr<tool>> dynamic_;
  std::vector<std::shared_ptr<tool>> retired_;
};

}  // namespace warden::tools
