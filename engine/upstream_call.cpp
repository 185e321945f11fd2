#include "engine/upstream_call.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

namespace warden::engine {

namespace asio = boost::asio;

asio::awaitable<std::optional<call_event>> upstream_call::next(std::chrono::milliseconds idle) {
  const auto deadline = std::chrono::steady_clock::now() + idle;
  while (true) {
    {
      std::lock_guard lock(mu_);
      if (!queue_.empty()) {
        call_event ev = std::move(queue_.front());
        queue_.pop_front();
        co_return ev;
      }
      waiting_ = true;
    }
    timer_.expires_at(deadline);
    auto [ec] = co_await timer_.async_wait(asio::as_tuple(asio::use_awaitable));
    {
      std::lock_guard lock(mu_);
      waiting_ = false;
      if (!queue_.empty()) {
        call_event ev = std::move(queue_.front());
        queue_.pop_front();
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

void upstream_call::push(call_event ev) {
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    queue_.push_back(std::move(ev));
    wake = waiting_;
    waiting_ = false;
  }
  if (wake) {
    asio::post(timer_.get_executor(), [self = shared_from_this()] { self->timer_.cancel(); });
  }
}

void upstream_call::cancel() {
  std::function<void()> fn;
  {
    std::lock_guard lock(mu_);
    if (cancel_requested_) return;
    cancel_requested_ = true;
    fn = std::move(canceller_);
  }
  if (fn) fn();
}

bool upstream_call::cancel_requested() const {
  std::lock_guard lock(mu_);
  return cancel_requested_;
}

void upstream_call::set_canceller(std::function<void()> fn) {
  bool already = false;
  {
    std::lock_guard lock(mu_);
    if (cancel_requested_) already = true;
    else canceller_ = std::move(fn);
  }
  if (already && fn) fn();
}

}  // namespace warden::engine
