// `warden chat`, the terminal client (client/): its entry point for the CLI (app/cli.cpp).
// What a run does: client/chat_session.h.
// Thread-safety: run_chat() owns the terminal; call it once, from the main thread.
#pragma once

#include <string>

namespace warden::client {

/// `warden chat` options (the CLI fills them: app/cli.cpp).
struct chat_options {
  std::string url = "http://127.0.0.1:8888";  ///< the server's root (a trailing /v1 is dropped)
  std::string model;                          ///< "" = the first id of GET /v1/models
  std::string mode = "ask";                   ///< permission_mode of every run: ask, auto, off, full
  std::string session;                        ///< "" = a fresh chat-<random> id
  std::string api_key;                        ///< "" = api_key_file, else $WARDEN_API_KEY, else $WARDEN_API_KEY_FILE, else none
  /// A file holding the key on one line (common/secret_file.h); exclusive with api_key (the CLI
  /// refuses both). A missing, empty or unreadable file: run_chat() says so and returns 2.
  std::string api_key_file;
  std::string tools;                          ///< "" = all; "none"; or "python,terminal,…"
  std::string system = "You are a helpful assistant.";  ///< the system message of every run; "" = none
  bool mcp = false;    ///< every run sends `mcp_enabled: true` (the MCP servers' tools are offered)
  /// Lists what waits for a person (GET /api/inference/approvals; only `session`'s when set),
  /// answers each in turn when stdin is a terminal, and exits (no chat).
  bool inbox = false;
};

/// The terminal client: a REPL when stdin is a terminal, else one question read from stdin.
/// Returns 0 when done (or quit), 1 when the server cannot be reached or a run fails, 2 for a
/// bad option or an empty question, 130 after a run was cancelled by Ctrl-C in piped mode or
/// when a second Ctrl-C quit during a run. `--inbox`: 0 done or nothing waiting, 1 the inbox
/// could not be read, 130 stopped by Ctrl-C.
int run_chat(const chat_options& o);

}  // namespace warden::client
