#include "engine/upstream_call.h"

#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace warden::engine {

namespace asio = boost::asio;

namespace {

/// True when a handler may run right here for `ex`: the caller already runs on that strand, or
/// on a thread of that io_context (the parked coroutine is suspended, so nothing else runs it).
/// Executors of other kinds are never assumed to be here.
bool runs_here(const asio::any_io_executor& ex) {
  using plain = asio::io_context::executor_type;
  if (const auto* s = ex.target<asio::strand<plain>>()) return s->running_in_this_thread();
  if (const auto* e = ex.target<plain>()) return e->running_in_this_thread();
  return false;
}

/// Completes a parked next() on the consumer's executor (the caller is there).
void finish_waiter(call_waiter h, boost::system::error_code ec, std::optional<call_event> ev) {
  h.get_cancellation_slot().clear();
  std::move(h)(ec, std::move(ev));
}

}  // namespace

/// The cancellation slot's handler of a parked next(): completes it with operation_aborted.
struct call_channel::cancel_parked {
  std::weak_ptr<call_channel> channel;
  void operator()(asio::cancellation_type type) {
    if (type == asio::cancellation_type::none) return;
    if (auto ch = channel.lock()) ch->abort_wait();
  }
};

/// The handler of the idle timer's wait. Invoked: the idle deadline may have passed. Destroyed
/// without being invoked (its io_context is being destroyed): destroys the parked waiter with it,
/// as asio destroys its own pending operations, so that the coroutine's frame does not outlive
/// its io_context (a reference cycle through the channel otherwise).
struct call_channel::idle_wait {
  std::weak_ptr<upstream_call> call;
  std::weak_ptr<call_channel> channel;  ///< empty once invoked or moved from
  std::uint64_t gen = 0;

  idle_wait(std::weak_ptr<upstream_call> c, std::weak_ptr<call_channel> ch, std::uint64_t g)
      : call(std::move(c)), channel(std::move(ch)), gen(g) {}
  idle_wait(idle_wait&& o) noexcept : call(std::move(o.call)), channel(std::move(o.channel)), gen(o.gen) {}
  idle_wait(const idle_wait&) = delete;
  idle_wait& operator=(const idle_wait&) = delete;
  idle_wait& operator=(idle_wait&&) = delete;
  ~idle_wait() {
    auto ch = channel.lock();
    if (!ch) return;
    call_waiter orphan;
    {
      std::lock_guard lock(ch->mu_);
      if (gen != ch->timer_gen_) return;  // a newer wait guards the waiter
      ch->timer_pending_ = false;
      orphan.swap(ch->waiter_);
    }
  }
  void operator()(boost::system::error_code) {
    channel.reset();  // invoked: nothing to reap
    if (auto c = call.lock()) c->on_timer(gen);
  }
};

std::shared_ptr<upstream_call> upstream_call::make(asio::any_io_executor ex) {
  auto ch = std::make_shared<call_channel>(ex);
  auto call = std::make_shared<upstream_call>(ch, std::move(ex));
  std::lock_guard lock(ch->mu_);
  ch->consumer_ = call;
  return call;
}

upstream_call::~upstream_call() {
  call_waiter orphan;
  std::lock_guard lock(channel_->mu_);
  channel_->closed_ = true;
  channel_->queue_.clear();
  channel_->queued_bytes_ = 0;
  channel_->resume_ = nullptr;
  channel_->timer_pending_ = false;
  ++channel_->timer_gen_;
  orphan.swap(channel_->waiter_);
  // The channel may outlive the io_context (the http_client still holds it): drop its
  // reference to the strand now, while the io_context's services still exist.
  channel_->executor_ = boost::asio::any_io_executor();
}

call_event call_channel::pop_locked(std::function<void()>& resume) {
  call_event ev = std::move(queue_.front());
  queue_.pop_front();
  queued_bytes_ -= ev.bytes.size();
  if (resume_ && queued_bytes_ < resume_low_) resume.swap(resume_);
  return ev;
}

std::size_t call_channel::queued_bytes() const {
  std::lock_guard lock(mu_);
  return queued_bytes_;
}

void call_channel::resume_below(std::size_t low, std::function<void()> resume) {
  {
    std::lock_guard lock(mu_);
    if (closed_) return;
    if (queued_bytes_ >= low) {
      resume_low_ = low;
      resume_.swap(resume);
      return;
    }
  }
  resume();  // taken below the mark meanwhile
}

std::optional<call_event> upstream_call::try_next() {
  std::function<void()> resume;
  std::optional<call_event> ev;
  {
    std::lock_guard lock(channel_->mu_);
    if (channel_->queue_.empty()) return std::nullopt;
    ev = channel_->pop_locked(resume);
  }
  if (resume) resume();
  return ev;
}

asio::awaitable<std::optional<call_event>> upstream_call::next(std::chrono::milliseconds idle) {
  const auto deadline = std::chrono::steady_clock::now() + idle;
  if (auto ev = try_next()) co_return ev;
  co_return co_await asio::async_initiate<const asio::use_awaitable_t<>&,
                                          void(boost::system::error_code, std::optional<call_event>)>(
      [this, deadline](auto handler) { park(call_waiter(std::move(handler)), deadline); }, asio::use_awaitable);
}

void upstream_call::park(call_waiter waiter, std::chrono::steady_clock::time_point deadline) {
  call_channel& ch = *channel_;
  std::unique_lock lock(ch.mu_);
  if (!ch.queue_.empty()) {  // an event came between next()'s check and now
    std::function<void()> resume;
    call_event ev = ch.pop_locked(resume);
    asio::post(ch.executor_, [h = std::move(waiter), ev = std::move(ev)]() mutable {
      finish_waiter(std::move(h), {}, std::move(ev));
    });
    lock.unlock();
    if (resume) resume();
    return;
  }
  asio::cancellation_slot slot = waiter.get_cancellation_slot();
  if (slot.is_connected()) slot.template emplace<call_channel::cancel_parked>(call_channel::cancel_parked{channel_});
  ch.waiter_.swap(waiter);  // (Boost 1.81's move assignment of any_completion_handler is broken)
  ch.deadline_ = deadline;
  arm_timer_locked();
}

void upstream_call::arm_timer_locked() {
  call_channel& ch = *channel_;
  if (ch.timer_pending_ && ch.timer_expiry_ <= ch.deadline_) return;  // fires first; re-armed then
  const std::uint64_t gen = ++ch.timer_gen_;
  ch.timer_pending_ = true;
  ch.timer_expiry_ = ch.deadline_;
  timer_.expires_at(ch.deadline_);  // aborts an older wait, whose generation is stale
  timer_.async_wait(call_channel::idle_wait(weak_from_this(), channel_, gen));
}

void upstream_call::on_timer(std::uint64_t gen) {
  call_channel& ch = *channel_;
  std::unique_lock lock(ch.mu_);
  if (gen != ch.timer_gen_) return;  // superseded
  ch.timer_pending_ = false;
  if (!ch.waiter_) return;  // nobody waits now: the next park() arms it again
  if (std::chrono::steady_clock::now() < ch.deadline_) {
    arm_timer_locked();
    return;
  }
  ch.complete(lock, std::nullopt);
}

void call_channel::complete(std::unique_lock<std::mutex>& lock, std::optional<call_event> ev, bool inline_ok) {
  call_waiter h = std::move(waiter_);
  if (inline_ok && runs_here(executor_)) {
    lock.unlock();
    finish_waiter(std::move(h), {}, std::move(ev));
    return;
  }
  // Posted under the lock: while a waiter is parked an idle wait is pending on the consumer's
  // io_context, so that io_context cannot go away while we post.
  asio::post(executor_, [h = std::move(h), ev = std::move(ev)]() mutable {
    finish_waiter(std::move(h), {}, std::move(ev));
  });
  lock.unlock();
}

void call_channel::abort_wait() {
  std::unique_lock lock(mu_);
  if (!waiter_) return;
  asio::post(executor_, [h = std::move(waiter_)]() mutable {
    finish_waiter(std::move(h), asio::error::operation_aborted, std::nullopt);
  });
}

void call_channel::enqueue(call_event ev) {
  std::lock_guard lock(mu_);
  if (closed_) return;
  queued_bytes_ += ev.bytes.size();
  queue_.push_back(std::move(ev));
}

void call_channel::notify(bool inline_ok) {
  std::unique_lock lock(mu_);
  if (!waiter_ || queue_.empty()) return;
  std::function<void()> resume;  // posts (resume_below), so it may run under the producer's lock
  call_event ev = pop_locked(resume);
  complete(lock, std::move(ev), inline_ok);
  if (resume) resume();
}

void call_channel::push(call_event ev) {
  std::unique_lock lock(mu_);
  if (closed_) return;
  if (waiter_ && queue_.empty()) {
    complete(lock, std::move(ev));
    return;
  }
  queued_bytes_ += ev.bytes.size();
  queue_.push_back(std::move(ev));
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
