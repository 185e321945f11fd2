#include "engine/upstream_call.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

namespace warden::engine {

namespace asio = boost::asio;

std::shared_ptr<upstream_call> upstream_call::make(asio::any_io_executor ex) {
  auto ch = std::make_shared<call_channel>(ex);
  auto call = std::make_shared<upstream_call>(ch, std::move(ex));
  std::lock_guard lock(ch->mu_);
  ch->consumer_ = call;
  return call;
}

upstream_call::~upstream_call() {
  std::lock_guard lock(channel_->mu_);
  channel_->closed_ = true;
  channel_->waiting_ = false;
  channel_->queue_.clear();
  // The channel may outlive the io_context (the http_client thread still holds it): drop its
  // reference to the strand now, while the io_context's services still exist.
  channel_->executor_ = boost::asio::any_io_executor();
}

asio::awaitable<std::optional<call_event>> upstream_call::next(std::chrono::milliseconds idle) {
  const auto deadline = std::chrono::steady_clock::now() + idle;
  call_channel& ch = *channel_;
  while (true) {
    {
      std::lock_guard lock(ch.mu_);
      if (!ch.queue_.empty()) {
        call_event ev = std::move(ch.queue_.front());
        ch.queue_.pop_front();
        co_return ev;
      }
      ch.waiting_ = true;
    }
    timer_.expires_at(deadline);
    auto [ec] = co_await timer_.async_wait(asio::as_tuple(asio::use_awaitable));
    {
      std::lock_guard lock(ch.mu_);
      ch.waiting_ = false;
      if (!ch.queue_.empty()) {
        call_event ev = std::move(ch.queue_.front());
        ch.queue_.pop_front();
        co_return ev;
      }
    }
    if (!ec) co_return std::nullopt;  // idle timeout
    // Aborted: either a stale wake-up from push() (loop again) or a cancellation of this
    // coroutine (propagate).
    asio::cancellation_state cs = co_await asio::this_coro::cancellation_state;
    if (cs.cancelled() != asio::cancellation_type::none) {
      throw boost::system::system_error(asio::error::operation_aborted);
    }
    if (std::chrono::steady_clock::now() >= deadline) co_return std::nullopt;
  }
}

void call_channel::push(call_event ev) {
  std::lock_guard lock(mu_);
  if (closed_) return;
  queue_.push_back(std::move(ev));
  if (waiting_) {
    waiting_ = false;
    // Posted under the lock: the consumer cannot finish destruction (and its io_context cannot
    // go away under a waiting coroutine) while we post.
    asio::post(executor_, [weak = consumer_] {
      if (auto c = weak.lock()) c->timer_.cancel();
    });
  }
}

void call_channel::request_cancel() {
  std::function<void()> fn;
  {
    std::lock_guard lock(mu_);
    if (cancel_requested_) return;
    cancel_requested_ = true;
    fn = std::move(canceller_);
  }
  if (fn) fn();
}

bool call_channel::cancel_requested() const {
  std::lock_guard lock(mu_);
  return cancel_requested_;
}

void call_channel::set_canceller(std::function<void()> fn) {
  {
    std::lock_guard lock(mu_);
    if (!cancel_requested_) {
      canceller_ = std::move(fn);
      return;
    }
  }
  if (fn) fn();
}

}  // namespace warden::engine
