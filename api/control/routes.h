// The control surface: warden's own endpoints next to the dialects (DESIGN §3, api/control/).
//
//   GET  /health                      public; 200 {"status":"ok"} when the model is ready,
//                                     503 {"status":"loading"|"error","message":…} otherwise
//   POST /api/inference/tool-confirm, the approvals inbox and the rules: approvals_routes.h
//   POST /api/inference/cancel        {cancel_id?, session_id?} (one at least) → 200
//                                     {"cancelled": n}: running tool loops stopped (pending
//                                     approvals denied, tools killed); a user key stops only
//                                     its own loops (another key's count as 0, like an unknown
//                                     id), an admin key every loop under the id
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
  std::string status;   ///< "ok", "loading" or "error"
  std::string message;  ///< why not ready
};

struct control_deps {
  agent::tool_runtime* tools = nullptr;   ///< null: the tool endpoints answer 503
  std::function<health_report()> health;
};

const surface& control_surface();

/// /health, /api/inference/cancel and approval_routes(). `deps` must outlive the routes.
std::vector<route> routes(control_deps& deps);

}  // namespace warden::api::control
