// http_client — libcurl multi on one dedicated thread; many concurrent streaming transfers.
//
// start() queues a request and returns its upstream_call at once; body bytes are pushed to the
// call chunk by chunk as curl receives them (no batching). upstream_call::cancel() removes the
// transfer from the multi handle, which closes the connection, so llama-server stops
// generating and frees the slot.
//
// Errors (in the `end` event): connection refused / host not found / connect timeout →
// errc::upstream_unavailable; any other transport error → errc::upstream_error; cancel →
// errc::cancelled. HTTP error statuses are not errors here: the head event carries them.
//
// Thread-safety: start() from any thread. The destructor aborts every transfer (each gets an
// `end` with errc::cancelled) and joins the thread.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "engine/upstream_call.h"

namespace warden::engine {

/// What a blocking GET received: the HTTP status (any, 4xx and 5xx included) and the body.
struct http_reply {
  long status = 0;
  std::string body;
};

/// type_code of get_blocking()'s error when no HTTP answer came.
inline constexpr const char* k_unreachable = "unreachable";
/// type_code of get_blocking()'s error when warden itself could not try: out of file
/// descriptors (EMFILE, ENFILE) or memory. Says nothing about the upstream.
inline constexpr const char* k_local_shortage = "local_shortage";

struct http_call_request {
  std::string method = "POST";
  std::string url;
  std::vector<std::string> headers;  ///< "Name: value"
  std::string body;
  long connect_timeout_ms = 5000;
  long total_timeout_ms = 0;         ///< 0 = no limit (streams can be long)
};

class http_client {
 public:
  http_client();
  ~http_client();
  http_client(const http_client&) = delete;
  http_client& operator=(const http_client&) = delete;

  /// Starts a transfer whose events are delivered on `ex`.
  std::shared_ptr<upstream_call> start(http_call_request req, boost::asio::any_io_executor ex);

  /// Blocking GET for start-up probes (health checks): the reply, whatever its status; or, when
  /// no HTTP answer came (refused, timed out after `timeout_ms`, host not found),
  /// errc::upstream_unavailable with type_code k_unreachable and curl's reason as the message;
  /// type_code k_local_shortage when the attempt failed for want of file descriptors or memory
  /// here. Not for use on io threads.
  static result<http_reply> get_blocking(const std::string& url, const std::vector<std::string>& headers,
                                         long timeout_ms);

  /// Ends every transfer in flight with errc::upstream_unavailable and `reason` (shutdown), so
  /// open streams can still tell their clients why they end. Returns at once.
  void abort_all(std::string reason);

  /// Number of transfers in flight (for tests and logs).
  std::size_t active() const;

 private:
  struct impl;
  std::shared_ptr<impl> impl_;  // cancellers hold weak references
};

}  // namespace warden::engine
