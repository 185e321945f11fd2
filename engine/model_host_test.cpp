// model_host with fake children: swaps drain leases, a failed load restores the previous model,
// crashes restart (at once, then with back-off), the retry without an unknown flag, idle unload,
// the lazy start, and the pure extra-args checks.
#include "engine/model_host.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

namespace warden::engine {
namespace {

using namespace std::chrono_literals;

/// A child whose start() succeeds unless the spec's model id starts with "bad", or it is told to
/// fail once with an error; crash() makes a ready child failed, as a dead llama-server.
struct fake_world {
  std::atomic<int> starts{0};
  std::atomic<int> stops{0};
  std::optional<error> fail_next;
  std::mutex mu;
  std::vector<std::vector<std::string>> args_seen;
};

class fake_child final : public upstream {
 public:
  fake_child(fake_world& w, model_spec s) : w_(w), spec_(std::move(s)) {}
  result<void> start() override {
    w_.starts++;
    {
      std::lock_guard lock(w_.mu);
      w_.args_seen.push_back(spec_.extra_args);
      if (w_.fail_next) {
        error e = *w_.fail_next;
        w_.fail_next.reset();
        state_ = upstream_state::failed;
        return e;
      }
    }
    if (spec_.model_id.starts_with("bad")) {
      state_ = upstream_state::failed;
      return make_error(errc::upstream_unavailable, "cannot load " + spec_.model_id, "", "corrupt_gguf");
    }
    state_ = upstream_state::ready;
    return {};
  }
  void stop() override {
    w_.stops++;
    if (state_ != upstream_state::failed) state_ = upstream_state::stopped;
  }
  upstream_state state() const override { return state_.load(); }
  std::string status_message() const override { return state_ == upstream_state::failed ? "it died" : "ok"; }
  std::string model_id() const override { return spec_.model_id; }
  std::string url_for(std::string_view p) const override { return "http://127.0.0.1:1/v1/" + std::string(p); }
  std::vector<std::string> request_headers() const override { return {}; }
  bool is_local() const override { return true; }
  void crash() { state_ = upstream_state::failed; }

 private:
  fake_world& w_;
  model_spec spec_;
  std::atomic<upstream_state> state_{upstream_state::stopped};
};

struct fixture {
  fake_world world;
  std::vector<fake_child*> children;  // every child made, in order (owned by the host)
  std::mutex mu;
  std::string dir = ::testing::TempDir() + "model_host_" + std::to_string(::getpid());

  fixture() {
    std::filesystem::create_directories(dir);
    for (const char* name : {"a", "b", "bad"}) write_gguf(dir + "/" + name + ".gguf");
  }
  /// A GGUF header with no tensors and one key: enough for read_gguf_info.
  static void write_gguf(const std::string& path) {
    std::ofstream f(path, std::ios::binary);
    auto u32 = [&](std::uint32_t v) { f.write(reinterpret_cast<const char*>(&v), 4); };
    auto u64 = [&](std::uint64_t v) { f.write(reinterpret_cast<const char*>(&v), 8); };
    auto str = [&](const std::string& s) { u64(s.size()); f.write(s.data(), static_cast<std::streamsize>(s.size())); };
    f.write("GGUF", 4);
    u32(3);
    u64(0);
    u64(1);
    str("general.architecture");
    u32(8);  // string
    str("llama");
  }
  model_spec spec(const std::string& id) {
    model_spec s;
    s.model_id = id;
    s.model_path = dir + "/" + id + ".gguf";
    return s;
  }
  model_host::options opts() {
    model_host::options o;
    o.poll = 10ms;
    o.drain_timeout = 2000ms;
    o.backoff_first = 200ms;
    o.make_child = [this](const model_spec& s) {
      auto c = std::make_unique<fake_child>(world, s);
      std::lock_guard lock(mu);
      children.push_back(c.get());
      return c;
    };
    return o;
  }
  fake_child* last() {
    std::lock_guard lock(mu);
    return children.back();
  }
};

template <class F>
bool eventually(F f, std::chrono::milliseconds limit = 20000ms) {  // generous: CI machines are busy
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (f()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return f();
}

TEST(ModelHost, StartsSwapsAndUnloads) {
  fixture fx;
  model_host h(fx.opts(), fx.spec("a"));
  ASSERT_TRUE(h.start());
  EXPECT_EQ(h.state(), upstream_state::ready);
  EXPECT_EQ(h.model_id(), "a");
  auto swapped = h.load(fx.spec("b"));
  ASSERT_TRUE(swapped);
  EXPECT_EQ(swapped->spec->model_id, "b");
  EXPECT_EQ(h.model_id(), "b");
  EXPECT_EQ(fx.world.starts.load(), 2);
  ASSERT_TRUE(h.load(fx.spec("b")));  // the same spec: nothing restarts
  EXPECT_EQ(fx.world.starts.load(), 2);
  ASSERT_TRUE(h.unload());
  EXPECT_EQ(h.state(), upstream_state::stopped);
  EXPECT_EQ(h.status().phase, host_phase::unloaded);
  EXPECT_NE(h.status_message().find("POST /api/inference/load"), std::string::npos);
  EXPECT_EQ(h.path_in_use(), "");
}

TEST(ModelHost, ASwapWaitsForTheRequestsInFlight) {
  fixture fx;
  auto o = fx.opts();
  o.drain_timeout = 60s;  // the lease is released by the test, never by the timeout
  model_host h(o, fx.spec("a"));
  ASSERT_TRUE(h.start());
  auto lease = h.lease();
  std::atomic<bool> done{false};
  std::thread t([&] {
    EXPECT_TRUE(h.load(fx.spec("b")));
    done = true;
  });
  ASSERT_TRUE(eventually([&] { return h.status().phase == host_phase::draining; }));
  EXPECT_EQ(h.state(), upstream_state::starting);  // new requests wait for the new model
  std::this_thread::sleep_for(100ms);
  EXPECT_FALSE(done.load());
  EXPECT_EQ(fx.world.starts.load(), 1);  // nothing stopped under the request
  lease.reset();
  t.join();
  EXPECT_EQ(h.model_id(), "b");
  EXPECT_EQ(h.state(), upstream_state::ready);
}

TEST(ModelHost, AFailedLoadRestoresThePreviousModel) {
  fixture fx;
  model_host h(fx.opts(), fx.spec("a"));
  ASSERT_TRUE(h.start());
  auto r = h.load(fx.spec("bad"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().type_code, "corrupt_gguf");
  EXPECT_NE(r.error().message.find("The previous model a was loaded again."), std::string::npos);
  EXPECT_EQ(h.model_id(), "a");
  EXPECT_EQ(h.state(), upstream_state::ready);
  ASSERT_TRUE(h.status().last_failure);
}

// The breaker's finding: new settings for the model already loaded that llama-server refuses
// (a --lora file that is not there) left nothing loaded; the old settings come back.
TEST(ModelHost, AFailedReloadOfTheSameModelRestoresItsSettings) {
  fixture fx;
  model_host h(fx.opts(), fx.spec("a"));
  ASSERT_TRUE(h.start());
  model_spec retuned = fx.spec("a");
  retuned.extra_args = {"--lora", "/nonexistent.gguf"};
  fx.world.fail_next = make_error(errc::upstream_unavailable, "no such lora", "", "missing_file");
  auto r = h.load(retuned);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("The previous model a was loaded again."), std::string::npos) << r.error().message;
  EXPECT_EQ(h.state(), upstream_state::ready);
  ASSERT_TRUE(h.status().spec);
  EXPECT_TRUE(h.status().spec->extra_args.empty());
  EXPECT_EQ(fx.world.starts.load(), 3);
}

TEST(ModelHost, RefusesAMissingFileAndAManagedFlagBeforeStoppingAnything) {
  fixture fx;
  model_host h(fx.opts(), fx.spec("a"));
  ASSERT_TRUE(h.start());
  auto missing = h.load(fx.spec("nope"));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().type_code, "missing_file");
  model_spec flagged = fx.spec("b");
  flagged.extra_args = {"--port=9"};
  auto managed = h.load(flagged);
  ASSERT_FALSE(managed);
  EXPECT_EQ(managed.error().type_code, "managed_flag");
  EXPECT_EQ(fx.world.starts.load(), 1);
  EXPECT_EQ(h.model_id(), "a");
}

TEST(ModelHost, RetriesOnceWithoutAnUnknownFlag) {
  fixture fx;
  model_host h(fx.opts(), fx.spec("a"));
  ASSERT_TRUE(h.start());
  model_spec s = fx.spec("b");
  s.extra_args = {"--threads", "2", "--no-such-flag", "3"};
  {
    std::lock_guard lock(fx.world.mu);
    fx.world.fail_next = make_error(errc::upstream_unavailable, "unknown", "--no-such-flag", "unsupported_flag");
  }
  auto r = h.load(s);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->spec->extra_args, (std::vector<std::string>{"--threads", "2"}));
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_NE(r->warnings[0].find("--no-such-flag"), std::string::npos);
}

TEST(ModelHost, ACrashRestartsAtOnceThenWithBackOff) {
  fixture fx;
  model_host h(fx.opts(), fx.spec("a"));
  ASSERT_TRUE(h.start());
  fx.last()->crash();
  // requests wait (starting) from the moment the child is dead; never failed, even before the
  // keeper notices (it may already have restarted it: ready)
  EXPECT_NE(h.state(), upstream_state::failed);
  ASSERT_TRUE(eventually([&] { return h.status().restarts == 1 && h.state() == upstream_state::ready; }));
  const auto t0 = std::chrono::steady_clock::now();
  fx.last()->crash();  // again within healthy_after: backoff_first (200 ms) first
  ASSERT_TRUE(eventually([&] { return h.status().restarts == 2 && h.state() == upstream_state::ready; }));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 180ms);
  EXPECT_EQ(h.status().last_failure->type_code, "crashed");
  EXPECT_EQ(fx.world.starts.load(), 3);
}

TEST(ModelHost, IdleUnloadAndLazyStartOnFirstUse) {
  fixture fx;
  auto o = fx.opts();
  o.idle_unload = 1s;
  model_host h(o, fx.spec("a"));
  ASSERT_TRUE(h.start());
  ASSERT_TRUE(eventually([&] { return h.status().phase == host_phase::unloaded; }));
  EXPECT_TRUE(h.status().loads_on_use);
  h.begin();
  EXPECT_NE(h.state(), upstream_state::stopped);  // starting at once (or ready already)
  ASSERT_TRUE(eventually([&] { return h.state() == upstream_state::ready; }));

  auto lazy_opts = fx.opts();
  lazy_opts.lazy = true;
  model_host lazy(lazy_opts, fx.spec("b"));
  ASSERT_TRUE(lazy.start());
  EXPECT_EQ(lazy.state(), upstream_state::stopped);
  const int before = fx.world.starts.load();
  lazy.begin();
  ASSERT_TRUE(eventually([&] { return lazy.state() == upstream_state::ready; }));
  EXPECT_EQ(fx.world.starts.load(), before + 1);
}

TEST(ModelHost, ExtraArgsChecks) {
  EXPECT_TRUE(is_managed_flag("--port"));
  EXPECT_TRUE(is_managed_flag("--api-key-file=/x"));
  EXPECT_TRUE(is_managed_flag("-c"));
  EXPECT_FALSE(is_managed_flag("--threads"));
  EXPECT_EQ(check_extra_args({"--threads", "4", "--flash-attn"}), "");
  EXPECT_NE(check_extra_args({"--alias", "x"}).find("--alias"), std::string::npos);
  EXPECT_NE(check_extra_args({""}), "");
  EXPECT_NE(check_extra_args({"a\nb"}), "");
  // Other sources of the model, files llama-server would write, TLS: refused too (breaker's list).
  for (const char* f : {"-mu", "-hf", "--hf-repo", "--hf-token", "--log-file", "--slot-save-path", "--ssl-key-file",
                        "--docker-repo"}) {
    EXPECT_TRUE(is_managed_flag(f)) << f;
  }
  EXPECT_NE(check_extra_args({"--threads 1 --port 2"}).find("two entries"), std::string::npos);
  EXPECT_EQ(check_extra_args({"--chat-template-kwargs", "{\"a\": 1}"}), "");
  EXPECT_EQ(without_flag({"--a", "1", "--b", "--c=2"}, "--a"), (std::vector<std::string>{"--b", "--c=2"}));
  EXPECT_EQ(without_flag({"--a", "--b"}, "--a"), (std::vector<std::string>{"--b"}));
  EXPECT_EQ(without_flag({"--c=2", "--d"}, "--c"), (std::vector<std::string>{"--d"}));
}

}  // namespace
}  // namespace warden::engine
