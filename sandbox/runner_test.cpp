#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <filesystem>
#include <fstream>
#include <thread>

#include "sandbox/runner.h"

namespace warden::sandbox {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

struct rig {
  asio::io_context ioc;
  std::string dir;
  rig() {
    char tmpl[] = "/tmp/warden-runner-XXXXXX";
    dir = ::mkdtemp(tmpl);
  }
  ~rig() { std::filesystem::remove_all(dir); }

  run_result run_bash(const std::string& cmd, std::chrono::milliseconds timeout = 10s,
                      std::shared_ptr<cancel_token> cancel = nullptr, std::string* live = nullptr,
                      std::size_t keep = 256 * 1024) {
    run_request req;
    req.argv = {"/bin/bash", "-c", cmd};
    req.workdir = dir;
    req.timeout = timeout;
    req.keep_output_bytes = keep;
    run_callbacks cb;
    if (live) {
      cb.on_output = [live](std::string_view b) -> asio::awaitable<void> {
        live->append(b);
        co_return;
      };
    }
    auto fut = asio::co_spawn(ioc, run(std::move(req), std::move(cancel), std::move(cb)), asio::use_future);
    ioc.restart();
    ioc.run();
    return fut.get();
  }
};

TEST(Runner, OutputExitCodeAndWorkdir) {
  rig r;
  std::string live;
  auto res = r.run_bash("echo out; echo err >&2; pwd; exit 7", 10s, nullptr, &live);
  EXPECT_FALSE(res.failure);
  EXPECT_EQ(res.exit_code, 7);
  EXPECT_EQ(res.output, "out\nerr\n" + r.dir + "\n");
  EXPECT_EQ(live, res.output);
  EXPECT_EQ(res.output_bytes, res.output.size());
}

TEST(Runner, EnvironmentIsBuiltFromScratch) {
  ::setenv("WARDEN_RUNNER_TEST_SECRET", "hunter2", 1);
  rig r;
  auto res = r.run_bash("env | sort");
  ::unsetenv("WARDEN_RUNNER_TEST_SECRET");
  EXPECT_EQ(res.output.find("hunter2"), std::string::npos);
  EXPECT_NE(res.output.find("HOME=" + r.dir + "\n"), std::string::npos);
  EXPECT_NE(res.output.find("TERM=dumb\n"), std::string::npos);
  EXPECT_NE(res.output.find("PYTHONIOENCODING=utf-8\n"), std::string::npos);
}

TEST(Runner, LimitsAndHygieneInTheChild) {
  rig r;
  auto res = r.run_bash("ulimit -f; ulimit -v; ulimit -c; cat /proc/self/status | grep -E '^NoNewPrivs'; "
                        "ls /proc/self/fd | wc -l; [ \"$(ps -o sid= -p $$)\" -eq $$ ] && echo own-session");
  EXPECT_EQ(res.exit_code, 0) << res.output;
  // bash reports KiB: 100 MiB files, 8 GiB address space, no core
  EXPECT_NE(res.output.find("102400\n8388608\n0\n"), std::string::npos) << res.output;
  // only stdin/stdout/stderr are inherited (+ the one ls opens to list them)
  EXPECT_NE(res.output.find("\n4\n"), std::string::npos) << res.output;
  EXPECT_NE(res.output.find("NoNewPrivs:\t1"), std::string::npos) << res.output;
  EXPECT_NE(res.output.find("own-session"), std::string::npos) << res.output;
}

TEST(Runner, TimeoutKillsTheWholeGroup) {
  rig r;
  const auto t0 = std::chrono::steady_clock::now();
  auto res = r.run_bash("sleep 60 & echo $! > child.pid; wait", 300ms);
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_TRUE(res.timed_out);
  EXPECT_EQ(res.term_signal, SIGKILL);
  EXPECT_LT(took, 2s);
  std::ifstream f(r.dir + "/child.pid");
  pid_t child = 0;
  f >> child;
  ASSERT_GT(child, 0);
  std::this_thread::sleep_for(100ms);
  // killed with its group (it may linger as a zombie of init for a moment: check its state)
  std::ifstream st("/proc/" + std::to_string(child) + "/stat");
  std::string line;
  std::getline(st, line);
  EXPECT_TRUE(line.empty() || line.find(") Z") != std::string::npos) << line;
}

TEST(Runner, CancelStopsItAtOnce) {
  rig r;
  auto token = cancel_token::make();
  std::thread t([&] {
    std::this_thread::sleep_for(200ms);
    token->cancel();
  });
  const auto t0 = std::chrono::steady_clock::now();
  auto res = r.run_bash("echo begun; sleep 30", 0ms, token);
  t.join();
  EXPECT_TRUE(res.cancelled);
  EXPECT_FALSE(res.timed_out);
  EXPECT_EQ(res.output, "begun\n");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1500ms);
}

TEST(Runner, BackgroundJobsDieWithTheCall) {
  rig r;
  const auto t0 = std::chrono::steady_clock::now();
  auto res = r.run_bash("sleep 60 & echo $! > bg.pid; echo done");
  EXPECT_EQ(res.exit_code, 0);
  EXPECT_EQ(res.output, "done\n");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
  std::ifstream f(r.dir + "/bg.pid");
  pid_t bg = 0;
  f >> bg;
  ASSERT_GT(bg, 0);
  std::this_thread::sleep_for(100ms);
  std::ifstream st("/proc/" + std::to_string(bg) + "/stat");
  std::string line;
  std::getline(st, line);
  EXPECT_TRUE(line.empty() || line.find(") Z") != std::string::npos) << "background job survived: " << line;
}

TEST(Runner, EscapedBackgroundProcessDoesNotHoldTheCall) {
  rig r;
  const auto t0 = std::chrono::steady_clock::now();
  auto res = r.run_bash("setsid sleep 5 & echo done");
  EXPECT_EQ(res.exit_code, 0);
  EXPECT_EQ(res.output, "done\n");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
}

TEST(Runner, KeepsOnlyTheHeadButCountsEverything) {
  rig r;
  auto res = r.run_bash("head -c 1000000 /dev/zero", 10s, nullptr, nullptr, 1000);
  EXPECT_EQ(res.output.size(), 1000u);
  EXPECT_EQ(res.output_bytes, 1000000u);
}

TEST(Runner, SpawnFailureIsReportedAsOutputAndExitCode) {
  rig r;
  run_request req;
  req.argv = {"/nonexistent/program"};
  req.workdir = r.dir;
  auto fut = asio::co_spawn(r.ioc, run(std::move(req), nullptr, {}), asio::use_future);
  r.ioc.run();
  auto res = fut.get();
  EXPECT_EQ(res.exit_code, 127);
  EXPECT_NE(res.output.find("starting the program failed"), std::string::npos) << res.output;
}

}  // namespace
}  // namespace warden::sandbox
