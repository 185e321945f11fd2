// Warm jails (warm_pool.h): the go message, and runs that take a warm jail behave as cold ones,
// one call per jail.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <filesystem>
#include <fstream>
#include <thread>

#include "common/blocking_pool.h"
#include "sandbox/runner.h"
#include "sandbox/warm_pool.h"

namespace warden::sandbox {
namespace {

namespace asio = boost::asio;
using namespace std::literals;

TEST(WarmJail, GoMessage) {
  struct row {
    const char* what;
    std::vector<std::string> argv;
    rlim_t bytes;
    std::string want;
  } rows[] = {
      {"plain", {"/bin/bash", "-c", "echo hi"}, 100u << 20, "102400\0/bin/bash\0-c\0echo hi\0"s},
      {"rounded down to KiB", {"/x"}, 1023, "0\0/x\0"s},
      {"empty argument kept", {"/x", "", "y"}, 2048, "2\0/x\0\0y\0"s},
      {"cut at a NUL, as execve reads it", {"/x", "a\0b"s}, 1024, "1\0/x\0a\0"s},
  };
  for (const auto& r : rows) EXPECT_EQ(detail::go_message(r.argv, r.bytes), r.want) << r.what;
}

/// A sandbox with a blocking pool (warm jails need one), and a workspace.
struct warm_rig {
  blocking_pool pool{1};
  sandbox sb;
  asio::io_context ioc;
  std::string dir;
  explicit warm_rig(sandbox_policy p = {}) : sb(std::move(p), &pool) {
    char tmpl[] = "/tmp/warden-warm-XXXXXX";
    dir = ::mkdtemp(tmpl);
    hand_over(dir);
  }
  ~warm_rig() {
    pool.stop();
    std::filesystem::remove_all(dir);
  }
  run_result run(std::vector<std::string> argv, std::chrono::milliseconds timeout = 10s,
                 std::shared_ptr<cancel_token> cancel = nullptr) {
    run_request req;
    req.argv = std::move(argv);
    req.workdir = dir;
    req.timeout = timeout;
    auto fut = asio::co_spawn(ioc, sb.run(std::move(req), std::move(cancel), {}), asio::use_future);
    ioc.restart();
    ioc.run();
    return fut.get();
  }
  run_result bash(const std::string& cmd, std::chrono::milliseconds timeout = 10s) {
    return run({"/bin/bash", "--noprofile", "--norc", "-c", cmd}, timeout);
  }
  /// The refill of the last run is on the pool: wait until the jail is there (or the pool made none).
  bool wait_warm() {
    for (int i = 0; i < 1000; ++i) {
      if (sb.prewarm(dir)) return true;
      std::this_thread::sleep_for(5ms);
    }
    return false;
  }
};

TEST(WarmJail, RunsTheCallsProgramWithTheColdEnvironmentAndExitCode) {
  warm_rig w;
  auto cold = w.bash("env | sort; pwd; id -u; exit 3");
  EXPECT_FALSE(cold.warm);
  ASSERT_TRUE(w.wait_warm());
  auto warm = w.bash("env | sort; pwd; id -u; exit 3");
  EXPECT_TRUE(warm.warm);
  EXPECT_TRUE(warm.started);
  EXPECT_EQ(warm.exit_code, 3);
  EXPECT_EQ(warm.output, cold.output);  // bash sets SHLVL=1 either way (warm_pool.h)
  // python sees the cold jail's environment, but for SHLVL=0 (warm_pool.h), and its own argv
  const std::vector<std::string> py = {"/usr/bin/python3", "-I", "-c",
                                       "import os,sys; print(sorted(os.environ)); print(sys.argv)", "a b"};
  ASSERT_TRUE(w.wait_warm());  // the jail made after the bash call
  auto py_cold = w.run(py);
  ASSERT_TRUE(py_cold.warm);
  sandbox_policy off;
  off.warm_jails = 0;
  warm_rig cold_rig(off);
  auto want = cold_rig.run(py);
  EXPECT_FALSE(want.warm);
  EXPECT_NE(want.output.find("'PATH', "), std::string::npos) << want.output;
  EXPECT_NE(want.output.find("\n['-c', 'a b']\n"), std::string::npos) << want.output;
  std::string with_shlvl = want.output;
  with_shlvl.replace(with_shlvl.find("'TERM'"), 0, "'SHLVL', ");
  EXPECT_EQ(py_cold.output, with_shlvl);
}

TEST(WarmJail, EachCallHasAJailOfItsOwn) {
  warm_rig w;
  ASSERT_TRUE(w.sb.prewarm(w.dir));
  // A file in /tmp, a process left running, a file in /dev/shm: none reaches the next call.
  auto first = w.bash("echo x > /tmp/left; echo y > /dev/shm/left; (sleep 100 &) ; echo $$ > pid; echo ok");
  ASSERT_TRUE(first.warm);
  EXPECT_EQ(first.output, "ok\n");
  ASSERT_TRUE(w.wait_warm());
  auto second = w.bash("ls /tmp /dev/shm; pgrep -c sleep; cat pid");
  EXPECT_TRUE(second.warm);
  EXPECT_EQ(second.output.find("left"), std::string::npos) << second.output;
  EXPECT_NE(second.output.find("\n0\n"), std::string::npos) << second.output;  // no sleep in this jail
}

TEST(WarmJail, TimeoutAndCancelStillKill) {
  warm_rig w;
  ASSERT_TRUE(w.sb.prewarm(w.dir));
  const auto t0 = std::chrono::steady_clock::now();
  auto slow = w.bash("sleep 30", 300ms);
  EXPECT_TRUE(slow.warm);
  EXPECT_TRUE(slow.timed_out);
  EXPECT_TRUE(slow.started);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  ASSERT_TRUE(w.wait_warm());
  auto token = cancel_token::make();
  std::thread t([&] {
    std::this_thread::sleep_for(200ms);
    token->cancel();
  });
  auto cancelled = w.run({"/bin/bash", "-c", "sleep 30"}, 0ms, token);
  t.join();
  EXPECT_TRUE(cancelled.warm);
  EXPECT_TRUE(cancelled.cancelled);
}

TEST(WarmJail, ARecreatedWorkspaceIsNotServedByTheOldFoldersJail) {
  warm_rig w;
  ASSERT_TRUE(w.sb.prewarm(w.dir));
  std::filesystem::remove_all(w.dir);
  std::filesystem::create_directory(w.dir);
  hand_over(w.dir);
  std::ofstream(w.dir + "/new").put('n');
  auto r = w.bash("ls");
  EXPECT_FALSE(r.warm);
  EXPECT_EQ(r.output, "new\n");
}

TEST(WarmJail, TheQuotaIsCheckedWhenTheJailIsTaken) {
  sandbox_policy p;
  p.workspace_quota_bytes = 4 * k_mib;
  warm_rig w(p);
  ASSERT_TRUE(w.sb.prewarm(w.dir));
  {
    std::ofstream f(w.dir + "/big", std::ios::binary);
    f << std::string(5 * k_mib, 'x');
  }
  auto over = w.bash("echo should-not-run > ran");
  ASSERT_TRUE(over.failure);
  EXPECT_NE(over.failure->message.find("over its quota of 4 MiB"), std::string::npos) << over.failure->message;
  EXPECT_FALSE(std::filesystem::exists(w.dir + "/ran"));
  // Under the quota again, with 1.x MiB left: the warm jail's file-size limit is lowered to it.
  std::filesystem::resize_file(w.dir + "/big", 2 * k_mib + 512 * 1024);
  ASSERT_TRUE(w.wait_warm());
  auto limited = w.bash("ulimit -f; head -c 3000000 /dev/zero > f; echo rc=$?");
  EXPECT_TRUE(limited.warm);
  EXPECT_NE(limited.output.find("rc=153"), std::string::npos) << limited.output;  // SIGXFSZ
  EXPECT_LE(std::stoi(limited.output), 2048) << limited.output;
}

TEST(WarmJail, ALongArgvRunsCold) {
  warm_rig w;
  ASSERT_TRUE(w.sb.prewarm(w.dir));
  const std::string arg(detail::k_warm_max_message, 'a');
  auto r = w.run({"/bin/bash", "-c", "echo ${#1}", "x", arg});
  EXPECT_FALSE(r.warm);
  EXPECT_EQ(r.output, std::to_string(arg.size()) + "\n");
  EXPECT_EQ(w.sb.warm_jails(), 1u);  // the warm jail was left for the next call
  auto again = w.bash("echo warm");
  EXPECT_TRUE(again.warm);
  EXPECT_EQ(again.output, "warm\n");
}

TEST(WarmJail, OffWithoutAPoolOrWhenDisabled) {
  sandbox_policy off;
  off.warm_jails = 0;
  warm_rig w(off);
  EXPECT_FALSE(w.sb.prewarm(w.dir));
  auto r = w.bash("echo cold");
  EXPECT_FALSE(r.warm);
  EXPECT_EQ(r.output, "cold\n");
  EXPECT_EQ(w.sb.warm_jails(), 0u);
}

/// What /proc/<pid>/<name> holds, or "" when the process is gone (read with read(2): a process
/// that exits while it is read must not throw).
std::string proc_file(const std::string& pid, const char* name) {
  const int fd = ::open(("/proc/" + pid + "/" + name).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  return out;
}

/// Warm jails of this process waiting (or being built): bubblewrap children whose command line
/// ends with the stub's "$0". `kill`: SIGKILL them too, their pids in `killed`.
int warm_jail_processes(bool kill = false, std::vector<std::string>* killed = nullptr) {
  const std::string tail("\0warden-warm\0", 13);
  const std::string parent = "\nPPid:\t" + std::to_string(::getpid()) + "\n";
  int n = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string pid = e.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string cmd = proc_file(pid, "cmdline");
    if (cmd.size() < tail.size() || cmd.compare(cmd.size() - tail.size(), tail.size(), tail) != 0) continue;
    if (proc_file(pid, "status").find(parent) == std::string::npos) continue;
    ++n;
    if (kill) ::kill(std::stoi(pid), SIGKILL);
    if (kill && killed) killed->push_back(pid);
  }
  return n;
}

/// True once `pid` is a zombie (or gone): from then on waitid() sees it exited. An empty command
/// line comes earlier in a process's exit (its memory is released before it becomes a zombie).
bool exited(const std::string& pid) {
  const std::string stat = proc_file(pid, "stat");
  const auto close = stat.rfind(')');
  return close == std::string::npos || stat.compare(close, 4, ") Z ") == 0;
}

TEST(WarmJail, UnderALowHardFileSizeLimitTheWarmJailStillRuns) {
  // warden started under `ulimit -f` (systemd LimitFSIZE=, a container): the stub must only ever
  // lower the limit (raising it past the hard one failed every warm call with exit 125).
  const rlim_t hard = 50u << 20;
  const struct rlimit low {hard, hard};
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &low), 0);  // this test's process only (ctest runs each alone)
  warm_rig w;
  ASSERT_TRUE(w.sb.prewarm(w.dir));
  auto r = w.bash("ulimit -f; echo ran");
  EXPECT_TRUE(r.warm);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, std::to_string(hard / 1024) + "\nran\n");
}

TEST(WarmJail, ADeadWarmJailIsNotUsedAndTheCallRunsCold) {
  warm_rig w;
  ASSERT_TRUE(w.sb.prewarm(w.dir));
  std::vector<std::string> killed;
  EXPECT_EQ(warm_jail_processes(true, &killed), 1);
  ASSERT_EQ(killed.size(), 1u);
  for (int i = 0; i < 2000 && !exited(killed[0]); ++i) std::this_thread::sleep_for(5ms);
  ASSERT_TRUE(exited(killed[0]));
  auto r = w.bash("echo cold");
  EXPECT_FALSE(r.warm);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, "cold\n");
}

TEST(WarmJail, AnIdleJailGoesWithoutAnyOtherCall) {
  sandbox_policy p;
  p.warm_idle = 1s;
  warm_rig w(p);
  ASSERT_TRUE(w.sb.prewarm(w.dir));
  EXPECT_EQ(warm_jail_processes(), 1);
  // Nothing touches the pool from here: the sweeper drops it (within 1.25 s), and it is reaped.
  for (int i = 0; i < 600 && warm_jail_processes() > 0; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(warm_jail_processes(), 0);
}

TEST(WarmJail, ThePoolKeepsAtMostItsSizeAndDropsIdleJails) {
  sandbox_policy p;
  p.warm_jails = 2;
  p.warm_idle = 1s;
  warm_rig w(p);
  std::vector<std::string> dirs;
  for (int i = 0; i < 3; ++i) {
    dirs.push_back(w.dir + "/ws" + std::to_string(i));
    std::filesystem::create_directory(dirs.back());
    hand_over(dirs.back());
    ASSERT_TRUE(w.sb.prewarm(dirs.back()));
  }
  EXPECT_EQ(w.sb.warm_jails(), 2u);
  std::this_thread::sleep_for(1200ms);
  EXPECT_EQ(w.sb.warm_jails(), 0u);
}

}  // namespace
}  // namespace warden::sandbox
