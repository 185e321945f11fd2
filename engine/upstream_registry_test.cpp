// upstream_registry and the upstream state machine (upstream_status.h), with fake upstreams: no
// llama-server, no network.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "engine/upstream_registry.h"
#include "engine/upstream_status.h"

namespace warden::engine {
namespace {

using namespace std::chrono_literals;
using s = upstream_state;

/// What the fakes did, in order ("start chat", "stop embeddings", …); shared by a test's fakes.
struct event_log {
  std::mutex mu;
  std::vector<std::string> events;
  void add(std::string e) {
    std::lock_guard lock(mu);
    events.push_back(std::move(e));
  }
  std::vector<std::string> all() {
    std::lock_guard lock(mu);
    return events;
  }
};

enum class outcome { ready, fails, blocks_until_stopped };

/// An upstream whose start() succeeds, fails, or waits for stop() (a model that never loads),
/// moving through the same state machine as the real ones.
class fake_upstream final : public upstream {
 public:
  fake_upstream(std::string name, event_log& log, outcome how = outcome::ready)
      : name_(std::move(name)), log_(log), how_(how) {}

  result<void> start() override {
    log_.add("start " + name_);
    status_.set(s::starting, "loading " + name_);
    switch (how_) {
      case outcome::ready: status_.set(s::ready, "ready"); return {};
      case outcome::fails: break;
      case outcome::blocks_until_stopped: {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [this] { return stopped_; });
        break;
      }
    }
    status_.set(s::failed, name_ + " did not load");
    return make_error(errc::upstream_unavailable, name_ + " did not load");
  }
  void stop() override {
    log_.add("stop " + name_);
    {
      std::lock_guard lock(mu_);
      stopped_ = true;
    }
    cv_.notify_all();
    status_.set(s::stopped, "stopped");
  }
  upstream_state state() const override { return status_.state(); }
  std::string status_message() const override { return status_.message(); }
  std::string model_id() const override { return name_ + "-model"; }
  std::string url_for(std::string_view path) const override { return "http://fake/" + std::string(path); }
  std::vector<std::string> request_headers() const override { return {}; }
  bool is_local() const override { return true; }

 private:
  std::string name_;
  event_log& log_;
  outcome how_;
  upstream_status status_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopped_ = false;
};

std::unique_ptr<upstream> fake(const std::string& name, event_log& log, outcome how = outcome::ready) {
  return std::make_unique<fake_upstream>(name, log, how);
}

/// Polls `pred` for up to 5 s.
template <class F>
bool eventually(F pred) {
  for (int i = 0; i < 500; ++i) {
    if (pred()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return pred();
}

// --- the state machine -------------------------------------------------------------------

TEST(UpstreamStatus, TransitionTableMatchesTheDiagram) {
  struct row {
    upstream_state from, to;
    bool allowed;
  };
  const row rows[] = {
      {s::stopped, s::starting, true},  {s::stopped, s::failed, true},   {s::stopped, s::ready, false},
      {s::starting, s::ready, true},    {s::starting, s::failed, true},  {s::starting, s::stopped, true},
      {s::ready, s::failed, true},      {s::ready, s::stopped, true},    {s::ready, s::starting, false},
      {s::failed, s::ready, true},      {s::failed, s::starting, true},  {s::failed, s::stopped, false},
  };
  for (const auto& r : rows) {
    EXPECT_EQ(upstream_transition_allowed(r.from, r.to), r.allowed) << to_string(r.from) << " -> " << to_string(r.to);
  }
  for (auto st : {s::stopped, s::starting, s::ready, s::failed}) {
    EXPECT_TRUE(upstream_transition_allowed(st, st)) << "a new message in the same state: " << to_string(st);
  }
}

TEST(UpstreamStatus, RefusedMoveChangesNothingAndAllowedMoveChangesStateAndMessageTogether) {
  upstream_status st;
  EXPECT_EQ(st.state(), s::stopped);
  EXPECT_EQ(st.message(), "");
  auto t = st.set(s::ready, "ready");
  EXPECT_FALSE(t.moved);
  EXPECT_EQ(t.from, s::stopped);
  EXPECT_EQ(st.state(), s::stopped);
  EXPECT_EQ(st.message(), "");

  EXPECT_TRUE(st.set(s::starting, "loading m").moved);
  t = st.set(s::failed, "crashed");
  EXPECT_TRUE(t.moved);
  EXPECT_EQ(t.from, s::starting);
  EXPECT_FALSE(st.set(s::stopped, "stopped").moved);  // a failure stays visible after shutdown
  const auto snap = st.get();
  EXPECT_EQ(snap.state, s::failed);
  EXPECT_EQ(snap.message, "crashed");
  EXPECT_TRUE(st.set(s::ready, "ready").moved);  // a remote upstream answering again
  EXPECT_EQ(st.get().message, "ready");
}

// --- the registry --------------------------------------------------------------------------

TEST(UpstreamRegistry, StartsStartUpEntriesInOrderAndLeavesLazyOnesStopped) {
  event_log log;
  upstream_registry reg;
  reg.add("chat", fake("chat", log), start_policy::at_start_up);
  reg.add("embeddings", fake("embeddings", log), start_policy::on_first_use);
  reg.add("second", fake("second", log), start_policy::at_start_up);
  ASSERT_TRUE(reg.start_all().ok());
  EXPECT_EQ(log.all(), (std::vector<std::string>{"start chat", "start second"}));

  const auto st = reg.statuses();
  ASSERT_EQ(st.size(), 3u);
  EXPECT_EQ(st[0].name, "chat");
  EXPECT_EQ(st[0].state, s::ready);
  EXPECT_EQ(st[0].model_id, "chat-model");
  EXPECT_EQ(st[1].name, "embeddings");
  EXPECT_EQ(st[1].policy, start_policy::on_first_use);
  EXPECT_EQ(st[1].state, s::stopped);
  EXPECT_EQ(st[1].message, "the model server for embeddings-model starts on first use");
  EXPECT_EQ(st[2].state, s::ready);
}

TEST(UpstreamRegistry, FirstFailureStopsStartAllAndIsReturned) {
  event_log log;
  upstream_registry reg;
  reg.add("chat", fake("chat", log, outcome::fails), start_policy::at_start_up);
  reg.add("other", fake("other", log), start_policy::at_start_up);
  const auto r = reg.start_all();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, errc::upstream_unavailable);
  EXPECT_EQ(r.error().message, "chat did not load");
  EXPECT_EQ(log.all(), (std::vector<std::string>{"start chat"}));
  EXPECT_EQ(reg.find("chat")->state(), s::failed);
  EXPECT_EQ(reg.find("other")->state(), s::stopped);
}

TEST(UpstreamRegistry, LazyEntryStartsOnceOnFirstUseAndReportsInnerState) {
  event_log log;
  upstream_registry reg;
  upstream& lazy = reg.add("embeddings", fake("embeddings", log), start_policy::on_first_use);
  on_demand_upstream* od = reg.on_demand("embeddings");
  ASSERT_NE(od, nullptr);
  EXPECT_EQ(&lazy, static_cast<upstream*>(od));
  EXPECT_EQ(reg.find("embeddings"), &lazy);
  ASSERT_TRUE(reg.start_all().ok());
  EXPECT_TRUE(log.all().empty()) << "start_all() must not start a lazy entry";

  od->begin();
  od->begin();
  ASSERT_TRUE(od->start().ok());  // waits for the one start begun above
  EXPECT_EQ(od->state(), s::ready);
  EXPECT_EQ(od->status_message(), "ready");
  EXPECT_EQ(log.all(), (std::vector<std::string>{"start embeddings"}));
}

TEST(UpstreamRegistry, LazyEntryIsStartingWhileItsModelLoadsAndAFailureIsNotRetried) {
  event_log log;
  upstream_registry reg;
  reg.add("slow", fake("slow", log, outcome::blocks_until_stopped), start_policy::on_first_use);
  reg.add("broken", fake("broken", log, outcome::fails), start_policy::on_first_use);
  on_demand_upstream* slow = reg.on_demand("slow");
  slow->begin();
  EXPECT_TRUE(eventually([&] { return slow->state() == s::starting; }));
  EXPECT_EQ(slow->status_message(), "loading model slow-model");

  on_demand_upstream* broken = reg.on_demand("broken");
  EXPECT_FALSE(broken->start().ok());
  EXPECT_EQ(broken->state(), s::failed);
  EXPECT_FALSE(broken->start().ok());
  broken->begin();
  reg.stop_all();  // also ends slow's start() still loading
  const auto events = log.all();
  EXPECT_EQ(std::count(events.begin(), events.end(), "start broken"), 1) << "a failed start is not retried";
}

TEST(UpstreamRegistry, StopAllStopsTheLastAddedFirstAndIsIdempotent) {
  event_log log;
  {
    upstream_registry reg;
    reg.add("chat", fake("chat", log), start_policy::at_start_up);
    reg.add("embeddings", fake("embeddings", log), start_policy::on_first_use);
    reg.add("remote", fake("remote", log), start_policy::at_start_up);
    ASSERT_TRUE(reg.start_all().ok());
    reg.stop_all();
    EXPECT_EQ(log.all(), (std::vector<std::string>{"start chat", "start remote", "stop remote", "stop embeddings",
                                                   "stop chat"}));
    EXPECT_EQ(reg.find("chat")->state(), s::stopped);
    reg.stop_all();
  }  // and the destructor (and the lazy wrapper's): every stop() is idempotent, so repeating is harmless
  const auto events = log.all();
  ASSERT_GE(events.size(), 2u + 3u * 3u);
  for (std::size_t i = 2; i < events.size(); ++i) EXPECT_EQ(events[i].rfind("stop ", 0), 0u) << events[i];
}

TEST(UpstreamRegistry, StopAllFromAnotherThreadEndsAStartInProgressAndNothingStartsAfterIt) {
  event_log log;
  upstream_registry reg;
  reg.add("chat", fake("chat", log, outcome::blocks_until_stopped), start_policy::at_start_up);
  reg.add("later", fake("later", log), start_policy::at_start_up);
  std::thread shutdown([&] {
    EXPECT_TRUE(eventually([&] { return reg.find("chat")->state() == s::starting; }));
    reg.stop_all();
  });
  const auto r = reg.start_all();
  shutdown.join();
  EXPECT_FALSE(r.ok());
  const auto again = reg.start_all();
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, errc::upstream_unavailable);
  const auto events = log.all();
  EXPECT_EQ(std::count(events.begin(), events.end(), "start later"), 0);
  EXPECT_EQ(std::count(events.begin(), events.end(), "start chat"), 1);
}

TEST(UpstreamRegistry, LookupsAndWiringBugs) {
  event_log log;
  upstream_registry reg;
  reg.add("chat", fake("chat", log), start_policy::at_start_up);
  EXPECT_EQ(reg.find("nope"), nullptr);
  EXPECT_EQ(reg.on_demand("chat"), nullptr);  // not lazy
  EXPECT_EQ(reg.on_demand("nope"), nullptr);
  EXPECT_THROW(reg.add("chat", fake("chat", log), start_policy::at_start_up), std::logic_error);
  EXPECT_THROW(reg.add("", fake("x", log), start_policy::at_start_up), std::logic_error);
  EXPECT_THROW(reg.add("y", nullptr, start_policy::at_start_up), std::logic_error);
  EXPECT_EQ(reg.statuses().size(), 1u);
}

}  // namespace
}  // namespace warden::engine
