#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdlib.h>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include "common/blocking_pool.h"
#include "sandbox/call_cgroup.h"
#include "sandbox/runner.h"
#include "sandbox/spawn.h"

namespace warden::sandbox {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

/// The tests' sandbox with the default policy (probed once, as the server does).
sandbox& default_sandbox() {
  static sandbox sb{sandbox_policy{}};
  return sb;
}

struct rig {
  asio::io_context ioc;
  std::string dir;
  isolation mode = isolation::sandboxed;
  sandbox* sb = &default_sandbox();
  std::atomic<bool>* output_seen = nullptr;  ///< set once the program has written anything
  explicit rig(isolation m = isolation::sandboxed) : mode(m) {
    char tmpl[] = "/tmp/warden-runner-XXXXXX";
    dir = ::mkdtemp(tmpl);
    hand_over(dir);
    ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);  // as warden serve does; bypass refuses otherwise
  }
  /// Where the program sees its workspace.
  std::string inner() const { return mode == isolation::sandboxed ? "/workspace" : dir; }
  ~rig() { std::filesystem::remove_all(dir); }

  run_result run_bash(const std::string& cmd, std::chrono::milliseconds timeout = 10s,
                      std::shared_ptr<cancel_token> cancel = nullptr, std::string* live = nullptr,
                      std::size_t keep = 256 * 1024) {
    run_request req;
    req.argv = {"/bin/bash", "-c", cmd};
    req.workdir = dir;
    req.timeout = timeout;
    req.keep_output_bytes = keep;
    req.mode = mode;
    run_callbacks cb;
    if (live || output_seen) {
      cb.on_output = [live, seen = output_seen](std::string_view b) -> asio::awaitable<void> {
        if (live) live->append(b);
        if (seen) seen->store(true);
        co_return;
      };
    }
    auto fut = asio::co_spawn(ioc, sb->run(std::move(req), std::move(cancel), std::move(cb)), asio::use_future);
    ioc.restart();
    ioc.run();
    return fut.get();
  }
};

class RunnerModes : public ::testing::TestWithParam<isolation> {};
INSTANTIATE_TEST_SUITE_P(Both, RunnerModes, ::testing::Values(isolation::sandboxed, isolation::bypass));

TEST_P(RunnerModes, OutputExitCodeAndWorkdir) {
  rig r(GetParam());
  std::string live;
  auto res = r.run_bash("echo out; echo err >&2; pwd; exit 7", 10s, nullptr, &live);
  EXPECT_FALSE(res.failure);
  EXPECT_TRUE(res.started);
  EXPECT_EQ(res.exit_code, 7);
  EXPECT_EQ(res.output, "out\nerr\n" + r.inner() + "\n");
  EXPECT_EQ(live, res.output);
  EXPECT_EQ(res.output_bytes, res.output.size());
}

// Issue 9's defect: a program that exits right after writing lost its output when the pipe read
// and the exit wait completed together (asio's `||` kept only the winner). 500 quick-exit runs,
// half in the jail and half under bypass, while two busy loops load the machine: none may lose it.
TEST(Runner, QuickExitOutputIsNeverLostUnderLoad) {
  std::atomic<bool> stop{false};
  std::vector<std::thread> busy;
  for (int i = 0; i < 2; ++i) {
    busy.emplace_back([&stop] {
      volatile unsigned long x = 0;
      while (!stop.load(std::memory_order_relaxed)) x = x + 1;
    });
  }
  int lost = 0;
  std::string example;
  for (auto mode : {isolation::sandboxed, isolation::bypass}) {
    rig r(mode);
    for (int i = 0; i < 250; ++i) {
      auto res = r.run_bash("echo ran");
      if (res.output != "ran\n") {
        ++lost;
        example = res.output + (res.failure ? res.failure->message : "");
      }
    }
  }
  stop = true;
  for (auto& t : busy) t.join();
  EXPECT_EQ(lost, 0) << "e.g. '" << example << "'";
}

TEST(Runner, BypassHomeIsPerCallAndRemoved) {
  rig r(isolation::bypass);
  auto res = r.run_bash("echo $HOME; mkdir -p $HOME/.local/lib && touch $HOME/.bashrc $HOME/.local/lib/x.pth");
  ASSERT_FALSE(res.failure);
  const std::string home = res.output.substr(0, res.output.find('\n'));
  EXPECT_EQ(home.rfind("/tmp/warden-home-", 0), 0u) << res.output;
  EXPECT_FALSE(std::filesystem::exists(home)) << home;  // gone with what was planted in it
  auto again = r.run_bash("echo $HOME");
  EXPECT_NE(again.output.substr(0, again.output.find('\n')), home);
}

TEST_P(RunnerModes, EnvironmentHasNoSecrets) {
  ::setenv("WARDEN_RUNNER_TEST_SECRET", "hunter2", 1);
  ::setenv("RUNNER_TEST_PLAIN", "visible", 1);
  rig r(GetParam());
  auto res = r.run_bash("env | sort");
  ::unsetenv("WARDEN_RUNNER_TEST_SECRET");
  ::unsetenv("RUNNER_TEST_PLAIN");
  EXPECT_EQ(res.output.find("hunter2"), std::string::npos);
  // HOME and TMPDIR are never the workspace: the jail's tmpfs /tmp, or a folder of this call
  const std::string home = GetParam() == isolation::sandboxed ? "/tmp" : "/tmp/warden-home-";
  EXPECT_NE(res.output.find("HOME=" + home), std::string::npos) << res.output;
  EXPECT_NE(res.output.find("TMPDIR=" + home), std::string::npos) << res.output;
  EXPECT_EQ(res.output.find("HOME=" + r.inner() + "\n"), std::string::npos) << res.output;
  // sandboxed: built from scratch; bypass: the server's minus secrets
  EXPECT_EQ(res.output.find("RUNNER_TEST_PLAIN=visible") != std::string::npos, GetParam() == isolation::bypass);
  if (GetParam() == isolation::sandboxed) {
    EXPECT_NE(res.output.find("TERM=dumb\n"), std::string::npos);
    EXPECT_NE(res.output.find("PYTHONIOENCODING=utf-8\n"), std::string::npos);
  }
}

TEST(Runner, JailedAsNobodyWithOnlyLoopbackAndNoHostFiles) {
  rig r;
  auto res = r.run_bash("id -u; cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '; ls /; echo $$; "
                        "grep -c . /proc/self/status >/dev/null && grep CapEff /proc/self/status");
  EXPECT_EQ(res.exit_code, 0) << res.output << " signal " << res.term_signal << " cancelled " << res.cancelled << " timed_out " << res.timed_out << " failure " << (res.failure ? res.failure->message : "-");
  EXPECT_EQ(res.output.rfind("65534\nlo\nbin\ndev\netc\nlib\nlib64\nproc\nsbin\ntmp\nusr\nworkspace\n", 0), 0u)
      << res.output;
  EXPECT_NE(res.output.find("CapEff:\t0000000000000000"), std::string::npos) << res.output;
}

TEST(Runner, SeccompRefusesInternetSocketsAndPtrace) {
  rig r;
  run_request req;
  auto res = r.run_bash("/usr/bin/python3 -c \"import socket\ntry:\n  socket.socket()\n  print('inet ok')\n"
                        "except OSError as e: print('inet', e.errno)\nimport socket as s\n"
                        "a=s.socket(s.AF_UNIX); print('unix ok')\"");
  EXPECT_NE(res.output.find("inet 97"), std::string::npos) << res.output;  // EAFNOSUPPORT
  EXPECT_NE(res.output.find("unix ok"), std::string::npos) << res.output;
}

TEST(Runner, FailsClosedWithoutBubblewrap) {
  sandbox missing{sandbox_policy{"/nonexistent/bwrap"}};
  rig r;
  r.sb = &missing;
  auto res = r.run_bash("echo should-not-run");
  ASSERT_TRUE(res.failure);
  EXPECT_NE(res.failure->message.find("bubblewrap not found at /nonexistent/bwrap"), std::string::npos);
  EXPECT_NE(res.failure->message.find("bypass_permissions"), std::string::npos);
  EXPECT_EQ(res.output.find("should-not-run"), std::string::npos);
}

TEST(Runner, LimitsAndHygieneInTheChild) {
  rig r;
  auto res = r.run_bash("ulimit -f; ulimit -v; ulimit -c; grep -E '^NoNewPrivs' /proc/self/status; ls /proc/self/fd");
  EXPECT_EQ(res.exit_code, 0) << res.output;
  // bash reports KiB: 100 MiB files, 8 GiB address space, no core
  EXPECT_NE(res.output.find("102400\n8388608\n0\n"), std::string::npos) << res.output;
  EXPECT_NE(res.output.find("NoNewPrivs:\t1"), std::string::npos) << res.output;
  // only stdin/stdout/stderr are inherited (+ the one ls opens to list them)
  EXPECT_NE(res.output.find("\n0\n1\n2\n3\n"), std::string::npos) << res.output;
  EXPECT_EQ(res.output.find("\n4\n"), std::string::npos) << res.output;
  // nothing leads back to the host's tree: no inherited descriptor, no parent of /workspace
  auto esc = r.run_bash("ls /proc/self/fd | wc -l; cd /workspace/.. && ls");
  EXPECT_EQ(esc.output.substr(0, 2), "4\n") << esc.output;
  EXPECT_EQ(esc.output.find("warden-runner"), std::string::npos) << esc.output;
}

TEST(Runner, ProcessCountIsCapped) {
  rig r;
  // A bounded fork bomb: 700 forks; the cap (512 processes for the whole run) stops it.
  auto res = r.run_bash("/usr/bin/python3 -c \"import os,time\nn=0\nfor i in range(700):\n"
                        "  try: pid=os.fork()\n  except OSError: break\n"
                        "  if pid==0: time.sleep(30); os._exit(0)\n  n+=1\nprint('started', n)\"",
                        20s);
  const auto pos = res.output.rfind("started ");
  ASSERT_NE(pos, std::string::npos) << res.output;
  const int started = std::stoi(res.output.substr(pos + 8));
  EXPECT_LT(started, 512) << res.output;
  EXPECT_GT(started, 100) << res.output;
}

TEST(Runner, BypassIsRefusedWhileTheServerIsDumpable) {
  rig r(isolation::bypass);
  ::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
  auto res = r.run_bash("echo ran");
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  ASSERT_TRUE(res.failure);
  EXPECT_NE(res.failure->message.find("refusing bypass execution"), std::string::npos);
}

/// True when a heartbeat file written every 50 ms by a background job stopped growing.
bool heartbeat_stopped(const std::string& file) {
  std::this_thread::sleep_for(300ms);
  const auto a = std::filesystem::exists(file) ? std::filesystem::file_size(file) : 0;
  std::this_thread::sleep_for(300ms);
  const auto b = std::filesystem::exists(file) ? std::filesystem::file_size(file) : 0;
  return a == b;
}

TEST_P(RunnerModes, TimeoutKillsTheWholeGroup) {
  rig r(GetParam());
  const auto t0 = std::chrono::steady_clock::now();
  auto res = r.run_bash("(while :; do echo x >> beat; sleep 0.05; done) & sleep 60", 300ms);
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_TRUE(res.timed_out);
  EXPECT_TRUE(res.started);  // killed after it started: it ran
  EXPECT_LT(took, 2s);
  EXPECT_TRUE(std::filesystem::exists(r.dir + "/beat"));
  EXPECT_TRUE(heartbeat_stopped(r.dir + "/beat"));
}

TEST_P(RunnerModes, CancelStopsItAtOnce) {
  rig r(GetParam());
  auto token = cancel_token::make();
  // Cancel once the program has begun (not after a fixed 200 ms: a jail under the parallel ASan
  // run once took longer to start, and the cancel came before "begun"); time from the cancel.
  std::atomic<bool> begun{false};
  r.output_seen = &begun;
  std::chrono::steady_clock::time_point cancelled_at;
  std::thread t([&] {
    for (int i = 0; i < 2000 && !begun.load(); ++i) std::this_thread::sleep_for(5ms);
    std::this_thread::sleep_for(50ms);
    cancelled_at = std::chrono::steady_clock::now();
    token->cancel();
  });
  auto res = r.run_bash("echo begun; sleep 30", 0ms, token);
  const auto ended = std::chrono::steady_clock::now();
  t.join();
  EXPECT_TRUE(res.cancelled);
  EXPECT_FALSE(res.timed_out);
  EXPECT_TRUE(res.started);
  EXPECT_EQ(res.output, "begun\n");
  EXPECT_LT(ended - cancelled_at, 1500ms);
}

TEST_P(RunnerModes, BackgroundJobsDieWithTheCall) {
  rig r(GetParam());
  const auto t0 = std::chrono::steady_clock::now();
  auto res = r.run_bash("(while :; do echo x >> beat; sleep 0.05; done) & echo done");
  EXPECT_EQ(res.exit_code, 0);
  EXPECT_EQ(res.output, "done\n");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
  EXPECT_TRUE(heartbeat_stopped(r.dir + "/beat"));
}

TEST(Runner, DaemonsDieWithTheJail) {
  rig r;  // setsid + double fork escapes a process group, not the pid namespace
  auto res = r.run_bash("setsid bash -c '(while :; do echo x >> beat; sleep 0.05; done) &' ; sleep 0.2; echo done");
  EXPECT_EQ(res.output, "done\n");
  EXPECT_TRUE(std::filesystem::exists(r.dir + "/beat"));
  EXPECT_TRUE(heartbeat_stopped(r.dir + "/beat"));
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

TEST_P(RunnerModes, SpawnFailureIsReportedAsOutputAndExitCode) {
  rig r(GetParam());
  run_request req;
  req.argv = {"/nonexistent/program"};
  req.workdir = r.dir;
  req.mode = GetParam();
  auto fut = asio::co_spawn(r.ioc, r.sb->run(std::move(req), nullptr, {}), asio::use_future);
  r.ioc.run();
  auto res = fut.get();
  EXPECT_NE(res.exit_code, 0);
  EXPECT_NE(res.output.find("No such file or directory"), std::string::npos) << res.output;
  // execve failed (bypass), or bubblewrap's execvp in the jail: nothing ran
  EXPECT_FALSE(res.started);
  EXPECT_NE(not_started_reason(res).value_or("").find("No such file or directory"), std::string::npos);
}

TEST(Sandbox, StatusIsProbedOnceAndSharedByConcurrentCallers) {
  sandbox missing{sandbox_policy{"/nonexistent/bwrap"}};
  EXPECT_EQ(missing.policy().bwrap_path, "/nonexistent/bwrap");
  std::vector<std::thread> ts;
  std::vector<sandbox_status> seen(8);
  for (std::size_t i = 0; i < seen.size(); ++i) ts.emplace_back([&, i] { seen[i] = missing.status(); });
  for (auto& t : ts) t.join();
  for (const auto& st : seen) {
    EXPECT_FALSE(st.available);
    EXPECT_EQ(st.detail, "bubblewrap not found at /nonexistent/bwrap");
    EXPECT_NE(unavailable_message(st).find("bypass_permissions"), std::string::npos);
  }
  // bypass needs no jail: it still runs
  rig r(isolation::bypass);
  r.sb = &missing;
  EXPECT_EQ(r.run_bash("echo ran").output, "ran\n");
}

TEST(Sandbox, ProbeFindsTheJail) {
  sandbox sb{sandbox_policy{}};
  const auto st = sb.probe();
  EXPECT_TRUE(st.available) << st.detail << "; " << st.fix;
  EXPECT_TRUE(st.fix.empty());
  EXPECT_EQ(sb.status().detail, st.detail);  // cached
}

// With a pool, prepare and fork run on its threads; the runs themselves on the io threads.
// Twenty at once, on two io threads, in both modes: each gets its own output and exit code.
TEST(Sandbox, ConcurrentRunsOnABlockingPool) {
  blocking_pool pool(2);
  sandbox sb{sandbox_policy{}, &pool};
  rig jail(isolation::sandboxed), host(isolation::bypass);
  asio::io_context ioc;
  std::vector<std::future<run_result>> futs;
  for (int i = 0; i < 20; ++i) {
    run_request req;
    req.argv = {"/bin/bash", "-c", "echo run " + std::to_string(i) + "; exit " + std::to_string(i)};
    req.mode = i % 2 ? isolation::bypass : isolation::sandboxed;
    req.workdir = i % 2 ? host.dir : jail.dir;
    req.timeout = 20s;
    futs.push_back(asio::co_spawn(ioc, sb.run(std::move(req), nullptr, {}), asio::use_future));
  }
  std::thread second([&] { ioc.run(); });
  ioc.run();
  second.join();
  for (int i = 0; i < 20; ++i) {
    auto res = futs[static_cast<std::size_t>(i)].get();
    EXPECT_FALSE(res.failure) << i << ": " << res.failure->message;
    EXPECT_EQ(res.exit_code, i);
    EXPECT_EQ(res.output, "run " + std::to_string(i) + "\n");
  }
}

// A started child that is never supervised (its run was abandoned while on the pool) is killed
// and reaped with its temporary folders when the value goes.
TEST(Sandbox, AnUnsupervisedChildIsKilledAndReaped) {
  rig r(isolation::bypass);
  run_request req;
  req.argv = {"/bin/sleep", "30"};
  req.workdir = r.dir;
  req.mode = isolation::bypass;
  pid_t pid = -1;
  std::string home;
  {
    auto child = detail::start(req, sandbox_policy{});
    ASSERT_TRUE(child) << child.error().message;
    pid = child->state->pid;
    home = child->plan.home.path();
    EXPECT_TRUE(std::filesystem::exists(home));
  }
  for (int i = 0; i < 100 && ::kill(pid, 0) == 0; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_NE(::kill(pid, 0), 0) << "still running";
  EXPECT_FALSE(std::filesystem::exists(home));
}

// --- what one call may use (limits.h) ------------------------------------------------------------

bool has_place(cgroup_controller c) {
  for (const auto& p : call_cgroup_places()) {
    if (p.controller == c) return true;
  }
  return false;
}

TEST(Runner, TmpAndShmAreSizedAndDevIsReadOnly) {
  rig r;
  // Three files of 100 MB (each under the 100 MiB file limit) do not fit in a 256 MiB /tmp.
  auto res = r.run_bash("df -B1 --output=size /tmp /dev/shm | tail -n 2 | tr -d ' '; touch /dev/x 2>/dev/null; echo dev=$?; "
                        "touch /dev/shm/x; echo shm=$?; echo > /dev/null; echo null=$?; "
                        "for i in 1 2 3; do head -c 100000000 /dev/zero > /tmp/f$i || { echo full at $i; break; }; done",
                        20s);
  EXPECT_EQ(res.output.rfind(std::to_string(k_tmp_bytes) + "\n" + std::to_string(k_shm_bytes) + "\n", 0), 0u)
      << res.output;
  EXPECT_NE(res.output.find("dev=1\nshm=0\nnull=0\n"), std::string::npos) << res.output;
  EXPECT_NE(res.output.find("No space left on device"), std::string::npos) << res.output;
  EXPECT_NE(res.output.find("full at 3"), std::string::npos) << res.output;
}

TEST(Runner, ACallsMemoryIsCappedByItsCgroup) {
  if (!has_place(cgroup_controller::memory)) GTEST_SKIP() << "no usable memory cgroup here (warden doctor's limits line)";
  sandbox_policy p;
  p.call_memory_bytes = 128 * k_mib;
  sandbox small{p};
  rig r;
  r.sb = &small;
  // 1 MiB chunks up to 512 MiB, touched: far under the 8 GiB address space, over the 128 MiB call.
  auto res = r.run_bash("/usr/bin/python3 -c \"b=[]\nfor i in range(512): b.append(bytearray(1<<20))\nprint('all of it')\"",
                        30s);
  EXPECT_TRUE(res.started);
  EXPECT_EQ(res.output.find("all of it"), std::string::npos) << res.output;
  EXPECT_NE(res.exit_code, 0) << res.output;
  // the next call of the same sandbox runs as usual
  EXPECT_EQ(r.run_bash("echo fine").output, "fine\n");
}

TEST(Runner, AsRootEachCallHasItsOwnProcessBudget) {
  if (::geteuid() != 0) GTEST_SKIP() << "the shared RLIMIT_NPROC of uid 65534 exists only for a root server";
  if (!has_place(cgroup_controller::pids)) GTEST_SKIP() << "no usable pids cgroup: RLIMIT_NPROC is the (shared) fallback";
  rig flood, other;
  // not the shared 512: the server's own hard limit (the pids cgroup caps the call instead)
  struct rlimit hard {};
  ::getrlimit(RLIMIT_NPROC, &hard);
  EXPECT_EQ(other.run_bash("ulimit -u").output,
            (hard.rlim_max == RLIM_INFINITY ? std::string("unlimited") : std::to_string(hard.rlim_max)) + "\n");
  // Call A fills its 512 processes and holds them; calls B start meanwhile and run.
  std::atomic<bool> full{false};
  flood.output_seen = &full;
  auto stop = cancel_token::make();
  run_result a_res;
  std::thread a([&] {
    // python, not a bash loop: bash retries a failed fork for seconds each time
    a_res = flood.run_bash("/usr/bin/python3 -c \"import os,time\nn=0\nfor i in range(600):\n"
                           "  try: pid=os.fork()\n  except OSError: break\n  if pid==0: time.sleep(30); os._exit(0)\n"
                           "  n+=1\nprint('flooded', n>400, flush=True)\ntime.sleep(30)\"",
                           25s, stop);
  });
  for (int i = 0; i < 2000 && !full.load(); ++i) std::this_thread::sleep_for(10ms);
  EXPECT_TRUE(full.load()) << "the flood never started";
  for (int i = 0; i < 3; ++i) {
    auto b = other.run_bash("/usr/bin/python3 -c 'print(6*7)'; echo ok");
    EXPECT_EQ(b.output, "42\nok\n") << b.output << (b.failure ? b.failure->message : "");
  }
  stop->cancel();  // A's jail goes, and every sleep in it
  a.join();
  EXPECT_TRUE(a_res.started);
  EXPECT_EQ(a_res.output, "flooded True\n");
}

TEST(Runner, AWorkspaceOverItsQuotaIsNotRunAndOneFileCannotTakeWhatIsLeft) {
  sandbox_policy p;
  p.workspace_quota_bytes = 4 * k_mib;
  sandbox quota{p};
  for (auto mode : {isolation::sandboxed, isolation::bypass}) {
    rig r(mode);
    r.sb = &quota;
    {
      std::ofstream f(r.dir + "/big", std::ios::binary);
      f << std::string(5 * k_mib, 'x');
    }
    auto over = r.run_bash("echo should-not-run > ran");
    ASSERT_TRUE(over.failure);
    EXPECT_FALSE(over.started);
    EXPECT_NE(over.failure->message.find("over its quota of 4 MiB"), std::string::npos) << over.failure->message;
    EXPECT_EQ(not_started_reason(over), over.failure->message);
    EXPECT_FALSE(std::filesystem::exists(r.dir + "/ran"));
    std::filesystem::remove(r.dir + "/big");
    auto under = r.run_bash("echo ran");
    EXPECT_EQ(under.output, "ran\n");
    EXPECT_TRUE(under.started);
    if (mode == isolation::sandboxed) {
      // 4 MiB left (less the folder): a 5 MB file stops at the file-size limit
      auto big = r.run_bash("ulimit -f; head -c 5000000 /dev/zero > f; echo rc=$?");
      EXPECT_NE(big.output.find("rc=153"), std::string::npos) << big.output;  // SIGXFSZ
      const int kib = std::stoi(big.output);
      EXPECT_GT(kib, 3000);
      EXPECT_LE(kib, 4096);
    }
  }
}

// A jail that bubblewrap could not start is told apart from a program that exited 1.
TEST(Runner, AJailThatCouldNotStartIsNotStarted) {
  char tmpl[] = "/tmp/warden-fake-bwrap-XXXXXX";
  const std::string dir = ::mkdtemp(tmpl);
  ::chmod(dir.c_str(), 0755);
  const std::string script = dir + "/bwrap";
  {
    std::ofstream f(script);
    f << "#!/bin/sh\nif [ -e " << dir << "/fail ]; then\n"
      << "  echo 'bwrap: Creating new namespace failed: Resource temporarily unavailable' >&2; exit 1\nfi\n"
      << "exec /usr/bin/bwrap \"$@\"\n";
  }
  ::chmod(script.c_str(), 0755);
  sandbox sb{sandbox_policy{script}};
  ASSERT_TRUE(sb.probe().available);  // it works at start-up
  rig r;
  r.sb = &sb;
  auto exits_1 = r.run_bash("echo hi; exit 1");
  EXPECT_TRUE(exits_1.started);
  EXPECT_EQ(exits_1.exit_code, 1);
  EXPECT_FALSE(not_started_reason(exits_1));
  std::ofstream(dir + "/fail").put('x');
  auto failed = r.run_bash("echo hi");
  EXPECT_FALSE(failed.started);
  EXPECT_FALSE(failed.failure);
  EXPECT_EQ(failed.exit_code, 1);
  EXPECT_EQ(not_started_reason(failed).value_or(""),
            "the program was not started: bwrap: Creating new namespace failed: Resource temporarily unavailable");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace warden::sandbox
