// One HTTP request to an upstream model server, consumed as a sequence of events from a
// coroutine: head (status, content type) once, data (body bytes as they arrive) any number of
// times, then end (clean or with an error). Produced on the http_client thread, consumed on the
// connection's strand.
//
// Waiting costs no thread: next() parks the coroutine on a timer that the producer cancels
// when an event arrives (the timer doubles as a condition variable). next() returns
// std::nullopt when `idle` passes with no event, so the caller can send a keep-alive ping.
// next() honours asio per-operation cancellation (e.g. awaitable_operators `||`): it then
// throws boost::system::system_error(operation_aborted).
//
// Thread-safety: push()/cancel() from any thread; next() from one coroutine at a time, on the
// executor given at construction. cancel() is idempotent; after it, an `end` event with
// errc::cancelled is delivered (unless the call already ended).
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "common/error.h"

namespace warden::engine {

struct call_event {
  enum class kind { head, data, end };
  kind type = kind::end;
  long status = 0;                ///< head: HTTP status of the upstream response
  std::string content_type;       ///< head
  std::string bytes;              ///< data
  std::optional<error> failure;   ///< end: nullopt = the upstream finished the response
};

class upstream_call : public std::enable_shared_from_this<upstream_call> {
 public:
  explicit upstream_call(boost::asio::any_io_executor ex) : timer_(std::move(ex)) {}

  /// Next event, or nullopt after `idle` without one.
  boost::asio::awaitable<std::optional<call_event>> next(std::chrono::milliseconds idle);

  /// Producer side (http_client thread).
  void push(call_event ev);

  /// Asks the producer to abort the transfer; thread-safe, idempotent.
  void cancel();
  bool cancel_requested() const;

  /// Set by the producer: how to abort the transfer (called at most once, by cancel()).
  void set_canceller(std::function<void()> fn);

 private:
  mutable std::mutex mu_;
  std::deque<call_event> queue_;
  bool waiting_ = false;
  bool cancel_requested_ = false;
  std::function<void()> canceller_;
  boost::asio::steady_timer timer_;
};

}  // namespace warden::engine
