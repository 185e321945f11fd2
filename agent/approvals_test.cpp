#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_future.hpp>
#include <mutex>
#include <set>
#include <thread>

#include "agent/approvals.h"
#include "common/ids.h"

namespace warden::agent {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

/// Runs a waiter on an io_context thread and returns its outcome.
struct waiter_rig {
  asio::io_context ioc;
  asio::strand<asio::io_context::executor_type> strand{asio::make_strand(ioc)};
  std::optional<approval_outcome> wait(approval_registry::ticket& t, std::chrono::milliseconds slice = 10s) {
    auto fut = asio::co_spawn(
        strand,
        [&]() -> asio::awaitable<std::optional<approval_outcome>> {
          std::optional<approval_outcome> o;
          while (!(o = co_await t.wait(slice))) {
          }
          co_return o;
        },
        asio::use_future);
    ioc.restart();
    ioc.run();
    return fut.get();
  }
};

TEST(Approvals, IdsAreLongRandomAndUrlSafe) {
  std::set<std::string> seen;
  for (int i = 0; i < 2000; ++i) {
    auto id = ids::new_id(ids::kind::approval);
    ASSERT_EQ(id.size(), 22u);
    for (char c : id) ASSERT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') << id;
    ASSERT_TRUE(seen.insert(id).second);
  }
}

TEST(Approvals, AllowDenyAndFirstDecisionWins) {
  waiter_rig rig;
  approval_registry reg(1h);
  auto t = reg.open("s", rig.strand);
  EXPECT_EQ(reg.pending(), 1u);
  EXPECT_TRUE(reg.resolve(t->id(), approval_decision::allow, std::nullopt));  // before the wait: kept
  EXPECT_FALSE(reg.resolve(t->id(), approval_decision::deny, std::nullopt));  // duplicate
  EXPECT_EQ(rig.wait(*t), approval_outcome::allowed);
  auto t2 = reg.open("s", rig.strand);
  EXPECT_TRUE(reg.resolve(t2->id(), approval_decision::deny, std::string_view("s")));
  EXPECT_EQ(rig.wait(*t2), approval_outcome::denied);
  const std::string gone = t2->id();
  t2.reset();
  EXPECT_FALSE(reg.resolve(gone, approval_decision::allow, std::nullopt));  // removed with its ticket
  t.reset();
  EXPECT_EQ(reg.pending(), 0u);
}

TEST(Approvals, UnknownEmptyAndWrongSession) {
  waiter_rig rig;
  approval_registry reg(1h);
  auto t = reg.open("alice", rig.strand);
  EXPECT_FALSE(reg.resolve("", approval_decision::allow, std::nullopt));
  EXPECT_FALSE(reg.resolve("nope", approval_decision::allow, std::nullopt));
  EXPECT_FALSE(reg.resolve(t->id(), approval_decision::allow, std::string_view("bob")));
  EXPECT_FALSE(reg.resolve(t->id(), approval_decision::allow, std::string_view("")));
  EXPECT_TRUE(reg.resolve(t->id(), approval_decision::allow, std::string_view("alice")));
  auto anon = reg.open("", rig.strand);  // no session: "" must match, or omit it
  EXPECT_FALSE(reg.resolve(anon->id(), approval_decision::allow, std::string_view("x")));
  EXPECT_TRUE(reg.resolve(anon->id(), approval_decision::allow, std::string_view("")));
}

TEST(Approvals, TimeoutIsDenyAndCancelIsDeny) {
  waiter_rig rig;
  approval_registry reg(50ms);
  // t0 before open(): the deadline counts from open(), so a busy machine (the ASan run at -j4)
  // cannot put the measured start after it (seen once: 44.3 ms measured from after open()).
  const auto t0 = std::chrono::steady_clock::now();
  auto t = reg.open("s", rig.strand);
  EXPECT_EQ(rig.wait(*t), approval_outcome::timed_out);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 45ms);
  EXPECT_FALSE(reg.resolve(t->id(), approval_decision::allow, std::nullopt));  // too late

  approval_registry reg2(1h);
  auto c = reg2.open("s", rig.strand);
  std::thread canceller([&] {
    std::this_thread::sleep_for(20ms);
    c->cancel();
  });
  EXPECT_EQ(rig.wait(*c), approval_outcome::cancelled);
  canceller.join();
  EXPECT_FALSE(reg2.resolve(c->id(), approval_decision::allow, std::nullopt));
}

TEST(Approvals, WaitReturnsEmptyEachSliceForKeepAlives) {
  waiter_rig rig;
  approval_registry reg(1h);
  auto t = reg.open("s", rig.strand);
  int slices = 0;
  auto fut = asio::co_spawn(
      rig.strand,
      [&]() -> asio::awaitable<approval_outcome> {
        std::optional<approval_outcome> o;
        while (!(o = co_await t->wait(10ms))) {
          if (++slices == 3) reg.resolve(t->id(), approval_decision::allow, std::nullopt);
        }
        co_return *o;
      },
      asio::use_future);
  rig.ioc.run();
  EXPECT_EQ(fut.get(), approval_outcome::allowed);
  EXPECT_EQ(slices, 3);
}

TEST(Approvals, TwoPendingAreIndependentAndRacingDecisionsPickOne) {
  asio::io_context ioc;
  approval_registry reg(1h);
  auto a = reg.open("s", asio::make_strand(ioc));
  auto b = reg.open("s", asio::make_strand(ioc));
  EXPECT_TRUE(reg.resolve(b->id(), approval_decision::deny, std::nullopt));
  EXPECT_TRUE(reg.resolve(a->id(), approval_decision::allow, std::nullopt));
  for (int round = 0; round < 200; ++round) {
    auto t = reg.open("s", asio::make_strand(ioc));
    std::atomic<int> wins{0};
    std::thread x([&] { wins += reg.resolve(t->id(), approval_decision::allow, std::nullopt); });
    std::thread y([&] { wins += reg.resolve(t->id(), approval_decision::deny, std::nullopt); });
    x.join();
    y.join();
    ASSERT_EQ(wins.load(), 1);
  }
  ioc.run();  // the posted wake-ups run harmlessly
}

// The inbox: what each ticket asks about, listed oldest first, filtered by session; events for
// every new, settled and withdrawn question; find() follows resolve()'s scope rule.
TEST(Approvals, InboxListsFindsAndAnnounces) {
  approval_registry reg(5s);
  asio::io_context ioc;
  std::vector<approval_event> seen;
  std::mutex mu;
  const auto sub = reg.subscribe([&](const approval_event& ev) {
    std::lock_guard lk(mu);
    seen.push_back(ev);
  });
  approval_info a;
  a.session_id = "s1";
  a.tool = "terminal";
  a.call_id = "c1";
  a.arguments = json{{"command", "rm -rf x"}};
  a.risk = risk_note{"high", {"runs rm (destructive)"}};
  auto ta = reg.open(a, ioc.get_executor());
  std::this_thread::sleep_for(2ms);
  approval_info b = a;
  b.session_id = "s2";
  b.call_id = "c2";
  auto tb = reg.open(b, ioc.get_executor());
  auto all = reg.list();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].approval_id, ta->id());  // oldest first
  EXPECT_EQ(all[0].tool, "terminal");
  EXPECT_EQ(all[0].arguments, a.arguments);
  ASSERT_TRUE(all[0].risk);
  EXPECT_EQ(all[0].risk->reasons, std::vector<std::string>{"runs rm (destructive)"});
  EXPECT_EQ(all[0].expires_unix_ms - all[0].created_unix_ms, 5000);
  EXPECT_EQ(reg.list("s2").size(), 1u);
  EXPECT_EQ(reg.list("nobody").size(), 0u);
  EXPECT_TRUE(reg.find(ta->id(), std::nullopt));
  EXPECT_TRUE(reg.find(ta->id(), std::string_view("s1")));
  EXPECT_FALSE(reg.find(ta->id(), std::string_view("s2")));
  EXPECT_FALSE(reg.find("nope", std::nullopt));
  ASSERT_TRUE(reg.resolve(ta->id(), approval_decision::deny, std::nullopt));
  EXPECT_FALSE(reg.find(ta->id(), std::nullopt));  // decided: no longer in the inbox
  EXPECT_EQ(reg.list().size(), 1u);
  const std::string b_id = tb->id();
  tb.reset();  // the stream went away undecided
  reg.unsubscribe(sub);
  auto c = reg.open(a, ioc.get_executor());  // not heard: unsubscribed
  std::lock_guard lk(mu);
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_FALSE(seen[0].settled);
  EXPECT_EQ(seen[0].info.approval_id, ta->id());
  EXPECT_FALSE(seen[1].settled);
  EXPECT_TRUE(seen[2].settled);
  EXPECT_EQ(seen[2].outcome, "denied");
  EXPECT_TRUE(seen[3].settled);
  EXPECT_EQ(seen[3].outcome, "withdrawn");
  EXPECT_EQ(seen[3].info.approval_id, b_id);
}

TEST(Approvals, ExpiryIsAnnouncedAsExpired) {
  approval_registry reg(50ms);
  waiter_rig rig;
  std::vector<std::string> outcomes;
  reg.subscribe([&](const approval_event& ev) {
    if (ev.settled) outcomes.push_back(ev.outcome);
  });
  auto t = reg.open("s", rig.strand);
  EXPECT_EQ(rig.wait(*t, 10ms), approval_outcome::timed_out);
  EXPECT_EQ(outcomes, std::vector<std::string>{"expired"});
  EXPECT_STREQ(to_string(approval_outcome::timed_out), "expired");
}

}  // namespace
}  // namespace warden::agent
