// The control surface: warden's own endpoints next to the dialects (DESIGN §3, api/control/).
//
//   GET  /health                      public; 200 {"status":"ok"} when the model is ready,
//                                     503 {"status":"loading"|"restarting"|"unloaded"|"error",
//                                     "message":…} otherwise
//   POST /api/inference/tool-confirm, the approvals inbox and the rules: approvals_routes.h
//   POST /api/inference/cancel        {cancel_id?, session_id?} (one at least) → 200
//                                     {"cancelled": n}: running tool loops stopped (pending
//                                     approvals denied, tools killed); a user key stops only
//                                     its own loops (another key's count as 0, like an unknown
//                                     id), an admin key every loop under the id
//   GET  /api/debug/counts            admin key (or no keys configured): 200 {connections_open,
//                                     handlers_running, pending_body_bytes, approvals_pending,
//                                     tool_loops_running, background_runs_live}: what warden
//                                     holds now; all 0 on an idle server but for this request
//                                     (make soak checks it after its run); a user key: 403
// Bodies are read by parse_control_body (extensions.h). Errors use the OpenAI envelope (the
// reference system's /api/* errors are OpenAI-shaped, api/wire/errors.h), through control_surface():
// handlers answer them with wire::send_error(out, control_surface(), e).
// Thread-safety: handlers run concurrently; the registries they use are thread-safe.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "agent/loop_context.h"
#include "api/wire/errors.h"
#include "common/http_types.h"

namespace warden::api::control {

struct health_report {
  bool ready = false;
  std::string status;   ///< "ok", "loading", "restarting", "unloaded" or "error"
  std::string message;  ///< why not ready
};

/// GET /api/debug/counts: work in progress now (live_counts of app/serve.cpp).
struct live_counts {
  std::uint64_t connections_open = 0;    ///< http::server_stats
  std::uint64_t handlers_running = 0;    ///< http::server_stats
  std::uint64_t pending_body_bytes = 0;  ///< http::server_stats
  std::size_t approvals_pending = 0;     ///< agent::approval_registry::pending
  std::size_t tool_loops_running = 0;    ///< agent::cancel_registry::size (one per key a loop has)
  std::size_t background_runs_live = 0;  ///< api::responses::run_registry::active
};

struct control_deps {
  agent::tool_runtime* tools = nullptr;   ///< null: the tool endpoints answer 503
  std::function<health_report()> health;
  std::function<live_counts()> counts;    ///< null: /api/debug/counts answers 503
  /// --metrics-key: when set, GET /metrics takes exactly this key (`Authorization: Bearer`), a
  /// scraper's own that calls nothing else; "" = the API key guards it as any route.
  std::string metrics_key{};
};

const surface& control_surface();

/// /health, /api/inference/cancel, /api/debug/counts, /metrics (common/metrics.h's global registry
/// in the Prometheus text format; the API key when one is set, or else deps.metrics_key) and
/// approval_routes(). `deps` must
/// outlive the routes.
std::vector<route> routes(control_deps& deps);

}  // namespace warden::api::control
