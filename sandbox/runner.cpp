#include "sandbox/runner.h"

#include <fcntl.h>
#include <signal.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <thread>

namespace warden::sandbox {

namespace asio = boost::asio;
using namespace asio::experimental::awaitable_operators;

std::vector<std::string> sandbox_env(const std::string& workdir) {
  return {
      "PATH=/usr/local/bin:/usr/bin:/bin",
      "HOME=" + workdir,
      "TMPDIR=" + workdir,
      "LANG=C.UTF-8",
      "TERM=dumb",
      "PYTHONIOENCODING=utf-8",
      "PYTHONUNBUFFERED=1",
      "MPLBACKEND=Agg",
  };
}

namespace {

/// The child's process group, killable from any thread until it is reaped.
struct child_state {
  std::mutex mu;
  pid_t pid = -1;
  bool reaped = false;

  void kill_group() {
    std::lock_guard lk(mu);
    if (pid > 0 && !reaped) ::kill(-pid, SIGKILL);
  }
  /// Reaps without blocking; true once reaped. `status` is set then. Once the leader has
  /// exited (still a zombie, so its id cannot be reused yet), what is left of its process group
  /// (background jobs) is killed first: nothing the call started outlives it.
  bool try_reap(int& status) {
    std::lock_guard lk(mu);
    if (reaped) return true;
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid) {
      ::kill(-pid, SIGKILL);
    }
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno == ECHILD)) reaped = true;
    return reaped;
  }
};

/// Kills and reaps the child if the coroutine ends early (exception or destruction).
struct child_guard {
  std::shared_ptr<child_state> st;
  ~child_guard() {
    if (!st) return;
    st->kill_group();
    int status = 0;
    if (!st->try_reap(status)) {
      // SIGKILL was just sent; reap off this thread so no io thread blocks.
      std::thread([s = st] {
        pid_t pid;
        {
          std::lock_guard lk(s->mu);
          pid = s->pid;
        }
        int st2 = 0;
        while (::waitpid(pid, &st2, 0) < 0 && errno == EINTR) {
        }
        std::lock_guard lk(s->mu);
        s->reaped = true;
      }).detach();
    }
  }
};

struct c_strings {
  std::vector<std::string> store;
  std::vector<char*> ptrs;
  explicit c_strings(std::vector<std::string> v) : store(std::move(v)) {
    for (auto& s : store) ptrs.push_back(s.data());
    ptrs.push_back(nullptr);
  }
};

/// Capabilities that let a process read another's /proc/<pid>/environ and memory even when that
/// process is non-dumpable (measured on Linux 6.18: each one alone is enough).
constexpr int k_introspection_caps[] = {CAP_SYS_PTRACE, CAP_SYS_ADMIN, CAP_PERFMON};

bool is_introspection_cap(int cap) {
  for (int c : k_introspection_caps) {
    if (c == cap) return true;
  }
  return false;
}

/// In the child: drops every capability (sandboxed) or only k_introspection_caps (bypass), from
/// the bounding set too, so nothing regains them at execve. Root without them cannot read the
/// non-dumpable server's /proc/<pid>/environ or memory. Async-signal-safe (raw syscalls).
bool drop_capabilities(bool all) {
  if (::geteuid() != 0) return true;  // an unprivileged user has none to drop
  for (int cap = 0; cap <= 63; ++cap) {
    if (!all && !is_introspection_cap(cap)) continue;
    if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) return false;
  }
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  if (!all) {
    if (::syscall(SYS_capget, &hdr, data) != 0) return false;
    for (int cap : k_introspection_caps) {
      const unsigned bit = 1u << (cap % 32);
      auto& d = data[cap / 32];
      d.effective &= ~bit;
      d.permitted &= ~bit;
      d.inheritable &= ~bit;
    }
  }
  return ::syscall(SYS_capset, &hdr, data) == 0;
}

[[noreturn]] void child_fail(int fd, const char* what) {
  const int e = errno;
  char buf[256];
  const int n = std::snprintf(buf, sizeof buf, "warden sandbox: %s failed: %s\n", what, std::strerror(e));
  if (n > 0) {
    ssize_t w = ::write(fd, buf, static_cast<std::size_t>(n));
    (void)w;
  }
  ::_exit(127);
}

}  // namespace

asio::awaitable<run_result> run(run_request req, std::shared_ptr<cancel_token> cancel, run_callbacks cb) {
  run_result res;
  auto ex = co_await asio::this_coro::executor;
  if (req.argv.empty()) {
    res.failure = make_error(errc::internal, "nothing to run");
    co_return res;
  }
  if (cancel && cancel->cancelled()) {
    res.cancelled = true;
    co_return res;
  }
  std::array<int, 2> fds{-1, -1};
  if (::pipe2(fds.data(), O_CLOEXEC) != 0) {
    res.failure = make_error(errc::internal, std::string("could not create a pipe: ") + std::strerror(errno));
    co_return res;
  }
  c_strings argv(req.argv);
  c_strings envp(sandbox_env(req.workdir));
  const bool limits = req.mode == isolation::sandboxed;
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int e = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    res.failure = make_error(errc::internal, std::string("could not start the tool process: ") + std::strerror(e));
    co_return res;
  }
  if (pid == 0) {
    // Child: async-signal-safe calls only until execve.
    const int out = fds[1];
    ::setsid();
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    sigset_t all;
    sigemptyset(&all);
    ::sigprocmask(SIG_SETMASK, &all, nullptr);
    for (int s : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD}) ::signal(s, SIG_DFL);
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull < 0 || ::dup2(devnull, 0) < 0) child_fail(out, "opening /dev/null");
    if (::dup2(out, 1) < 0 || ::dup2(out, 2) < 0) child_fail(out, "redirecting output");
    ::syscall(SYS_close_range, 3U, ~0U, 0U);
    if (::chdir(req.workdir.c_str()) != 0) child_fail(2, "entering the workspace");
    ::umask(077);
    if (limits) {
      for (const auto& l : k_limits) {
        struct rlimit cur {};
        ::getrlimit(l.resource, &cur);
        rlim_t v = l.value;
        if (cur.rlim_max != RLIM_INFINITY && v > cur.rlim_max) v = cur.rlim_max;
        struct rlimit nl {v, v};
        if (::setrlimit(l.resource, &nl) != 0) child_fail(2, "setting resource limits");
      }
    }
    if (!drop_capabilities(limits)) child_fail(2, "dropping capabilities");
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) child_fail(2, "setting no_new_privs");
    ::execve(argv.ptrs[0], argv.ptrs.data(), envp.ptrs.data());
    child_fail(2, "starting the program");
  }
  ::close(fds[1]);
  auto st = std::make_shared<child_state>();
  st->pid = pid;
  child_guard guard{st};
  auto reg = cancel ? cancel->on_cancel([st] { st->kill_group(); }) : cancel_token::registration{};

  asio::posix::stream_descriptor out(ex, fds[0]);
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  std::optional<asio::posix::stream_descriptor> exit_fd;
  if (pidfd >= 0) exit_fd.emplace(ex, pidfd);
  asio::steady_timer timer(ex);

  using clock = std::chrono::steady_clock;
  const auto started = clock::now();
  const clock::time_point deadline = req.timeout.count() > 0 ? started + req.timeout : clock::time_point::max();
  auto last_output = started;
  std::optional<clock::time_point> exited_at;
  bool eof = false;
  int status = 0;
  std::array<char, 16384> buf{};
  auto use = asio::as_tuple(asio::use_awaitable);

  while (!eof || !exited_at) {
    // The next moment something has to happen without the child's help.
    auto wake = res.timed_out ? clock::time_point::max() : deadline;
    if (cb.on_idle && cb.idle_interval.count() > 0) wake = std::min(wake, last_output + cb.idle_interval);
    if (exited_at) wake = std::min(wake, *exited_at + k_drain_grace);
    if (!exit_fd && !exited_at) wake = std::min(wake, clock::now() + std::chrono::milliseconds(20));
    timer.expires_at(wake);

    int which = -1;
    std::size_t n = 0;
    boost::system::error_code read_ec;
    if (!eof && !exited_at && exit_fd) {
      auto r = co_await (out.async_read_some(asio::buffer(buf), use) ||
                         exit_fd->async_wait(asio::posix::descriptor_base::wait_read, use) ||
                         timer.async_wait(use));
      which = static_cast<int>(r.index());
      if (which == 0) std::tie(read_ec, n) = std::get<0>(r);
    } else if (!eof) {
      auto r = co_await (out.async_read_some(asio::buffer(buf), use) || timer.async_wait(use));
      which = r.index() == 0 ? 0 : 2;
      if (which == 0) std::tie(read_ec, n) = std::get<0>(r);
    } else if (exit_fd) {
      auto r = co_await (exit_fd->async_wait(asio::posix::descriptor_base::wait_read, use) || timer.async_wait(use));
      which = r.index() == 0 ? 1 : 2;
    } else {
      co_await timer.async_wait(use);
      which = 2;
    }
    if ((co_await asio::this_coro::cancellation_state).cancelled() != asio::cancellation_type::none) {
      res.cancelled = true;
      co_return res;  // the guard kills and reaps
    }
    const auto now = clock::now();
    if (which == 0) {
      if (read_ec || n == 0) {
        eof = true;
      } else {
        last_output = now;
        res.output_bytes += n;
        if (res.output.size() < req.keep_output_bytes) {
          res.output.append(buf.data(), std::min(n, req.keep_output_bytes - res.output.size()));
        }
        if (cb.on_output) co_await cb.on_output(std::string_view(buf.data(), n));
      }
    }
    if (!exited_at && (which == 1 || !exit_fd)) {
      if (st->try_reap(status)) exited_at = now;
    }
    if (which == 2) {
      if (now >= deadline && !res.timed_out && !exited_at) {
        res.timed_out = true;
        st->kill_group();
      } else if (exited_at && now >= *exited_at + k_drain_grace) {
        break;  // something outside the group still holds the pipe
      } else if (cb.on_idle && now >= last_output + cb.idle_interval) {
        last_output = now;
        co_await cb.on_idle();
      }
    }
  }
  guard.st = nullptr;
  if (cancel && cancel->cancelled() && !res.timed_out) res.cancelled = true;
  if (WIFEXITED(status)) {
    res.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    res.term_signal = WTERMSIG(status);
  }
  co_return res;
}

}  // namespace warden::sandbox
