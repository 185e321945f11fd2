#include "common/blocking_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace warden {
namespace {

namespace asio = boost::asio;

/// Runs `coro` on a fresh io_context driven by the calling thread and returns its value.
template <class T>
T run_on_io(asio::awaitable<T> coro) {
  asio::io_context ioc;
  auto fut = asio::co_spawn(ioc, std::move(coro), asio::use_future);
  ioc.run();
  return fut.get();
}

TEST(BlockingPool, RunsOnAnotherThreadAndResumesOnTheIoThread) {
  blocking_pool pool(2);
  const auto io_thread = std::this_thread::get_id();
  std::thread::id f_thread, resumed_thread;
  run_on_io([&]() -> asio::awaitable<int> {
    co_await pool.run_blocking([&] { f_thread = std::this_thread::get_id(); });
    resumed_thread = std::this_thread::get_id();
    co_return 0;
  }());
  EXPECT_NE(f_thread, io_thread);
  EXPECT_NE(f_thread, std::thread::id{});
  EXPECT_EQ(resumed_thread, io_thread);
}

TEST(BlockingPool, ReturnsValuesIncludingMoveOnlyOnes) {
  blocking_pool pool;
  const std::string s = run_on_io([&]() -> asio::awaitable<std::string> {
    co_return co_await pool.run_blocking([] { return std::string(1000, 'x'); });
  }());
  EXPECT_EQ(s, std::string(1000, 'x'));
  const int v = run_on_io([&]() -> asio::awaitable<int> {
    auto p = co_await pool.run_blocking([] { return std::make_unique<int>(42); });
    co_return *p;
  }());
  EXPECT_EQ(v, 42);
}

TEST(BlockingPool, VoidFunctionRuns) {
  blocking_pool pool;
  std::atomic<int> ran{0};
  run_on_io([&]() -> asio::awaitable<int> {
    co_await pool.run_blocking([&] { ran.fetch_add(1); });
    co_await pool.run_blocking([&] { ran.fetch_add(1); });
    co_return 0;
  }());
  EXPECT_EQ(ran.load(), 2);
}

TEST(BlockingPool, ExceptionReachesTheAwaitingCoroutine) {
  blocking_pool pool;
  const auto io_thread = std::this_thread::get_id();
  std::thread::id caught_on;
  const std::string what = run_on_io([&]() -> asio::awaitable<std::string> {
    try {
      co_await pool.run_blocking([]() -> int { throw std::invalid_argument("bad input"); });
    } catch (const std::invalid_argument& e) {
      caught_on = std::this_thread::get_id();
      co_return e.what();
    }
    co_return "no exception";
  }());
  EXPECT_EQ(what, "bad input");
  EXPECT_EQ(caught_on, io_thread);
}

TEST(BlockingPool, HundredConcurrentCallsAllComplete) {
  blocking_pool pool(4);
  asio::io_context ioc;
  const auto io_thread = std::this_thread::get_id();
  std::vector<int> got(100, -1);
  std::atomic<int> wrong_thread{0};
  for (int i = 0; i < 100; ++i) {
    asio::co_spawn(
        ioc,
        [&, i]() -> asio::awaitable<void> {
          const int v = co_await pool.run_blocking([i] {
            std::this_thread::sleep_for(std::chrono::milliseconds(i % 3));
            return i * 7;
          });
          if (std::this_thread::get_id() != io_thread) wrong_thread.fetch_add(1);
          got[static_cast<std::size_t>(i)] = v;
        },
        asio::detached);
  }
  ioc.run();  // returns only once every call resumed: pending calls count as work
  for (int i = 0; i < 100; ++i) EXPECT_EQ(got[static_cast<std::size_t>(i)], i * 7) << i;
  EXPECT_EQ(wrong_thread.load(), 0);
}

TEST(BlockingPool, RunAfterStopThrowsWithoutRunningF) {
  blocking_pool pool(1);
  pool.stop();
  pool.stop();  // idempotent
  bool ran = false;
  const std::string what = run_on_io([&]() -> asio::awaitable<std::string> {
    try {
      co_await pool.run_blocking([&] { ran = true; });
    } catch (const std::runtime_error& e) {
      co_return e.what();
    }
    co_return "";
  }());
  EXPECT_FALSE(ran);
  EXPECT_NE(what.find("stop"), std::string::npos) << what;
}

TEST(BlockingPool, StopLetsQueuedWorkFinish) {
  asio::io_context ioc;
  std::atomic<int> done{0};
  {
    blocking_pool pool(1);
    for (int i = 0; i < 5; ++i) {
      asio::co_spawn(
          ioc,
          [&]() -> asio::awaitable<void> {
            co_await pool.run_blocking([&] {
              std::this_thread::sleep_for(std::chrono::milliseconds(5));
              done.fetch_add(1);
            });
          },
          asio::detached);
    }
    ioc.poll();  // starts the coroutines: all five jobs are queued
    pool.stop();
    EXPECT_EQ(done.load(), 5);
  }
  ioc.run();  // the completions were posted before stop() returned
}

}  // namespace
}  // namespace warden
