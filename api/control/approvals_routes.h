// The approvals inbox and the remembered rules (issue 10), on the control surface.
//
//   POST   /api/inference/tool-confirm   {approval_id, decision, session_id?, rule?}
//          decision: "allow" | "deny" | "allow_session" | "allow_always". allow_session remembers
//          a rule for the call's session, allow_always one for every session, stored in SQLite
//          (survives restarts). `rule` (only with those two): {tool, command_prefix?,
//          path_prefix?, expires_in_s?}; default: this tool with these exact arguments. A rule
//          must cover the call the person saw and never widens past it (agent/permission_rules.h:
//          no command_prefix for a program that runs other programs, code
//          "prefix_runs_programs"): 400 otherwise, and the call stays pending.
//          → 200 {"resolved":true, "rule"?: rule}. allow_session for a call of the shared session
//          (a request without a session_id: agent::k_shared_session) allows it once and remembers
//          nothing: → 200 {"resolved":true, "rule":null, "note":"allowed once, and no rule …"};
//          404 for an unknown, decided or other-session id (the scope is checked only when
//          session_id is sent); 400 for a malformed body.
//          An MCP server's request for input (kind "elicitation", issue 26) is answered here too,
//          with decision "accept" (+ `content`: the form's fields, checked against the server's
//          requestedSchema: 400 naming content.<field>), "decline" or "cancel" → 200
//          {"resolved":true}; allow/deny for an elicitation, or accept/decline/cancel for a tool
//          call, is 400 (param decision).
//   GET    /api/inference/approvals?session_id=   → {"object":"list","data":[approval…]}:
//          the pending questions, oldest first.
//   GET    /api/inference/approvals/stream?session_id=   → SSE: first every pending question,
//          then each new one and each settled one as it happens:
//            event: approval_requested  data: {"type":"approval_requested","approval":approval}
//            event: approval_settled    data: {"type":"approval_settled","approval_id","session_id",
//                                              "outcome": allowed|denied|expired|cancelled|withdrawn}
//          and `: ping` every ping interval. It ends when the client goes away (or at shutdown),
//          and when more than 10,000 frames or 8 MiB wait for a reader that stopped reading.
//   GET    /api/permissions/rules?session_id=   → {"object":"list","data":[rule…]}
//   DELETE /api/permissions/rules/{id}          → 200 {"deleted":true,"id"}; 404 when unknown
// approval = {approval_id, session_id, owner, tool, tool_call_id, arguments,
//             risk:{level,reasons}|null, created_at_ms, expires_at_ms (Unix ms),
//             kind: "tool_call"|"elicitation", elicitation?: {server, message, mode,
//             requestedSchema | url, …} (the MCP server's request as sent)}
// rule     = {id, scope:"session"|"always", session_id ("" for always), owner, tool,
//             command_prefix?, path_prefix?, arguments? (the exact arguments object),
//             created_at_ms, expires_at_ms (null = never)}
// Owners (issue 22; common/principal.h): `owner` is the API key name of the request that asked
// ("" for the single user). A user key lists, streams, answers and deletes only what it owns;
// another key's approval id or rule id is answered exactly like an unknown one (404), and its
// questions never appear in the inbox or the stream. An admin key, and the single user, see and
// act on everything. A rule belongs to the owner of the call it was made on (so it covers only
// that owner's calls), whoever answered.
// Every route needs the API key when one is set: the approval id stays the capability to
// answer, but listing the inbox would hand it out.
// Thread-safety: handlers run concurrently; the registries are thread-safe.
#pragma once

#include <vector>

#include "api/control/routes.h"

namespace warden::api::control {

std::vector<route> approval_routes(control_deps& deps);

}  // namespace warden::api::control
