// One HTTP request to an upstream model server, consumed as a sequence of events from a
// coroutine: head (status, content type) once, data (body bytes as they arrive) any number of
// times, then end (clean or with an error). Produced on the http_client thread through a
// call_channel, consumed on the connection's strand through the upstream_call.
//
// Waiting costs no thread: next() parks the coroutine on a timer that the producer cancels
// when an event arrives (the timer doubles as a condition variable). next() returns
// std::nullopt when `idle` passes with no event, so the caller can send a keep-alive ping.
// next() honours asio per-operation cancellation (e.g. awaitable_operators `||`): it then
// throws boost::system::system_error(operation_aborted).
//
// Lifetimes: the producer owns only the call_channel, never the timer, so the consumer (and
// its io_context) may go away first; events pushed after that are dropped.
// Thread-safety: call_channel::push()/upstream_call::cancel() from any thread; next() from one
// coroutine at a time, on the executor given at construction. cancel() is idempotent; after
// it, an `end` event with errc::cancelled is delivered (unless the call already ended).
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

class upstream_call;

/// The producer's side of a call, shared between the http_client thread and the consumer.
class call_channel {
 public:
  explicit call_channel(boost::asio::any_io_executor ex) : executor_(std::move(ex)) {}

  /// Queues an event and wakes the consumer if it waits; dropped once the consumer is gone.
  void push(call_event ev);
  /// Set by the producer: how to abort the transfer (called at most once, by request_cancel()).
  void set_canceller(std::function<void()> fn);
  /// Asks the producer to abort; idempotent.
  void request_cancel();
  bool cancel_requested() const;

 private:
  friend class upstream_call;
  mutable std::mutex mu_;
  std::deque<call_event> queue_;
  bool waiting_ = false;
  bool closed_ = false;  ///< the consumer is gone
  bool cancel_requested_ = false;
  std::function<void()> canceller_;
  std::weak_ptr<upstream_call> consumer_;
  boost::asio::any_io_executor executor_;
};

class upstream_call : public std::enable_shared_from_this<upstream_call> {
 public:
  /// Use make(): the channel needs a weak reference to the consumer.
  upstream_call(std::shared_ptr<call_channel> ch, boost::asio::any_io_executor ex)
      : channel_(std::move(ch)), timer_(std::move(ex)) {}
  ~upstream_call();
  static std::shared_ptr<upstream_call> make(boost::asio::any_io_executor ex);

  /// Next event, or nullopt after `idle` without one.
  boost::asio::awaitable<std::optional<call_event>> next(std::chrono::milliseconds idle);

  /// Asks the producer to abort the transfer; thread-safe, idempotent.
  void cancel() { channel_->request_cancel(); }
  bool cancel_requested() const { return channel_->cancel_requested(); }

  const std::shared_ptr<call_channel>& channel() const { return channel_; }

 private:
  friend class call_channel;
  std::shared_ptr<call_channel> channel_;
  boost::asio::steady_timer timer_;
};

}  // namespace warden::engine
