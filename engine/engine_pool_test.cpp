// engine/engine_pool.h: least outstanding with round robin on ties, session affinity while the
// engine is healthy, routing by model, ejection after a failure before the first byte and
// re-admission after its time, trying ejected engines rather than refusing, and the 503 naming
// every engine. The requests themselves (failover through chat_service) are driven end to end by
// tests/integration/test_pool.py and tests/e2e/test_pool_real.py.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <thread>

#include "engine/engine_pool.h"
#include "engine/http_client.h"

namespace warden::engine {
namespace {

class member_upstream final : public upstream {
 public:
  explicit member_upstream(std::string model) : model_(std::move(model)) {}
  result<void> start() override { return {}; }
  void stop() override {}
  upstream_state state() const override { return state_.load(); }
  std::string status_message() const override { return state_.load() == upstream_state::ready ? "ready" : "crashed"; }
  std::string model_id() const override { return model_; }
  std::string url_for(std::string_view p) const override { return "http://127.0.0.1:9/v1/" + std::string(p); }
  std::vector<std::string> request_headers() const override { return {}; }
  bool is_local() const override { return false; }
  std::atomic<upstream_state> state_{upstream_state::ready};

 private:
  std::string model_;
};

struct pool_fixture {
  explicit pool_fixture(std::vector<std::string> models, pool_options o = {}) {
    std::vector<pool_member_spec> specs;
    for (std::size_t i = 0; i < models.size(); ++i) {
      ups.push_back(std::make_unique<member_upstream>(models[i]));
      specs.push_back({"e" + std::to_string(i), ups.back().get(), 2, ""});
    }
    pool = std::make_unique<engine_pool>(std::move(specs), client, std::chrono::milliseconds(1000), o);
  }
  std::size_t pick(std::string_view model = "", std::string_view follow = "", std::vector<std::size_t> tried = {}) {
    auto c = pool->pick(model, follow, tried);
    return c ? c->index : 99;
  }
  http_client client;
  std::vector<std::unique_ptr<member_upstream>> ups;
  std::unique_ptr<engine_pool> pool;
};

TEST(EnginePool, LeastOutstandingThenRoundRobinOnTies) {
  pool_fixture f({"m", "m", "m"});
  std::map<std::size_t, int> seen;
  for (int i = 0; i < 9; ++i) ++seen[f.pick()];  // each released at once: all ties
  EXPECT_EQ(seen[0], 3);
  EXPECT_EQ(seen[1], 3);
  EXPECT_EQ(seen[2], 3);
  // Held picks spread: six concurrent requests, two on each; the outstanding counts show it.
  std::vector<engine_pool::choice> held;
  for (int i = 0; i < 6; ++i) held.push_back(*f.pool->pick("", "", {}));
  for (const auto& s : f.pool->status()) EXPECT_EQ(s.outstanding, 2) << s.name;
  held.erase(held.begin(), held.begin() + 1);  // one of member held[0] ends
  int min_out = 9;
  for (const auto& s : f.pool->status()) min_out = std::min(min_out, s.outstanding);
  EXPECT_EQ(min_out, 1);
  const std::size_t next = f.pick();
  EXPECT_EQ(f.pool->status()[next].outstanding, 1) << "the next request goes to the least loaded engine";
  held.clear();
  for (const auto& s : f.pool->status()) EXPECT_EQ(s.outstanding, 0);
  EXPECT_EQ(f.pool->total_slots(), 6);
}

TEST(EnginePool, AffinityFollowsTheSessionWhileItsEngineIsHealthy) {
  pool_fixture f({"m", "m"});
  const std::size_t first = f.pick("", "sess");
  f.pool->succeeded(first, {"sess", "resp_1"});
  for (int i = 0; i < 5; ++i) EXPECT_EQ(f.pick("", "sess"), first);
  EXPECT_EQ(f.pick("", "resp_1"), first) << "a previous_response_id follows its response's engine";
  auto held = f.pool->pick("", "", {});  // load on the other engine does not move the session
  EXPECT_EQ(f.pick("", "sess"), first);
  f.ups[first]->state_ = upstream_state::starting;  // its engine crashed: the session moves
  const std::size_t moved = f.pick("", "sess");
  EXPECT_NE(moved, first);
  f.pool->succeeded(moved, {"sess"});
  f.ups[first]->state_ = upstream_state::ready;
  EXPECT_EQ(f.pick("", "sess"), moved) << "and stays where it moved to";
}

TEST(EnginePool, AffinityKeysAreBounded) {
  pool_options o;
  o.affinity_capacity = 4;
  pool_fixture f({"m", "m"}, o);
  f.pool->succeeded(1, {"old"});
  for (int i = 0; i < 4; ++i) f.pool->succeeded(0, {"k" + std::to_string(i)});
  std::map<std::size_t, int> seen;
  for (int i = 0; i < 4; ++i) ++seen[f.pick("", "old")];
  EXPECT_EQ(seen[0], 2) << "the oldest key was forgotten: plain round robin";
}

TEST(EnginePool, RoutesByModelWhenAnEngineServesIt) {
  pool_fixture f({"alpha", "beta", "alpha", "beta"});
  std::map<std::size_t, int> alpha;
  for (int i = 0; i < 8; ++i) ++alpha[f.pick("alpha")];
  EXPECT_EQ(alpha, (std::map<std::size_t, int>{{0, 4}, {2, 4}})) << "ties turn over the model's engines evenly";
  for (int i = 0; i < 3; ++i) EXPECT_NE(f.pick("beta") % 2, 0u);
  std::map<std::size_t, int> any;
  for (int i = 0; i < 8; ++i) ++any[f.pick("gamma")];  // served by none: every engine
  EXPECT_EQ(any.size(), 4u);
  EXPECT_EQ(f.pick("beta", "", {1, 3}), 99u) << "both beta engines were tried: none left";
  // The answers when none can take it name the model and only its engines, or the engine that failed.
  const error none = f.pool->unavailable("beta");
  EXPECT_NE(none.message.find("serving 'beta'"), std::string::npos) << none.message;
  EXPECT_NE(none.message.find("e1 (ready)"), std::string::npos) << none.message;
  EXPECT_EQ(none.message.find("e0"), std::string::npos) << none.message;
  EXPECT_EQ(f.pool->unavailable("gamma").message.find("serving"), std::string::npos);
  const error last = f.pool->give_up({{3, make_error(errc::upstream_unavailable, "Failed to connect")}}, "beta");
  EXPECT_EQ(last.message, "engine e3: Failed to connect");
}

TEST(EnginePool, AFailureEjectsUntilItsTimeThenReadmits) {
  pool_options o;
  o.eject_base = std::chrono::milliseconds(150);
  pool_fixture f({"m", "m"}, o);
  f.pool->settle({{0, make_error(errc::upstream_error, "HTTP 500")}}, true);  // another engine answered
  EXPECT_FALSE(f.pool->status()[0].healthy);
  EXPECT_GT(f.pool->status()[0].ejected_ms, 0);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(f.pick(), 1u);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_TRUE(f.pool->status()[0].healthy) << "re-admitted on trial";
  std::map<std::size_t, int> seen;
  for (int i = 0; i < 4; ++i) ++seen[f.pick()];
  EXPECT_EQ(seen[0], 2);
  f.pool->settle({{0, make_error(errc::upstream_error, "HTTP 500")}}, true);  // second in a row: twice as long
  EXPECT_GT(f.pool->status()[0].ejected_ms, 150);
  f.pool->succeeded(0, {});
  EXPECT_EQ(f.pool->status()[0].failovers, 2u);
  EXPECT_TRUE(f.pool->status()[0].healthy) << "an answer ends the ejection";
  EXPECT_TRUE(engine_pool::fails_over(make_error(errc::upstream_unavailable, "refused")));
  EXPECT_TRUE(engine_pool::fails_over(make_error(errc::too_many_requests, "rate limited")));
  EXPECT_TRUE(engine_pool::fails_over(upstream_status_error(401, R"({"error":{"message":"bad key"}})")));
  EXPECT_FALSE(engine_pool::fails_over(make_error(errc::invalid_request, "bad")));
  EXPECT_FALSE(engine_pool::fails_over(make_error(errc::cancelled, "gone")));
}

TEST(EnginePool, AFailureNoEngineGotPastEjectsOnlyTheUnreachable) {
  pool_fixture f({"m", "m", "m"});
  // A 5xx that followed the request to every engine tried is the request's: nobody is ejected.
  f.pool->settle({{0, make_error(errc::upstream_error, "HTTP 500")}, {1, make_error(errc::upstream_error, "HTTP 500")}},
                 false);
  for (const auto& s : f.pool->status()) EXPECT_TRUE(s.healthy) << s.name;
  // An unreachable one is ejected either way.
  f.pool->settle({{2, make_error(errc::upstream_unavailable, "refused")}}, false);
  EXPECT_FALSE(f.pool->status()[2].healthy);
  EXPECT_EQ(f.pool->status()[0].failovers, 1u);
  EXPECT_EQ(f.pool->options().max_attempts, 2u);
  const error last = f.pool->give_up({{0, make_error(errc::upstream_error, "first")}, {1, make_error(errc::upstream_error, "last")}});
  EXPECT_EQ(last.message, "engine e1: last") << "named after the engine that said it";
  EXPECT_EQ(f.pool->give_up({}).code, errc::upstream_unavailable);
}

TEST(EnginePool, TheQueueSeesTheSlotsOfTheHealthyEngines) {
  pool_fixture f({"m", "m", "m"});  // 2 slots each
  EXPECT_EQ(f.pool->slots_now(), 6);
  f.ups[0]->state_ = upstream_state::starting;
  f.pool->settle({{1, make_error(errc::upstream_unavailable, "refused")}}, true);
  EXPECT_EQ(f.pool->slots_now(), 2);
  f.ups[2]->state_ = upstream_state::failed;
  EXPECT_EQ(f.pool->slots_now(), 2) << "never below one engine's: the pool answers 503 at once";
}

TEST(EnginePool, EjectedEnginesAreTriedRatherThanRefusingAndTheRefusalNamesEachEngine) {
  pool_fixture f({"m", "m"});
  f.pool->settle({{0, make_error(errc::upstream_error, "x")}, {1, make_error(errc::upstream_error, "x")}}, true);
  EXPECT_NE(f.pick(), 99u) << "a blip of the whole pool is not a 503";
  f.ups[0]->state_ = upstream_state::failed;
  f.ups[1]->state_ = upstream_state::starting;
  EXPECT_EQ(f.pick(), 99u);
  const error e = f.pool->unavailable();
  EXPECT_EQ(e.code, errc::upstream_unavailable);
  EXPECT_NE(e.message.find("e0 (crashed)"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("e1 (crashed)"), std::string::npos) << e.message;
  EXPECT_EQ(f.pool->front().state(), upstream_state::starting);
  f.ups[1]->state_ = upstream_state::ready;
  EXPECT_EQ(f.pool->front().state(), upstream_state::ready);
  EXPECT_EQ(f.pool->front().model_id(), "m");
}

}  // namespace
}  // namespace warden::engine
