// Request admission — THE request-level gate, composed once for every surface that runs
// warden's tool loop (OpenAI chat, Anthropic Messages, Responses; the next surface, MCP, calls
// it too). Per call there is one chokepoint in agent/ (call policy → gate → runner → record);
// per request there is this one: a handler parses its dialect into agent::loop_options, calls
// admit() before any model work, answers the refusal if there is one (wire::send_error), and
// otherwise runs the loop with the verdict applied (admission::apply).
//
// admit(), in order:
//   1. tools off (enable_tools false): admitted as the request is — unless it resumes a parked
//      turn (Responses), which needs the loop: 400 "resuming approval requests needs
//      'enable_tools'" (param enable_tools);
//   2. no tool runtime on this server: 503 "the tool loop is not available on this server";
//   3. approval_mcp without parking: 400 "approval_format 'mcp' needs 'store': true (…)"
//      (param approval_format);
//   4. parking and folding: a turn with a call that needs a person parks (park_approvals) when
//      the surface can park, the run is not in the background, and the request either does not
//      stream or asked for mcp approvals. The gate folds as a stream would (stream = true) when
//      it parks or runs in the background, else as the request streams;
//   5. the surface's own rule, when it has one (Anthropic Messages server tools: no confirmation
//      channel, api/anthropic/server_tools.h messages_gate);
//   6. agent::stream_requirement — skipped when the turn parks or runs in the background (a
//      person is asked another way);
//   7. a named `user` key (loop_options::may_bypass false) asking for mode 'full' (403,
//      param bypass_permissions, code permission_mode_not_allowed: issue 22);
//   8. agent::check_permission_ceiling against --max-permission (403).
// The messages, statuses, params and codes are the ones the surfaces answered before this
// gate was shared; the Python suites assert them byte for byte.
// Thread-safety: pure functions on values (the runtime is only read: its registry and ceiling).
#pragma once

#include <optional>

#include "agent/loop_context.h"
#include "common/error.h"

namespace warden::api::wire {

/// A surface's own request rule (step 5): the error to answer, or nullopt.
using surface_rule = std::optional<error> (*)(const agent::loop_options& o, const tools::registry& reg);

struct admission_options {
  bool can_park = false;      ///< the surface can keep a parked turn (Responses with store: true and a store)
  bool background = false;    ///< a background run: asks through tickets, never parks
  bool approval_mcp = false;  ///< the request wants mcp_approval_request items (needs can_park)
  bool resuming = false;      ///< the request answers a parked turn
  surface_rule rule = nullptr;
};

/// The verdict: a refusal to answer, or how the loop runs.
struct admission {
  std::optional<error> refusal;  ///< set: answer it with http_status(refusal->code); nothing runs
  bool park_approvals = false;   ///< loop_options::park_approvals to run with
  bool stream = true;            ///< loop_options::stream to run with (how the gate folds)

  bool admitted() const { return !refusal; }
  /// Writes park_approvals and stream into `o` (the options the verdict was made for).
  void apply(agent::loop_options& o) const {
    o.park_approvals = park_approvals;
    o.stream = stream;
  }
};

/// The verdict for a request's loop options. `tools` null: this server has no tool loop.
admission admit(const agent::loop_options& o, const agent::tool_runtime* tools, const admission_options& opt);

}  // namespace warden::api::wire
