#include "engine/admission_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <thread>

#include "engine/testing/scripted_backend.h"

namespace warden::engine {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

std::shared_ptr<admission_queue> make_queue(int slots, int max_queue = 0, int per_key = 0,
                                            std::chrono::milliseconds timeout = 0ms,
                                            std::chrono::milliseconds tick = 5000ms) {
  admission_options o;
  o.engine = "test-engine";
  o.slots = [slots] { return slots; };
  o.max_queue = max_queue;
  o.per_key_queue = per_key;
  o.timeout = timeout;
  o.tick = tick;
  return std::make_shared<admission_queue>(o);
}

/// One queued request as the tests drive it: acquires, records the outcome, then holds the slot
/// until release() (or at once when hold is false).
struct request {
  std::string key;
  bool resumed = false;
  std::optional<result<admission_queue::slot>> outcome;
  int order = -1;  ///< when it got its slot, among the requests of a test
  void release() {
    if (outcome && *outcome) (*outcome)->reset();
  }
};

void start(asio::io_context& ioc, std::shared_ptr<admission_queue> q, request& r, std::atomic<int>& granted,
           std::function<asio::awaitable<bool>()> keep_alive = nullptr, std::shared_ptr<cancel_token> cancel = nullptr) {
  asio::co_spawn(
      ioc,
      [q, &r, &granted, keep_alive, cancel]() -> asio::awaitable<void> {
        auto got = co_await q->acquire(r.key, r.resumed, keep_alive, cancel);
        if (got) r.order = granted++;
        r.outcome = std::move(got);
      },
      asio::detached);
}

void settle(asio::io_context& ioc) {
  ioc.restart();
  ioc.poll();
}

TEST(AdmissionQueue, GrantsAtOnceUnderTheSlotsAndQueuesPastThem) {
  asio::io_context ioc;
  auto q = make_queue(2);
  std::atomic<int> n{0};
  request a, b, c;
  start(ioc, q, a, n);
  start(ioc, q, b, n);
  start(ioc, q, c, n);
  settle(ioc);
  ASSERT_TRUE(a.outcome && *a.outcome);
  ASSERT_TRUE(b.outcome && *b.outcome);
  EXPECT_FALSE(c.outcome);  // waiting
  auto s = q->snapshot();
  EXPECT_EQ(s.slots, 2);
  EXPECT_EQ(s.busy, 2);
  EXPECT_EQ(s.waiting, 1);
  EXPECT_EQ(s.max_queue, 64);  // max(64, 16 × 2)
  a.release();
  settle(ioc);
  ASSERT_TRUE(c.outcome && *c.outcome);
  EXPECT_EQ(q->snapshot().busy, 2);
  b.release();
  c.release();
  EXPECT_EQ(q->snapshot().busy, 0);
}

TEST(AdmissionQueue, DefaultQueueLengthIsSixteenPerSlotWithAFloorOf64) {
  EXPECT_EQ(make_queue(1)->snapshot().max_queue, 64);
  EXPECT_EQ(make_queue(4)->snapshot().max_queue, 64);
  EXPECT_EQ(make_queue(5)->snapshot().max_queue, 80);
  EXPECT_EQ(make_queue(1, 7)->snapshot().max_queue, 7);
}

TEST(AdmissionQueue, FirstComeFirstServedWithinAKey) {
  asio::io_context ioc;
  auto q = make_queue(1);
  std::atomic<int> n{0};
  std::vector<request> rs(6);
  for (auto& r : rs) start(ioc, q, r, n);
  settle(ioc);
  for (std::size_t i = 0; i < rs.size(); ++i) {
    ASSERT_TRUE(rs[i].outcome) << i;
    EXPECT_EQ(rs[i].order, static_cast<int>(i));
    rs[i].release();
    settle(ioc);
  }
}

TEST(AdmissionQueue, AFullQueueRefusesWith429QueueFull) {
  asio::io_context ioc;
  auto q = make_queue(1, 3);
  std::atomic<int> n{0};
  std::vector<request> rs(6);
  for (auto& r : rs) start(ioc, q, r, n);
  settle(ioc);
  EXPECT_TRUE(rs[0].outcome && *rs[0].outcome);
  for (int i = 1; i <= 3; ++i) EXPECT_FALSE(rs[i].outcome) << i;  // queued
  for (int i = 4; i <= 5; ++i) {
    ASSERT_TRUE(rs[i].outcome) << i;
    ASSERT_FALSE(*rs[i].outcome);
    EXPECT_EQ(rs[i].outcome->error().code, errc::too_many_requests);
    EXPECT_EQ(rs[i].outcome->error().type_code, "queue_full");
    EXPECT_NE(rs[i].outcome->error().message.find("3 requests are waiting for its 1 slot"), std::string::npos)
        << rs[i].outcome->error().message;
  }
  EXPECT_GE(q->retry_after_s(), 1);
  EXPECT_LE(q->retry_after_s(), 60);
  for (auto& r : rs) {
    r.release();
    settle(ioc);
  }
  EXPECT_EQ(q->snapshot().busy, 0);
  EXPECT_EQ(q->snapshot().waiting, 0);
}

TEST(AdmissionQueue, ANamedKeyHoldsAtMostItsShareSoAnotherKeyStillQueues) {
  asio::io_context ioc;
  auto q = make_queue(1, 8);  // per key: half = 4
  std::atomic<int> n{0};
  std::vector<request> flood(10);
  for (auto& r : flood) {
    r.key = "flood";
    start(ioc, q, r, n);
  }
  request other;
  other.key = "other";
  start(ioc, q, other, n);
  settle(ioc);
  int refused = 0;
  for (auto& r : flood) {
    if (r.outcome && !*r.outcome) {
      EXPECT_EQ(r.outcome->error().type_code, "queue_full_for_key");
      ++refused;
    }
  }
  EXPECT_EQ(refused, 5);  // 1 running, 4 waiting
  EXPECT_FALSE(other.outcome);  // waiting, not refused
  // The slot frees: the other key goes next, ahead of the flood's older requests.
  flood[0].release();
  settle(ioc);
  ASSERT_TRUE(other.outcome && *other.outcome);
  EXPECT_EQ(other.order, 1);
  other.release();
  settle(ioc);
  for (auto& r : flood) {
    r.release();
    settle(ioc);
  }
  EXPECT_EQ(q->snapshot().waiting, 0);
}

TEST(AdmissionQueue, SingleUserHasNoPerKeyCap) {
  asio::io_context ioc;
  auto q = make_queue(1, 8);
  std::atomic<int> n{0};
  std::vector<request> rs(12);
  for (auto& r : rs) start(ioc, q, r, n);
  settle(ioc);
  int waiting = 0;
  for (auto& r : rs) waiting += r.outcome ? 0 : 1;
  EXPECT_EQ(waiting, 8);
  for (auto& r : rs) {
    r.release();
    settle(ioc);
  }
}

TEST(AdmissionQueue, KeysAlternateWhenBothWait) {
  asio::io_context ioc;
  auto q = make_queue(1, 64, 64);
  std::atomic<int> n{0};
  std::vector<request> a(4), b(2);
  for (auto& r : a) {
    r.key = "a";
    start(ioc, q, r, n);
  }
  for (auto& r : b) {
    r.key = "b";
    start(ioc, q, r, n);
  }
  settle(ioc);
  std::vector<std::string> served;
  for (int i = 0; i < 6; ++i) {
    for (auto* r : {&a[0], &a[1], &a[2], &a[3], &b[0], &b[1]}) {
      if (r->order == i) {
        served.push_back(r->key);
        r->release();
      }
    }
    settle(ioc);
  }
  EXPECT_EQ(served, (std::vector<std::string>{"a", "b", "a", "b", "a", "a"}));
}

TEST(AdmissionQueue, AResumedTurnGoesAheadAndPastTheCaps) {
  asio::io_context ioc;
  auto q = make_queue(1, 2);
  std::atomic<int> n{0};
  std::vector<request> rs(3);
  for (auto& r : rs) start(ioc, q, r, n);
  settle(ioc);  // 1 running, 2 waiting: full
  request resumed;
  resumed.resumed = true;
  start(ioc, q, resumed, n);
  settle(ioc);
  EXPECT_FALSE(resumed.outcome);  // waiting, not refused
  rs[0].release();
  settle(ioc);
  ASSERT_TRUE(resumed.outcome && *resumed.outcome);
  EXPECT_EQ(resumed.order, 1);
  resumed.release();
  settle(ioc);
  rs[1].release();
  settle(ioc);
  rs[2].release();
  EXPECT_EQ(q->snapshot().busy, 0);
}

TEST(AdmissionQueue, KeepAliveRunsWhileWaitingAndAGoneClientLeavesTheQueue) {
  asio::io_context ioc;
  auto q = make_queue(1, 0, 0, 0ms, 20ms);
  std::atomic<int> n{0};
  request holder, waiter;
  start(ioc, q, holder, n);
  int pings = 0;
  auto keep_alive = [&pings]() -> asio::awaitable<bool> { co_return ++pings < 3; };
  start(ioc, q, waiter, n, keep_alive);
  ioc.run_for(1s);
  ASSERT_TRUE(waiter.outcome);
  ASSERT_FALSE(*waiter.outcome);
  EXPECT_EQ(waiter.outcome->error().code, errc::cancelled);
  EXPECT_EQ(pings, 3);
  EXPECT_EQ(q->snapshot().waiting, 0);
  holder.release();
  EXPECT_EQ(q->snapshot().busy, 0);
}

TEST(AdmissionQueue, TimeoutAnswers503QueueTimeout) {
  asio::io_context ioc;
  auto q = make_queue(1, 0, 0, 50ms, 10ms);
  std::atomic<int> n{0};
  request holder, waiter;
  start(ioc, q, holder, n);
  int pings = 0;
  start(ioc, q, waiter, n, [&pings]() -> asio::awaitable<bool> {
    ++pings;
    co_return true;
  });
  ioc.run_for(1s);
  ASSERT_TRUE(waiter.outcome);
  ASSERT_FALSE(*waiter.outcome);
  EXPECT_EQ(waiter.outcome->error().code, errc::upstream_unavailable);
  EXPECT_EQ(waiter.outcome->error().type_code, "queue_timeout");
  EXPECT_GE(pings, 2);
  EXPECT_EQ(q->snapshot().waiting, 0);
  holder.release();
}

TEST(AdmissionQueue, AResumedTurnIsNeverTimedOut) {
  asio::io_context ioc;
  auto q = make_queue(1, 0, 0, 30ms, 10ms);
  std::atomic<int> n{0};
  request holder, fresh, resumed;
  resumed.resumed = true;
  start(ioc, q, holder, n);
  start(ioc, q, fresh, n);
  start(ioc, q, resumed, n);
  ioc.run_for(200ms);
  ASSERT_TRUE(fresh.outcome);
  EXPECT_EQ(fresh.outcome->error().type_code, "queue_timeout");
  EXPECT_FALSE(resumed.outcome);  // still waiting: its tools may have run
  holder.release();
  ioc.run_for(50ms);
  ASSERT_TRUE(resumed.outcome && *resumed.outcome);
  resumed.release();
  EXPECT_EQ(q->snapshot().busy, 0);
}

TEST(AdmissionQueue, ACancelledTokenEndsTheWait) {
  asio::io_context ioc;
  auto q = make_queue(1);
  std::atomic<int> n{0};
  request holder, waiter;
  start(ioc, q, holder, n);
  auto token = std::make_shared<cancel_token>();
  start(ioc, q, waiter, n, nullptr, token);
  settle(ioc);
  EXPECT_FALSE(waiter.outcome);
  token->cancel(cancel_reason::by_request);
  settle(ioc);
  ASSERT_TRUE(waiter.outcome);
  ASSERT_FALSE(*waiter.outcome);
  EXPECT_EQ(waiter.outcome->error().code, errc::cancelled);
  EXPECT_EQ(q->snapshot().waiting, 0);
  holder.release();
  EXPECT_EQ(q->snapshot().busy, 0);
}

TEST(AdmissionQueue, AWaiterWhoseCoroutineIsDestroyedGivesUpItsPlace) {
  auto q = make_queue(1);
  request holder, gone, next;
  {
    asio::io_context ioc;
    std::atomic<int> n{0};
    start(ioc, q, holder, n);
    start(ioc, q, gone, n);
    settle(ioc);
    EXPECT_EQ(q->snapshot().waiting, 1);
  }  // the io_context goes, and with it the parked coroutine
  EXPECT_EQ(q->snapshot().waiting, 0);
  asio::io_context ioc;
  std::atomic<int> n{0};
  start(ioc, q, next, n);
  settle(ioc);
  EXPECT_FALSE(next.outcome);
  holder.release();  // must reach `next`, not the destroyed waiter
  settle(ioc);
  ASSERT_TRUE(next.outcome && *next.outcome);
  next.release();
  EXPECT_EQ(q->snapshot().busy, 0);
}

TEST(AdmissionQueue, ManyThreadsNeverHoldMoreThanTheSlots) {
  asio::io_context ioc;
  auto q = make_queue(3, 1000);
  std::atomic<int> in_use{0}, most{0}, done{0};
  constexpr int k_requests = 300;
  for (int i = 0; i < k_requests; ++i) {
    asio::co_spawn(
        asio::make_strand(ioc),
        [&, i]() -> asio::awaitable<void> {
          auto got = co_await q->acquire(i % 2 ? "a" : "b", false, nullptr, nullptr);
          EXPECT_TRUE(got);
          const int now = ++in_use;
          int seen = most.load();
          while (now > seen && !most.compare_exchange_weak(seen, now)) {
          }
          asio::steady_timer t(co_await asio::this_coro::executor, std::chrono::microseconds(200));
          co_await t.async_wait(asio::use_awaitable);
          --in_use;
          got->reset();
          ++done;
        },
        asio::detached);
  }
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back([&] { ioc.run(); });
  for (auto& t : threads) t.join();
  EXPECT_EQ(done.load(), k_requests);
  EXPECT_LE(most.load(), 3);
  EXPECT_EQ(q->snapshot().busy, 0);
  EXPECT_EQ(q->snapshot().waiting, 0);
}

TEST(AdmittingBackend, HoldsASlotForEachTurnUntilItsAnswerEnds) {
  testing::scripted_backend inner;
  inner.events = {model::text_delta{"hi"}};
  auto q = make_queue(1);
  int refused_with = 0;
  admitting_backend b(inner, q, "k", [&refused_with](int s) { refused_with = s; });
  asio::io_context ioc;
  asio::co_spawn(
      ioc,
      [&]() -> asio::awaitable<void> {
        const model::chat_request req;  // named: no temporaries in a co_await (GCC 12)
        for (int turn = 0; turn < 2; ++turn) {
          auto t = co_await b.open_turn(req, nullptr, nullptr);
          EXPECT_TRUE(t);
          EXPECT_EQ(q->snapshot().busy, 1);
          while (auto ev = co_await (*t)->next()) {
          }
          EXPECT_EQ(q->snapshot().busy, 0);  // given back at the end of the answer
        }
      },
      asio::detached);
  ioc.run();
  EXPECT_EQ(inner.seen.size(), 2u);
  EXPECT_EQ(refused_with, 0);
}

TEST(AdmittingBackend, TellsTheRetryAfterWhenRefused) {
  testing::scripted_backend inner;
  auto q = make_queue(1, 1);
  asio::io_context ioc;
  std::atomic<int> n{0};
  request holder, waiting;
  start(ioc, q, holder, n);
  start(ioc, q, waiting, n);
  settle(ioc);
  int refused_with = 0;
  admitting_backend b(inner, q, "", [&refused_with](int s) { refused_with = s; });
  std::optional<error> failure;
  asio::co_spawn(
      ioc,
      [&]() -> asio::awaitable<void> {
        const model::chat_request req;
        auto t = co_await b.open_turn(req, nullptr, nullptr);
        if (!t) failure = t.error();
      },
      asio::detached);
  settle(ioc);
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->code, errc::too_many_requests);
  EXPECT_GE(refused_with, 1);
  EXPECT_TRUE(inner.seen.empty());
  holder.release();
  settle(ioc);
  waiting.release();
}

}  // namespace
}  // namespace warden::engine
