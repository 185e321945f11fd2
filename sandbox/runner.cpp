#include "sandbox/runner.h"

#include "sandbox/bwrap.h"
#include "sandbox/env_scrub.h"
#include "sandbox/pids_cgroup.h"
#include "sandbox/seccomp_filter.h"

#include <fcntl.h>
#include <signal.h>
#include <linux/capability.h>
#include <grp.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>

extern char** environ;

namespace warden::sandbox {

namespace asio = boost::asio;

namespace {
std::mutex g_policy_mu;
sandbox_policy g_policy;
std::optional<sandbox_status> g_status;
thread_local bool g_probing = false;
}  // namespace

void configure(sandbox_policy p) {
  std::lock_guard lk(g_policy_mu);
  g_policy = std::move(p);
  g_status.reset();
}

const sandbox_policy& policy() { return g_policy; }

std::string unavailable_message(const sandbox_status& st) {
  return "the tool sandbox is unavailable: " + st.detail + ". Fix: " + st.fix +
         ". To run tools without it, the request must say so explicitly with bypass_permissions: true.";
}

void hand_over(const std::string& path) {
  // A root server runs the jail as uid 65534 outside too: the workspace must be its own.
  if (::geteuid() == 0) {
    if (::lchown(path.c_str(), k_sandbox_uid, k_sandbox_gid) != 0) {
      // the run then fails inside the jail with a clear permission error
    }
  }
}

sandbox_status probe() {
  sandbox_status st;
  const std::string bwrap = policy().bwrap_path;
  if (::access(bwrap.c_str(), X_OK) != 0) {
    st.detail = "bubblewrap not found at " + bwrap;
    st.fix = "install it (apt-get install bubblewrap) or pass --bwrap PATH";
  } else {
    char tmpl[] = "/tmp/warden-probe-XXXXXX";
    const char* dir = ::mkdtemp(tmpl);
    if (!dir) {
      st.detail = std::string("cannot create a probe folder: ") + std::strerror(errno);
      st.fix = "make /tmp writable";
    } else {
      hand_over(dir);
      asio::io_context ioc;
      run_request req;
      req.argv = {"/bin/sh", "-c", "test \"$(id -u)\" = 65534 && test -w /workspace && ! test -e /root"};
      req.workdir = dir;
      req.timeout = std::chrono::seconds(20);
      g_probing = true;
      auto fut = asio::co_spawn(ioc, run(req, nullptr, {}), asio::use_future);
      ioc.run();
      g_probing = false;
      auto r = fut.get();
      ::rmdir(dir);
      if (r.failure) {
        st.detail = r.failure->message;
        st.fix = "see the message";
      } else if (r.exit_code != 0) {
        std::string out = r.output;
        while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
        st.detail = "bubblewrap could not start a jail (exit " + std::to_string(r.exit_code) + "): " +
                    (out.empty() ? "no message" : out);
        st.fix = "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 and "
                 "user.max_user_namespaces > 0); in a container, run it with user namespaces allowed";
      } else {
        st.available = true;
        st.detail = "bubblewrap at " + bwrap + ": user/pid/net/ipc/uts namespaces, uid 65534, seccomp";
      }
    }
  }
  std::lock_guard lk(g_policy_mu);
  g_status = st;
  return st;
}

sandbox_status status() {
  {
    std::lock_guard lk(g_policy_mu);
    if (g_status) return *g_status;
  }
  return probe();
}

std::vector<std::string> sandbox_env(const std::string& home) {
  return {
      "PATH=/usr/local/bin:/usr/bin:/bin",
      "HOME=" + home,
      "TMPDIR=" + home,
      "PYTHONNOUSERSITE=1",
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
  const bool jailed = req.mode == isolation::sandboxed;
  std::vector<std::string> program_argv = req.argv;
  std::vector<std::string> program_env;
  // Descriptors the jailed child inherits as 3 (seccomp program) and 4 (workspace); opened
  // here at 10 or above so the child's dup2 calls cannot clobber one with the other.
  struct fd_holder {
    int fd = -1;
    ~fd_holder() {
      if (fd >= 0) ::close(fd);
    }
  } seccomp_fd, workspace_fd;
  const bool as_root = ::geteuid() == 0;
  std::optional<std::optional<pids_cgroup>> cgroup;
  std::string cgroup_procs;
  std::string stage_dir, stage_source;  // as root: where the child's private mount shows the workspace
  struct stage_remover {
    std::string* dir;
    ~stage_remover() {
      if (!dir->empty()) ::rmdir(dir->c_str());
    }
  } remove_stage{&stage_dir};
  std::string call_home;  // bypass: the per-call HOME, removed with everything in it
  struct home_remover {
    std::string* dir;
    ~home_remover() {
      std::error_code ec;
      if (!dir->empty()) std::filesystem::remove_all(*dir, ec);
    }
  } remove_home{&call_home};
  if (jailed) {
    // As root the jail runs as uid 65534 outside, where RLIMIT_NPROC holds and costs nothing;
    // a pids cgroup (attaching costs ~10 ms on cgroup v1) is for servers that are not root.
    if (!as_root) cgroup.emplace(pids_cgroup::create(k_max_processes));
    else cgroup.emplace(std::nullopt);
    if (*cgroup) cgroup_procs = (*cgroup)->procs_path();
    const sandbox_status st = g_probing ? sandbox_status{true, "", ""} : status();
    if (!st.available) {
      ::close(fds[0]);
      ::close(fds[1]);
      res.failure = make_error(errc::internal, unavailable_message(st));
      co_return res;
    }
    auto bpf = seccomp_program();
    if (!bpf) {
      ::close(fds[0]);
      ::close(fds[1]);
      res.failure = bpf.error();
      co_return res;
    }
    const int mfd = ::memfd_create("warden-seccomp", MFD_CLOEXEC);
    const int wfd = ::open(req.workdir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (mfd >= 0) seccomp_fd.fd = ::fcntl(mfd, F_DUPFD_CLOEXEC, 10);
    if (wfd >= 0) workspace_fd.fd = ::fcntl(wfd, F_DUPFD_CLOEXEC, 10);
    if (mfd >= 0) ::close(mfd);
    if (wfd >= 0) ::close(wfd);
    if (seccomp_fd.fd < 0 || workspace_fd.fd < 0 ||
        ::write(seccomp_fd.fd, bpf->data(), bpf->size()) != static_cast<ssize_t>(bpf->size()) ||
        ::lseek(seccomp_fd.fd, 0, SEEK_SET) != 0) {
      const int e = errno;
      ::close(fds[0]);
      ::close(fds[1]);
      res.failure = make_error(errc::internal, std::string("could not prepare the sandbox: ") + std::strerror(e));
      co_return res;
    }
    if (as_root) {
      char tmpl[] = "/tmp/warden-stage-XXXXXX";
      if (!::mkdtemp(tmpl)) {
        const int e = errno;
        ::close(fds[0]);
        ::close(fds[1]);
        res.failure = make_error(errc::internal, std::string("could not prepare the sandbox: ") + std::strerror(e));
        co_return res;
      }
      ::chmod(tmpl, 0711);  // only a mount point: searchable by the sandbox user, not listable
      stage_dir = tmpl;
      stage_source = req.workdir;
    }
    bwrap_options bo;
    bo.bwrap_path = policy().bwrap_path;
    bo.workspace_fd = 4;
    bo.workspace_path = stage_dir;  // as root: the stage (see the child); otherwise the fd
    bo.seccomp_fd = 3;
    bo.env = sandbox_env(k_inner_home);
    program_argv = bwrap_argv(bo, req.argv);
  } else {
    // bypass: the server's environment minus its secrets, and only with the server hardened
    // (non-dumpable), or a tool could read what was stripped from /proc/<server>/environ.
    if (::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 0) {
      ::close(fds[0]);
      ::close(fds[1]);
      res.failure = make_error(errc::internal,
                               "could not harden the server (it is still dumpable); refusing bypass execution");
      co_return res;
    }
    // HOME (and the temp variables) point to a folder of this call only, removed after it:
    // start-up files planted there (a user-site .pth, a .bashrc) cannot run in a later call.
    char home_tmpl[] = "/tmp/warden-home-XXXXXX";
    if (!::mkdtemp(home_tmpl)) {
      const int e = errno;
      ::close(fds[0]);
      ::close(fds[1]);
      res.failure = make_error(errc::internal, std::string("could not create the call's home folder: ") + std::strerror(e));
      co_return res;
    }
    call_home = home_tmpl;
    std::vector<std::string> server_env;
    for (char** e = environ; e && *e; ++e) server_env.emplace_back(*e);
    program_env = bypass_env(server_env, call_home);
  }
  c_strings argv(program_argv);
  c_strings envp(std::move(program_env));
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
    sigset_t all;
    sigemptyset(&all);
    ::sigprocmask(SIG_SETMASK, &all, nullptr);
    for (int s : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD}) ::signal(s, SIG_DFL);
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull < 0 || ::dup2(devnull, 0) < 0) child_fail(out, "opening /dev/null");
    if (::dup2(out, 1) < 0 || ::dup2(out, 2) < 0) child_fail(out, "redirecting output");
    unsigned first_closed = 3;
    if (jailed) {
      if (::dup2(seccomp_fd.fd, 3) < 0) child_fail(2, "passing the sandbox descriptors");
      first_closed = 4;
      if (!as_root) {  // bound by descriptor (bwrap closes it after the mount)
        if (::dup2(workspace_fd.fd, 4) < 0) child_fail(2, "passing the sandbox descriptors");
        first_closed = 5;
      }
    }
    ::syscall(SYS_close_range, first_closed, ~0U, 0U);
    if (::chdir(jailed ? "/" : req.workdir.c_str()) != 0) child_fail(2, "entering the workspace");
    ::umask(077);
    if (jailed) {
      for (const auto& l : k_limits) {
        // RLIMIT_NPROC only for the root server's jail, which runs as uid 65534 outside: for a
        // non-root server it would count every process of that user (the cgroup is used then).
        if (l.resource == RLIMIT_NPROC && !as_root) continue;
        struct rlimit cur {};
        ::getrlimit(l.resource, &cur);
        rlim_t v = l.value;
        if (cur.rlim_max != RLIM_INFINITY && v > cur.rlim_max) v = cur.rlim_max;
        struct rlimit nl {v, v};
        if (::setrlimit(l.resource, &nl) != 0) child_fail(2, "setting resource limits");
      }
      if (!cgroup_procs.empty()) {
        // Join the run's pids cgroup: everything started from here on counts against pids.max.
        const int cg = ::open(cgroup_procs.c_str(), O_WRONLY | O_CLOEXEC);
        if (cg < 0 || ::write(cg, "0", 1) != 1) child_fail(2, "joining the process-count cgroup");
        ::close(cg);
      }
      if (as_root) {
        // Never let the jail's uid be host root: a root-mapped jail can still write /proc/sys
        // (kernel.core_pattern runs a helper as full root) and leave setuid-root files. So
        // bubblewrap runs as uid 65534 outside too. It must then reach the workspace by a path
        // it may search: the workspace is bind-mounted onto a stage folder in /tmp inside a
        // private mount namespace of this child only.
        if (::unshare(CLONE_NEWNS) != 0) child_fail(2, "creating a private mount namespace");
        if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) child_fail(2, "making mounts private");
        if (::mount(stage_source.c_str(), stage_dir.c_str(), nullptr, MS_BIND, nullptr) != 0) {
          child_fail(2, "staging the workspace");
        }
        if (::setgroups(0, nullptr) != 0 || ::setresgid(k_sandbox_gid, k_sandbox_gid, k_sandbox_gid) != 0 ||
            ::setresuid(k_sandbox_uid, k_sandbox_uid, k_sandbox_uid) != 0) {
          child_fail(2, "dropping to the sandbox user");
        }
      }
    } else if (!drop_capabilities(false)) {
      child_fail(2, "dropping capabilities");
    }
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // after the uid change, which clears it
    if (::getppid() != parent) ::_exit(127);
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
  // One piece of output: counted, its head kept, passed on live.
  auto take_output = [&](std::size_t n) -> asio::awaitable<void> {
    res.output_bytes += n;
    if (res.output.size() < req.keep_output_bytes) {
      res.output.append(buf.data(), std::min(n, req.keep_output_bytes - res.output.size()));
    }
    if (cb.on_output) co_await cb.on_output(std::string_view(buf.data(), n));
  };

  while (!eof || !exited_at) {
    // The next moment something has to happen without the child's help.
    auto wake = res.timed_out ? clock::time_point::max() : deadline;
    if (cb.on_idle && cb.idle_interval.count() > 0) wake = std::min(wake, last_output + cb.idle_interval);
    if (exited_at) wake = std::min(wake, *exited_at + k_drain_grace);
    if (!exit_fd && !exited_at) wake = std::min(wake, clock::now() + std::chrono::milliseconds(20));
    timer.expires_at(wake);

    // Wait for output, the exit, or the timer. Every result of the group is looked at, not only
    // the first: a read that completed while the exit wait won still carries bytes that were
    // taken out of the pipe (asio's `a || b` would drop them: output lost on a loaded machine).
    namespace exp = asio::experimental;
    const auto wait_read = asio::posix::descriptor_base::wait_read;
    auto happened = [](const boost::system::error_code& e) { return e != asio::error::operation_aborted; };
    bool got_read = false, exit_ready = false, timer_fired = false;
    std::size_t n = 0;
    boost::system::error_code read_ec;
    if (!eof && !exited_at && exit_fd) {
      auto [order, re, rn, ee, te] =
          co_await exp::make_parallel_group(out.async_read_some(asio::buffer(buf), asio::deferred),
                                            exit_fd->async_wait(wait_read, asio::deferred),
                                            timer.async_wait(asio::deferred))
              .async_wait(exp::wait_for_one(), asio::use_awaitable);
      std::tie(got_read, read_ec, n, exit_ready, timer_fired) = std::tuple(happened(re), re, rn, happened(ee), happened(te));
    } else if (!eof) {
      auto [order, re, rn, te] =
          co_await exp::make_parallel_group(out.async_read_some(asio::buffer(buf), asio::deferred),
                                            timer.async_wait(asio::deferred))
              .async_wait(exp::wait_for_one(), asio::use_awaitable);
      std::tie(got_read, read_ec, n, timer_fired) = std::tuple(happened(re), re, rn, happened(te));
    } else if (exit_fd) {
      auto [order, ee, te] = co_await exp::make_parallel_group(exit_fd->async_wait(wait_read, asio::deferred),
                                                               timer.async_wait(asio::deferred))
                                 .async_wait(exp::wait_for_one(), asio::use_awaitable);
      std::tie(exit_ready, timer_fired) = std::tuple(happened(ee), happened(te));
    } else {
      auto [e] = co_await timer.async_wait(use);
      timer_fired = happened(e);
    }
    if ((co_await asio::this_coro::cancellation_state).cancelled() != asio::cancellation_type::none) {
      res.cancelled = true;
      co_return res;  // the guard kills and reaps
    }
    const auto now = clock::now();
    if (got_read) {
      if (read_ec || n == 0) {
        eof = true;
      } else {
        last_output = now;
        co_await take_output(n);
      }
    }
    if (!exited_at && (exit_ready || !exit_fd)) {
      if (st->try_reap(status)) exited_at = now;
    }
    if (timer_fired) {
      if (now >= deadline && !res.timed_out && !exited_at) {
        res.timed_out = true;
        st->kill_group();
      } else if (exited_at && now >= *exited_at + k_drain_grace) {
        // Something outside the group still holds the pipe. What the program wrote is already
        // in it: take that without waiting (on a loaded machine the grace timer can fire before
        // the read that was ready), then stop.
        boost::system::error_code rec;
        out.non_blocking(true, rec);
        for (std::size_t taken = 0; !rec && taken < k_drain_max_bytes;) {
          const std::size_t got = out.read_some(asio::buffer(buf), rec);
          if (rec || got == 0) break;
          taken += got;
          co_await take_output(got);
        }
        break;
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
