// http_client — libcurl multi driven by an asio io_context; many concurrent streaming transfers.
//
// start() adds a request to the multi handle and returns its upstream_call at once; body bytes
// are pushed to the call chunk by chunk as curl receives them (no batching). Flow control: once
// 1 MiB is queued that the consumer has not taken (a slow client), the transfer pauses (curl
// stops reading, so TCP slows the upstream down) until the consumer has taken it below 256 KiB. upstream_call::
// cancel() removes the transfer from the multi handle, which closes the connection, so
// llama-server stops generating and frees the slot.
//
// Driving: curl_multi_socket_action with curl's sockets watched by asio (each socket wrapped in a
// posix::stream_descriptor, released, never closed, before curl closes it) and curl's timeout on
// a steady_timer. One multi handle per shard (one shard per io thread); every multi call of a
// shard is serialised by its mutex, so the io_context may be run by several threads (--threads)
// and one thread's curl work never waits for another's. A socket's readiness is waited for on
// the executor of the call that uses it (the connection's strand) when that executor belongs to
// the client's io_context: curl then runs on that strand and the call's coroutine is resumed
// there and then, with no post and no thread wake-up per chunk. Other executors get their events
// posted.
// http_client(io_context&): on that io_context (the server's). http_client(): on an io_context of
// its own, run by one thread it owns (tools and tests); events are then always posted.
//
// Errors (in the `end` event): connection refused / host not found / connect timeout →
// errc::upstream_unavailable; any other transport error → errc::upstream_error; cancel →
// errc::cancelled. HTTP error statuses are not errors here: the head event carries them.
//
// Lifetimes: the client and the io_context may be destroyed in either order. Destroying the
// client ends every transfer with errc::cancelled ("server shutting down"). Destroying the
// io_context first (its shutdown) ends them the same way without waking anyone (the parked
// coroutines are destroyed with their io_context) and detaches the client from it: later start()
// calls end at once with errc::cancelled, cancels do nothing.
// Thread-safety: start(), abort_all(), active() and the calls' cancel() from any thread; the
// destructor from a thread that is not running a handler of the client's io_context.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/io_context.hpp>
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
  /// On an io_context and thread of its own.
  http_client();
  /// On `ioc` (which must not be destroyed while a call into this client is in progress), with
  /// `shards` multi handles (one per io thread; at least 1): each thread starts its transfers on
  /// a shard of its own, so the threads' curl work runs in parallel. Connections are reused
  /// within a shard.
  explicit http_client(boost::asio::io_context& ioc, std::size_t shards = 1);
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
  struct own_loop;
  std::unique_ptr<own_loop> own_;  // http_client(): the io_context and thread it owns
  std::vector<std::shared_ptr<impl>> shards_;  // cancellers, socket waits and the io_context's service hold weak references
  impl& shard_for_this_thread();
};

}  // namespace warden::engine
