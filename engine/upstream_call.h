// One HTTP request to an upstream model server, consumed as a sequence of events from a
// coroutine: head (status, content type) once, data (body bytes as they arrive) any number of
// times, then end (clean or with an error). Produced by the http_client (on its io_context, or
// any thread) through a call_channel, consumed on the call's executor through the upstream_call.
//
// Waiting costs no thread: next() parks the coroutine's completion handler in the channel; the
// producer hands it the next event. When the producer already runs on the consumer's executor
// (the same strand, or the one thread of a single-threaded io_context) the coroutine is resumed
// right there, with no post and no thread wake-up; otherwise the resumption is posted to that
// executor. next() returns std::nullopt when `idle` passes with no event, so the caller can send
// a keep-alive ping (one steady_timer per call, re-armed once per idle period, not per event).
// next() honours asio per-operation cancellation (e.g. awaitable_operators `||`): it then
// throws boost::system::system_error(operation_aborted).
//
// Lifetimes: the producer owns only the call_channel, never the timer, so the consumer (and
// its io_context) may go away first; events pushed after that are dropped. While next() waits,
// an idle-timer wait is always pending on the consumer's io_context: if that io_context is
// destroyed first, destroying that wait destroys the parked coroutine too, as asio does with
// its own operations.
// Thread-safety: call_channel's producer calls (enqueue/notify/push) and upstream_call::cancel()
// from any thread; next() from one coroutine at a time, on the executor given at construction.
// cancel() is idempotent; after it, an `end` event with errc::cancelled is delivered (unless the
// call already ended).
#pragma once

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/system/error_code.hpp>
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

/// The completion handler of a parked next(): an error (operation_aborted) or the event.
using call_waiter = boost::asio::any_completion_handler<void(boost::system::error_code, std::optional<call_event>)>;

/// The producer's side of a call, shared between the http_client and the consumer.
class call_channel {
 public:
  explicit call_channel(boost::asio::any_io_executor ex) : executor_(std::move(ex)) {}

  /// Queues an event without waking the consumer (the producer calls notify() once it holds no
  /// lock of its own: the consumer may be resumed inside notify()). Dropped once the consumer is
  /// gone.
  void enqueue(call_event ev);
  /// Hands the oldest queued event to the parked consumer, if one waits: resumed inline when
  /// `inline_ok` and the caller runs on the consumer's executor, else posted there.
  void notify(bool inline_ok = true);
  /// enqueue() then notify().
  void push(call_event ev);
  /// Flow control. Bytes of data events queued and not yet taken by the consumer.
  std::size_t queued_bytes() const;
  /// The producer stopped reading (its queue reached its high-water mark): `resume` is called
  /// once, with no lock of the channel held, when the queue has been taken below `low` bytes. It
  /// may run inside a consumer's next() or a producer's notify(), so it must only post.
  /// Replaces an earlier one that has not run. Never called once the consumer is gone.
  void resume_below(std::size_t low, std::function<void()> resume);
  /// Set by the producer: how to abort the transfer (called at most once, by request_cancel()).
  void set_canceller(std::function<void()> fn);
  /// Asks the producer to abort; idempotent.
  void request_cancel();
  bool cancel_requested() const;
  const boost::asio::any_io_executor& executor() const { return executor_; }

 private:
  friend class upstream_call;
  struct idle_wait;
  struct cancel_parked;
  /// The parked next()'s cancellation: completes it with operation_aborted (posted).
  void abort_wait();
  /// Completes the parked waiter with `ev` (nullopt: idle), inline (when `inline_ok` and the
  /// caller runs on the consumer's executor) or posted; `lock` holds mu_ and is released.
  void complete(std::unique_lock<std::mutex>& lock, std::optional<call_event> ev, bool inline_ok = true);

  /// Takes the oldest queued event (mu_ held; the queue is not empty); moves the resume callback
  /// into `resume` when the queue fell below its low-water mark.
  call_event pop_locked(std::function<void()>& resume);

  mutable std::mutex mu_;
  std::deque<call_event> queue_;
  std::size_t queued_bytes_ = 0;
  std::size_t resume_low_ = 0;
  std::function<void()> resume_;  ///< the paused producer's, until the queue falls below resume_low_
  call_waiter waiter_;   ///< the parked next(), if any
  std::chrono::steady_clock::time_point deadline_;  ///< of the parked next()
  std::chrono::steady_clock::time_point timer_expiry_;
  bool timer_pending_ = false;  ///< an idle_wait of generation timer_gen_ is outstanding
  std::uint64_t timer_gen_ = 0;
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
  /// The next event if one has arrived already; never waits.
  std::optional<call_event> try_next();

  /// Asks the producer to abort the transfer; thread-safe, idempotent.
  void cancel() { channel_->request_cancel(); }
  bool cancel_requested() const { return channel_->cancel_requested(); }

  const std::shared_ptr<call_channel>& channel() const { return channel_; }

  /// The upstream's lease (upstream::lease()), held as long as this call lives, so a model swap
  /// waits for it; set by chat_service when it starts the call.
  std::shared_ptr<void> lease;

 private:
  friend class call_channel;
  /// next()'s initiation: parks `waiter` until an event, the deadline or a cancellation.
  void park(call_waiter waiter, std::chrono::steady_clock::time_point deadline);
  /// (Re-)arms the idle timer for the parked waiter; mu_ held.
  void arm_timer_locked();
  void on_timer(std::uint64_t gen);

  std::shared_ptr<call_channel> channel_;
  boost::asio::steady_timer timer_;
};

}  // namespace warden::engine
