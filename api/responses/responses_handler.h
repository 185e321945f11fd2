// The Responses surface (OpenAI's Responses API): POST /v1/responses, GET and DELETE
// /v1/responses/{id}, GET /v1/responses/{id}/input_items (routes()).
//
// create: validate (responses_request.h; 400 in OpenAI's envelope before any upstream work) →
// rebuild the conversation: instructions, then — with previous_response_id — the stored
// conversation of that response (store/responses_store.h; an unknown or deleted id is 404
// not_found_error), then the new input. Then one of two paths over engine::chat_backend:
//   client path (no enable_tools): one model turn; function calls come back as function_call
//     items for the client to run and answer with function_call_output items.
//   loop path (enable_tools): warden's tool loop (agent/tool_loop.h); the calls it runs are
//     mcp_call items. Approval, two ways through the one gate:
//       - the reference's: a streaming request (approval_format not "mcp") gets warden's
//         tool_start control events with approval_id and is answered through
//         POST /api/inference/tool-confirm, as on chat;
//       - the standard one: a non-streaming request, or approval_format "mcp", parks the turn
//         (loop_options::park_approvals): the response ends `completed` with one
//         mcp_approval_request item per call that needs a person, and the turn is stored. The
//         client continues with previous_response_id and mcp_approval_response items; the loop
//         resumes that very turn (approved calls run, denied ones get "The user declined…").
//         Parking needs store: a store:false request falls back to the chat rule (a
//         non-streaming request that could prompt → 400).
//       The parked request's tool options are stored with the turn, typed (parking.h), and a
//       resume always runs under them: its own tool fields are ignored (it cannot widen the gate).
//     Before any model work the request passes the one request-level gate, api/wire/admission.h
//     (parking and background as options: responses_admission()).
// Budgets (budgets.h), after the previous response is loaded and before any model work: the
// body with the history it carries (413), the stored-bytes quotas when it is to be stored and
// the cap on live background runs (429).
// Streaming: response.created / in_progress, item events as they happen (response_builder.h),
// `: ping` comments while silent, response.completed | incomplete | failed last. Failures
// before the first byte get a real status (503, 502, 400); after it an `error` event and
// response.failed. store (default true) keeps the response, its input items and its
// conversation; a client that disconnects mid-stream cancels the run and nothing is stored.
// Owners (named keys, common/principal.h): a response row and a background run record the
// caller's key name (a resume of a parked turn: the parked row's owner, whose session it is); a
// user key that names another key's response (previous_response_id, mcp_approval_response, the
// {id} routes) gets the 404 of an unknown one; an admin key reaches every one.
// Inside: responses_handler.cpp (create: load the previous response, admit, claim the parked
// turn), parking.h, run_paths.h, event_writer.h, background_runs.h (background.cpp),
// stored_routes.h.
// Thread-safety: one call per request, on the connection's strand; the store is called on the
// blocking pool.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <vector>

#include "agent/tool_loop.h"
#include "api/responses/background.h"
#include "api/responses/budgets.h"
#include "api/responses/responses_request.h"
#include "api/wire/admission.h"
#include "common/blocking_pool.h"
#include "common/http_types.h"
#include "engine/admission_queue.h"
#include "engine/chat_backend.h"
#include "engine/external_provider.h"
#include "store/responses_store.h"

namespace warden::api::responses {

struct responses_deps {
  engine::chat_backend& backend;
  agent::tool_runtime* tools = nullptr;      ///< null: enable_tools gets 503
  store::response_store* store = nullptr;    ///< null: nothing is kept (store is treated as false)
  blocking_pool* pool = nullptr;             ///< null: store calls run inline (tests)
  run_registry* runs = nullptr;              ///< live background runs; null: background gets 400
  std::chrono::milliseconds ping_interval{15000};  ///< `: ping` while a followed run is silent
  responses_limits limits{};                       ///< body+history, stored bytes, background runs (budgets.h)
  bool heal_tool_calls = true;                     ///< the server's default for auto_heal_tool_calls (engine/healing.h)
  /// The chat engine's admission queue (engine/admission_queue.h); null: no admission control.
  std::shared_ptr<engine::admission_queue> admission{};
  /// External providers (engine/external_provider.h); null: none configured.
  engine::provider_resolver providers{};
};

/// At start-up: a run that was queued or in progress when warden stopped is marked failed
/// ("warden restarted before the run finished"). Blocking (SQLite).
void fail_unfinished_runs(store::response_store& store);

/// A create request's verdict from the one request-level gate (api/wire/admission.h), for its
/// loop options with stream as the request says: it can park when it asks to be stored and
/// `store_available`; background and approval_format "mcp" as the request says; `resuming` when
/// it answers a parked turn. `tools` null: no tool loop on this server.
wire::admission admit_create(const responses_request& r, const agent::tool_runtime* tools, bool store_available,
                             bool resuming);

/// OpenAI's error envelope (api/wire/errors.h); in-band errors as an `error` event.
const surface& responses_surface();

/// The routes above. `deps` must outlive them.
std::vector<route> routes(responses_deps& deps);

}  // namespace warden::api::responses
