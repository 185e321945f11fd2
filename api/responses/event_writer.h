// event_writer — where a Responses run's events go (internal to api/responses/):
//   foreground, streaming: SSE on the connection (`event: <type>\ndata: <json>\n\n`), opened with
//     response.created / in_progress on the first write (open());
//   foreground, not streaming: nowhere (only the final object is sent, by run_paths.h finish());
//   background: the run's log (run_channel), with the response object when an item starts or
//     ends (and at most every 100 ms while text streams, for pollers); item-level events are
//     also written to the store, so a replay after a restart has what followers saw.
// Every call returns false once the client is gone (never for a background run).
// Thread-safety: one writer per run, used from the run's coroutine only.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <vector>

#include "api/responses/response_builder.h"
#include "api/responses/responses_handler.h"
#include "api/responses/run_state.h"
#include "common/http_types.h"
#include "common/json_util.h"

namespace warden::api::responses {

class event_writer {
 public:
  event_writer(response_writer& out, response_builder& b, run_state& st, responses_deps& deps)
      : out_(out), b_(b), st_(st), deps_(deps) {}
  /// Starts the SSE response (foreground streaming only), once.
  boost::asio::awaitable<bool> open();
  boost::asio::awaitable<bool> write(std::vector<json> events);
  /// `: ping` while the upstream is silent (foreground streaming only).
  boost::asio::awaitable<bool> ping();

 private:
  /// Background: into the run's log. True for an item-level event.
  bool publish(std::vector<json> events);
  /// Background: writes the events not yet stored.
  boost::asio::awaitable<void> persist();

  static constexpr int k_snapshot_ms = 100;
  response_writer& out_;
  response_builder& b_;
  run_state& st_;
  responses_deps& deps_;
  std::chrono::steady_clock::time_point last_snapshot_{};
};

}  // namespace warden::api::responses
