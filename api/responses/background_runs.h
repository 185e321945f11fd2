// Background run lifecycle (`background: true`; internal to api/responses/, in background.cpp
// next to run_channel and run_registry):
//   start_background(): registers the run (run_registry), stores its row as "in_progress" before
//     answering (a GET right after finds it), spawns the run on warden's executor (owned by no
//     connection), and answers the object, or, streaming, follows the run's events;
//   follow(): streams a run's events after a sequence number until it ends (`: ping` while
//     silent); a follower that leaves changes nothing for the run;
//   answer_live_run(): mcp_approval_response items for a run that is still live answer its
//     tickets ("mcpr_<approval id>") and get its object as it stands; false when the request is
//     not that. Only the named run's own questions, resolved in the run's own session
//     (run_channel::session_id): an id that is not one of its waiting mcp_approval_request items
//     → 400 (param "input") and nothing is answered; a request that names another session → 404
//     previous_response_not_found;
//   fail_unfinished_runs() (responses_handler.h): at start-up, runs cut by a restart are failed.
// Thread-safety: coroutines on the connection's strand; the run itself on warden's executor.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <memory>

#include "api/responses/background.h"
#include "api/responses/responses_handler.h"
#include "api/responses/run_state.h"
#include "common/http_types.h"

namespace warden::api::responses {

boost::asio::awaitable<void> start_background(run_state st, response_writer& out, responses_deps& deps);

boost::asio::awaitable<void> follow(std::shared_ptr<run_channel> ch, std::int64_t after, response_writer& out,
                                    std::chrono::milliseconds ping);

boost::asio::awaitable<bool> answer_live_run(const run_state& st, response_writer& out, responses_deps& deps);

}  // namespace warden::api::responses
