// warden::config — every start-up setting, declared once in a table (DESIGN.md §7).
//
// Each row of `config_table()` gives the flag, the WARDEN_* environment variable, the type, the
// unit, the default and one line of help. app/cli.cpp turns the table into CLI11 options (so
// `warden serve --help` is generated from it); `apply_option` converts and range-checks one raw
// value. Start-up parses once and passes `const config&` down; nothing deeper reads the
// environment. A bad value is an `errc::invalid_request` error whose message names the flag,
// the variable and the accepted range, and start-up stops with it.
// Thread-safety: the table is immutable; `config` is a value type.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"

namespace warden {

struct config {
  std::string host = "127.0.0.1";       ///< bind address of the HTTP server
  int port = 8888;                      ///< bind port; 0 = pick a free one
  std::string model_path;               ///< GGUF file; "" = the default model from set-up
  std::string model_id;                 ///< public model id; "" = file name without .gguf
  std::string upstream_url;             ///< OpenAI-compatible base URL (…/v1); "" = run llama-server
  std::string upstream_api_key;         ///< Bearer key sent to upstream_url
  int ctx_tokens = 8192;                ///< llama-server -c (context size, tokens, all slots)
  int parallel_slots = 4;               ///< llama-server --parallel (slots); range from reference §5.2
  std::string api_key;                  ///< required on /v1/* when set
  std::string llama_server_path;        ///< llama-server binary; "" = the one built by set-up
  std::string home;                     ///< cache and state folder ($WARDEN_HOME)
  int load_timeout_s = 600;             ///< model load limit; reference §5.4 uses 600 s
  int sse_ping_interval_ms = 15000;     ///< SSE comment ping while upstream is silent; ref. §1.3
  std::int64_t max_body_bytes = 32LL << 20;  ///< largest accepted request body
  int io_threads = 2;                   ///< threads running the io_context
  std::string log_level = "info";       ///< trace|debug|info|warn|error|off
  int approval_timeout_s = 3600;        ///< a pending approval expires after this (the call does not run); reference §3.5
  std::string workspaces_dir;           ///< per-session tool folders; "" = <home>/workspaces
  std::string bwrap_path = "/usr/bin/bwrap";  ///< bubblewrap for the tool sandbox
  /// Extra names a request's Host header may use (besides localhost, 127.0.0.1, [::1] and the
  /// bound address); "name" matches any port, "name:port" only that port. Lower-cased.
  std::vector<std::string> allowed_hosts;
  /// Extra browser origins allowed to call warden ("scheme://host[:port]", lower-cased, no path).
  std::vector<std::string> allowed_origins;
  bool insecure_no_auth = false;        ///< allow a non-loopback --host without --api-key
  std::string max_permission = "full";  ///< ask|auto|off|full: the most a request may ask for
  /// File holding llama-server's API key (first line); "" = a random key per launch. Lets an
  /// operator (or a benchmark) talk to llama-server directly.
  std::string llama_api_key_file;
};

enum class option_type { string, integer, path, url, level, flag, list, permission };

struct option_spec {
  const char* key;            ///< stable name, used in messages
  const char* flag;           ///< e.g. "--port"
  const char* env;            ///< e.g. "WARDEN_PORT"
  option_type type;
  const char* unit;           ///< "" when unit-less
  std::int64_t min_value;     ///< integers only
  std::int64_t max_value;     ///< integers only
  const char* help;
};

/// The table, in --help order.
std::span<const option_spec> config_table();

/// Converts `raw` for the option with `key` and stores it in `cfg`.
/// Errors: errc::invalid_request with a message naming flag, variable and accepted values.
result<void> apply_option(config& cfg, const option_spec& spec, const std::string& raw);

/// The default value of an option as text (for --help), read from a default-constructed config.
std::string default_text(const option_spec& spec);

/// Fills derived defaults (home from $HOME, model path from home) and checks cross-field rules
/// (e.g. --model and --upstream are exclusive). `home_env`/`user_home` are passed in for tests.
result<void> finalize(config& cfg, const std::string& user_home);

/// Default model path under a warden home: <home>/models/SmolLM2-135M-Instruct.Q4_1.gguf
std::string default_model_path(const std::string& home);

/// llama-server built by scripts/setup: <home>/llama.cpp/<version>/bin/llama-server
std::string default_llama_server_path(const std::string& home);

}  // namespace warden
