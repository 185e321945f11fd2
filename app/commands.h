// The subcommands behind the CLI. Each returns a process exit code (see cli.h).
#pragma once

#include <optional>
#include <string>

#include "client/chat.h"
#include "common/config.h"

namespace warden::app {

/// `warden audit` options.
struct audit_options {
  std::string session;  ///< "" = every session
  std::optional<std::string> owner;  ///< only this API key name's calls ("" = the single user's); nullopt = all
  std::string since;    ///< "" = no bound; Unix ms or an RFC 3339 time
  int limit = 50;       ///< the last this many calls (at least 1)
  bool json = false;    ///< JSON lines with the keys of GET /api/audit instead of one text line per call
};

/// `warden chat` options and the client (client/chat.h).
using client::chat_options;
using client::run_chat;

/// Serves until SIGINT/SIGTERM. Prints one line with the URL and model id when ready.
int run_serve(const config& cfg);

/// Prints a status line per check; returns 1 when a check fails.
int run_doctor(const config& cfg);

/// Prints the last `o.limit` calls of the audit log (<home>/warden.db), oldest first; works
/// while a server runs (WAL). No database yet: says so and returns 0 (creates nothing).
/// Returns 2 for a bad --since or --session, 1 when the database cannot be read.
int run_audit(const config& cfg, const audit_options& o);

/// `warden audit verify`: checks the audit log's hash chain (store/call_records.h). Prints
/// "ok: N rows, M events, chain head H" and returns 0 when it holds; prints "row N: what is
/// wrong" for the first broken row and returns 1 when it does not, or when the database cannot
/// be read. No database yet: says so and returns 0.
int run_audit_verify(const config& cfg);

}  // namespace warden::app
