// warden::blocking_pool — a few threads for blocking work, so io threads never block.
//
// Coroutines on the io threads hand blocking calls (process spawn preparation, file work,
// SQLite) to run_blocking(): f() runs on a pool thread, and the awaiting coroutine resumes on
// its own executor (never on a pool thread) with f's value, or with f's exception rethrown.
// While f runs, the caller's executor counts outstanding work, so its io_context::run() does not
// return early.
//
//   blocking_pool pool(2);
//   auto count = [&] { return count_rows(); };   // named: GCC 12 double-destroys a capturing
//   int n = co_await pool.run_blocking(count);   // lambda temporary inside a co_await

//
// Lifetime: stop() (or the destructor) lets queued work finish, then joins the threads; every
// completion is posted to its caller's executor before stop() returns. Stop the pool before the
// io_contexts of its callers are destroyed. run_blocking() after stop() throws
// std::runtime_error in the awaiting coroutine without running f. f must not call stop().
// Errors: f's exceptions reach the awaiting coroutine unchanged.
// Thread-safety: every member may be called from any thread; stop() is idempotent.
#pragma once

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cstddef>
#include <exception>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace warden {

class blocking_pool {
 public:
  /// `threads` pool threads (at least 1).
  explicit blocking_pool(std::size_t threads = 2);
  ~blocking_pool();  ///< stops and joins
  blocking_pool(const blocking_pool&) = delete;
  blocking_pool& operator=(const blocking_pool&) = delete;

  /// Runs f() on a pool thread; the awaiting coroutine resumes on its own executor afterwards,
  /// with f's return value, or f's exception rethrown. Works for void-returning f too.
  /// f's result must not be a reference; f is moved to the pool thread.
  template <class F>
  boost::asio::awaitable<std::invoke_result_t<F>> run_blocking(F f);

  /// Queues f() on a pool thread without waiting for it (fire and forget). False, and f not run,
  /// after stop(). f must not throw (an escaping exception ends the process).
  template <class F>
  bool post(F f);

  /// Lets queued work finish and joins the threads. Idempotent.
  void stop();

 private:
  /// The pool-side job: runs f, then posts (exception, value) to the handler's executor.
  template <class Slot, class F, class Handler>
  static auto make_job(F f, Handler handler);

  std::mutex mu_;  ///< guards stopped_ against a post racing stop()
  bool stopped_ = false;
  std::once_flag joined_;
  boost::asio::thread_pool pool_;
};

template <class Slot, class F, class Handler>
auto blocking_pool::make_job(F f, Handler handler) {
  auto work = boost::asio::make_work_guard(handler);  // keeps the caller's executor busy meanwhile
  return [f = std::move(f), handler = std::move(handler), work = std::move(work)]() mutable {
    std::exception_ptr ep;
    Slot value;
    try {
      if constexpr (std::is_void_v<std::invoke_result_t<F>>) {
        f();
        value.emplace(true);
      } else {
        value.emplace(f());
      }
    } catch (...) {
      ep = std::current_exception();
    }
    boost::asio::post(work.get_executor(), [handler = std::move(handler), ep, value = std::move(value)]() mutable {
      std::move(handler)(ep, std::move(value));
    });
    work.reset();
  };
}

template <class F>
boost::asio::awaitable<std::invoke_result_t<F>> blocking_pool::run_blocking(F f) {
  namespace asio = boost::asio;
  using R = std::invoke_result_t<F>;
  static_assert(!std::is_reference_v<R>, "run_blocking: f must return a value, not a reference");
  // The value travels as optional<R>, so R needs no default constructor.
  using slot = std::conditional_t<std::is_void_v<R>, std::optional<bool>, std::optional<R>>;

  auto initiate = [this, &f](auto handler) {
    std::unique_lock lk(mu_);
    if (!stopped_) {
      asio::post(pool_, make_job<slot>(std::move(f), std::move(handler)));
      return;
    }
    lk.unlock();
    auto ex = asio::get_associated_executor(handler);
    asio::post(ex, [handler = std::move(handler)]() mutable {
      std::move(handler)(std::make_exception_ptr(std::runtime_error("blocking_pool: run_blocking after stop()")),
                         slot{});
    });
  };
  slot value = co_await asio::async_initiate<decltype(asio::use_awaitable), void(std::exception_ptr, slot)>(
      std::move(initiate), asio::use_awaitable);
  if constexpr (!std::is_void_v<R>) co_return std::move(*value);
}

/// f() on `pool`, or inline when `pool` is null (tests without a pool). `f` must be a named
/// callable (see the top of this file).
template <class F>
boost::asio::awaitable<std::invoke_result_t<F>> off_thread(blocking_pool* pool, F f) {
  if (pool) co_return co_await pool->run_blocking(std::move(f));
  co_return f();
}

template <class F>
bool blocking_pool::post(F f) {
  std::lock_guard lk(mu_);
  if (stopped_) return false;
  boost::asio::post(pool_, std::move(f));
  return true;
}

}  // namespace warden
