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
  std::string api_key;                        ///< "" = $WARDEN_API_KEY, else none
  std::string tools;                          ///< "" = all; "none"; or "python,terminal,…"
  std::string system = "You are a helpful assistant.";  ///< the system message of every run; "" = none
};

/// The terminal client: a REPL when stdin is a terminal, else one question read from stdin.
/// Returns 0 when done (or quit), 1 when the server cannot be reached or a run fails, 2 for a
/// bad option or an empty question, 130 after a run was cancelled by Ctrl-C in piped mode or
/// when a second Ctrl-C quit during a run.
int run_chat(const chat_options& o);

}  // namespace warden::client
