// run paths — how a Responses run goes once it was admitted (internal to api/responses/):
//   client path (no enable_tools): one model turn; the events become items as they arrive;
//   loop path (enable_tools): warden's tool loop; a parked turn (loop_options::park_approvals)
//     ends the response with one mcp_approval_request item per question and is stored with it
//     (parking.h encode_parked: the turn and the typed loop options).
// Either way the end is the same (finish): the response is stored first when it asked to be
// (store: true and a store), so a GET right after the answer finds it, then the object (not
// streaming) or the last events go out; a failure before anything was sent is an HTTP error
// and nothing is stored. A cancel (POST …/cancel, /api/inference/cancel) ends it "cancelled";
// warden shutting down is a failure, never a quietly truncated "completed".
// Thread-safety: one run per coroutine; the store is called through the blocking pool.
#pragma once

#include <boost/asio/awaitable.hpp>

#include "api/responses/event_writer.h"
#include "api/responses/response_builder.h"
#include "api/responses/responses_handler.h"
#include "api/responses/run_state.h"

namespace warden::api::responses {

/// The response object's settings for `st` (the served model's name, or the requested one).
response_settings settings_of(const run_state& st, const responses_deps& deps);

/// Runs `st` on its path with builder `b` and writer `w`, and ends the response.
boost::asio::awaitable<void> run(run_state& st, response_builder& b, event_writer& w, response_writer& out,
                                 responses_deps& deps);

}  // namespace warden::api::responses
