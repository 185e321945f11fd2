// The subcommands behind the CLI. Each returns a process exit code (see cli.h).
#pragma once

#include <string>

#include "common/config.h"

namespace warden::app {

/// `warden audit` options.
struct audit_options {
  std::string session;  ///< "" = every session
  std::string since;    ///< "" = no bound; Unix ms or an RFC 3339 time
  int limit = 50;       ///< the last this many calls (at least 1)
  bool json = false;    ///< JSON lines with the keys of GET /api/audit instead of one text line per call
};

/// `warden chat` options (app/chat_session.h).
struct chat_options {
  std::string url = "http://127.0.0.1:8888";  ///< the server's root (a trailing /v1 is dropped)
  std::string model;                          ///< "" = the first id of GET /v1/models
  std::string mode = "ask";                   ///< permission_mode of every run: ask, auto, off, full
  std::string session;                        ///< "" = a fresh chat-<random> id
  std::string api_key;                        ///< "" = $WARDEN_API_KEY, else none
  std::string tools;                          ///< "" = all; "none"; or "python,terminal,…"
  std::string system = "You are a helpful assistant.";  ///< the system message of every run; "" = none
};

/// Serves until SIGINT/SIGTERM. Prints one line with the URL and model id when ready.
int run_serve(const config& cfg);

/// Prints a status line per check; returns 1 when a check fails.
int run_doctor(const config& cfg);

/// Prints the last `o.limit` calls of the audit log (<home>/warden.db), oldest first; works
/// while a server runs (WAL). No database yet: says so and returns 0 (creates nothing).
/// Returns 2 for a bad --since or --session, 1 when the database cannot be read.
int run_audit(const config& cfg, const audit_options& o);

/// The terminal client: a REPL when stdin is a terminal, else one question read from stdin.
/// Returns 0 when done (or quit), 1 when the server cannot be reached or a run fails, 2 for a
/// bad option or an empty question, 130 after a run was cancelled by Ctrl-C in piped mode or
/// when a second Ctrl-C quit during a run.
int run_chat(const chat_options& o);

}  // namespace warden::app
