// warden::config — every start-up setting, declared once in a table (DESIGN.md §7).
//
// Each row of `config_table()` is the whole truth about one option: flag, WARDEN_* environment
// variable, type, unit, default (as text), bounds or accepted values, one line of help, and the
// config field it writes (a member pointer, whose type config.cpp checks against the row's type
// at compile time). Everything else reads the rows: `config`'s constructor applies the defaults,
// `apply_option` converts and range-checks one raw value, app/cli.cpp turns the rows into CLI11
// options (so `warden serve --help` is generated from them), `markdown_table()` prints them for
// the docs (`warden serve --help-markdown`), and common/config_test.cpp walks them.
// Start-up parses once and passes `const config&` down; nothing deeper reads the environment. A
// bad value is an `errc::invalid_request` error whose message names the flag, the variable and
// the accepted values, and start-up stops with it.
// Thread-safety: the table is immutable; `config` is a value type.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/result.h"

namespace warden {

/// Every start-up setting. The defaults are the `default_value`s of config_table(), applied by
/// the constructor (so the table is their one place); the comments name the row's flag.
struct config {
  config();

  std::string host;                 ///< --host: bind address of the HTTP server
  int port = 0;                     ///< --port: bind port; 0 = pick a free one
  std::string model_path;           ///< --model: GGUF file; "" = the default model from set-up
  std::string model_id;             ///< --model-id: public model id; "" = file name without .gguf
  std::string upstream_url;         ///< --upstream: OpenAI-compatible base URL (…/v1); "" = run llama-server
  std::string upstream_api_key;     ///< --upstream-api-key: Bearer key sent to upstream_url
  int ctx_tokens = 0;               ///< --ctx: llama-server -c (context size, tokens, all slots)
  int parallel_slots = 0;           ///< --parallel: llama-server --parallel (slots); range from reference §5.2
  // Admission control (engine/admission_queue.h).
  int queue_max = 0;                ///< --queue-max: requests waiting for a slot; 0 = max(64, 16 x slots)
  int queue_per_key = 0;            ///< --queue-per-key: waiting places of one named key; 0 = half the queue
  int queue_timeout_s = 0;          ///< --queue-timeout: longest wait for a slot; 0 = none (the reference's)
  int upstream_slots = 0;           ///< --upstream-slots: slots of --upstream; 0 = no queue in front of it
  // A pool of engines (engine/engine_pool.h).
  /// --upstream given more than once: the second and later base URLs (…/v1), engines of the pool
  /// beside upstream_url (app/cli.cpp splits the repeated flag; finalize() writes their base URLs).
  std::vector<std::string> more_upstreams;
  std::string upstreams_file;       ///< --upstreams-file: more engines, one "URL [model=ID] [slots=N] [key_env=VAR]" per line
  int engine_head_timeout_s = 120;  ///< --engine-head-timeout: a pool engine's stream head may take this long; 0 = no limit
  int replicas = 0;                 ///< --replicas: llama-server children of the model; 0 = one, none with --upstream
  bool no_queue = false;            ///< --no-queue: no admission control
  std::string metrics_key;          ///< --metrics-key: the one key GET /metrics takes; "" = the API key guards it
  bool no_api_monitor = false;      ///< --no-api-monitor: record no model requests (api/control/monitor.h)
  std::string api_key;              ///< --api-key: required on /v1/* when set
  /// --api-keys-file: named keys, one "NAME ROLE KEY" per line (http/api_keys.h); "" = none.
  /// Exclusive with --api-key (finalize()).
  std::string api_keys_file;
  std::string llama_server_path;    ///< --llama-server: binary; "" = the one built by set-up
  std::string home;                 ///< --home: cache and state folder ($WARDEN_HOME)
  int load_timeout_s = 0;           ///< --load-timeout: model load limit; reference §5.4 uses 600 s
  int sse_ping_interval_ms = 0;     ///< --sse-ping-interval: SSE comment ping while upstream is silent; ref. §1.3
  std::int64_t max_body_bytes = 0;  ///< --max-body: largest accepted request body
  int header_timeout_s = 0;         ///< --header-timeout: a request head must arrive within this (http/server.h)
  int max_connections = 0;          ///< --max-connections: general connections open at once; 0 = from the fd limit
  std::int64_t max_pending_body_bytes = 0;  ///< --max-pending-body: request bodies received or held at once
  int io_threads = 0;               ///< --threads: threads running the io_context
  std::string log_level;            ///< --log-level: trace|debug|info|warn|error|off
  int approval_timeout_s = 0;       ///< --approval-timeout: a pending approval expires after this (the call does not run); reference §3.5
  std::string workspaces_dir;       ///< --workspaces: per-session tool folders; "" = <home>/workspaces
  std::string bwrap_path;           ///< --bwrap: bubblewrap for the tool sandbox
  int call_memory_mib = 0;          ///< --call-memory: memory cgroup limit of one sandboxed call (sandbox/limits.h)
  int warm_jails = 0;               ///< --warm-jails: jails started ahead of their call (sandbox/warm_pool.h)
  int workspace_quota_mib = 0;      ///< --workspace-quota: a session workspace's disk quota (sandbox/workspace_quota.h)
  // Budgets of the Responses store (api/responses/budgets.h); 0 = none.
  int responses_quota_mib = 0;          ///< --responses-quota: all stored responses and their events
  int responses_session_quota_mib = 0;  ///< --responses-session-quota: one key's session
  int background_runs = 0;              ///< --background-runs: live background runs in all
  int session_background_runs = 0;      ///< --session-background-runs: live background runs of one session
  std::int64_t responses_ttl_s = 0;     ///< --responses-ttl: finished responses older than this are swept
  /// --allowed-hosts: extra names a request's Host header may use (besides localhost, 127.0.0.1,
  /// [::1] and the bound address); "name" matches any port, "name:port" only that port. Lower-cased.
  std::vector<std::string> allowed_hosts;
  /// --allowed-origins: extra browser origins allowed to call warden ("scheme://host[:port]",
  /// lower-cased, no path).
  std::vector<std::string> allowed_origins;
  bool insecure_no_auth = false;    ///< --insecure-no-auth: allow a non-loopback --host without --api-key
  bool no_heal_tool_calls = false;  ///< --no-heal-tool-calls: calls written as text stay text (engine/healing.h)
  bool no_tool_prompt_nudge = false;  ///< --no-tool-prompt-nudge (agent/loop_guidance.h)
  bool no_tool_error_nudge = false;   ///< --no-tool-error-nudge (agent/loop_guidance.h)
  bool no_act_reprompts = false;      ///< --no-act-reprompts (agent/loop_guidance.h)
  std::string search_backend;         ///< --search-backend: none | duckduckgo[:URL] | searxng:URL (tools/web_search.h)
  bool allow_private_fetch = false;   ///< --allow-private-fetch: web_search may read non-public addresses (tools/web_fetch.h)
  /// --mcp-config: an MCP servers file (Claude Desktop / Cursor `mcpServers`, VS Code `servers`)
  /// imported into the registry at start-up (api/control/mcp_routes.h import_mcp_config_file); "" = none.
  std::string mcp_config_file;
  /// --max-permission: ask|auto|off|full, the most a request may ask for. Validated here by name
  /// (common/ may not include agent/); app/serve.cpp converts it to agent::permission_mode once.
  std::string max_permission;
  /// --llama-api-key-file: file holding llama-server's API key (first line); "" = a random key
  /// per launch. Lets an operator (or a benchmark) talk to llama-server directly.
  std::string llama_api_key_file;
  /// --api-key-file: file holding the --api-key value (common/secret_file.h), so the key is not
  /// on the command line; finalize() reads it into api_key. Exclusive with --api-key.
  std::string api_key_file;
  /// --upstream-api-key-file: the same for --upstream-api-key (into upstream_api_key).
  std::string upstream_api_key_file;
  /// --models-dir: the model library, GGUF files warden lists, loads and pulls into
  /// (engine/model_library.h); "" = <home>/models.
  std::string models_dir;
  /// --hf-endpoint: where `hf: "owner/repo:file"` pulls resolve (<endpoint>/<owner>/<repo>/resolve/main/<file>).
  std::string hf_endpoint;
  bool auto_swap = false;     ///< --auto-swap: a request naming another local model loads it first
  int idle_unload_s = 0;      ///< --idle-unload: unload the model after this long without requests; 0 = never
};

/// How a raw value is read. integer: decimal in [min_value, max_value]; url: "" or http(s)://…;
/// level, permission: one of the row's `choices`; flag: a boolean word ("" = true); list:
/// comma-separated items (trimmed, lower-cased, empty ones dropped); string, path: as given.
enum class option_type { string, integer, path, url, level, flag, list, permission };

/// The config field a row writes. The alternative must fit the row's type: integer → int or
/// int64 (an int field with bounds that fit an int), flag → bool, list → vector, every other type
/// → string (static_assert in config.cpp).
using option_field = std::variant<std::string config::*, int config::*, std::int64_t config::*, bool config::*,
                                  std::vector<std::string> config::*>;

/// A row's own check of one value (for a list: of each item), after its type's. Returns nullptr
/// when the value is good, else what was expected ("a host name or address").
using option_check = const char* (*)(std::string_view value);

struct option_spec {
  const char* key;            ///< stable name, used in messages (error::param)
  const char* flag;           ///< e.g. "--port"
  const char* env;            ///< e.g. "WARDEN_PORT"
  option_type type;
  const char* unit = "";           ///< "" when unit-less
  const char* default_value = "";  ///< as a raw value; "" = none (a flag: off; a path: derived by finalize())
  std::int64_t min_value = 0;      ///< integers only
  std::int64_t max_value = 0;      ///< integers only
  const char* choices = "";        ///< level and permission: the accepted values, comma-separated
  const char* help = "";
  option_field field;              ///< what apply_option() writes
  option_check check = nullptr;    ///< nullptr = the type's rules only
};

/// The table, in --help order.
std::span<const option_spec> config_table();

/// Converts `raw` for the option `spec` and stores it in `cfg`; on an error `cfg` is unchanged.
/// Errors: errc::invalid_request with a message naming flag, variable and accepted values, and
/// error::param = spec.key.
result<void> apply_option(config& cfg, const option_spec& spec, const std::string& raw);

/// The default value of an option as --help shows it ("" = none shown).
std::string default_text(const option_spec& spec);

/// The table as a Markdown table (flag, env, default, meaning), one line per row in --help order,
/// for the docs' flag table. Pure.
std::string markdown_table();

/// llama-server children warden runs for chat: --replicas, or 1 when no upstream is given (0 with one).
int local_replicas(const config& cfg);

/// Fills derived defaults (home from $HOME, model path from home), reads the key files
/// (--api-key-file, --upstream-api-key-file: common/secret_file.h; each exclusive with its plain
/// flag), writes upstream_url as its base URL (common/upstream_url.h: "/v1" added to a URL
/// without a path) and checks cross-field rules (e.g. --model and --upstream are exclusive).
/// `user_home` ($HOME) is passed in for tests. Errors: errc::invalid_request, param the key.
result<void> finalize(config& cfg, const std::string& user_home);

/// Default model path under a warden home: <home>/models/SmolLM2-135M-Instruct.Q4_1.gguf
std::string default_model_path(const std::string& home);

/// llama-server built by scripts/setup: <home>/llama.cpp/<version>-cuda (or -vulkan)/bin/llama-server
/// when set-up built one for a GPU (the folder has its .complete mark), else the CPU build,
/// <home>/llama.cpp/<version>/bin/llama-server. Reads the file system.
std::string default_llama_server_path(const std::string& home);

}  // namespace warden
