// The child part of a run (spawn.h): the fork, what the child does until execve, and the
// parent's handle on the child's process group.
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>

#include "sandbox/bwrap.h"
#include "sandbox/spawn.h"

namespace warden::sandbox::detail {

void child_state::kill_group() {
  std::lock_guard lk(mu);
  if (pid <= 0 || reaped) return;
  // Right after the fork the child may not have its own group yet (setsid): kill it alone then.
  if (::kill(-pid, SIGKILL) != 0 && errno == ESRCH) ::kill(pid, SIGKILL);
}

bool child_state::try_reap(int& status) {
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

child_guard::~child_guard() {
  if (!st_) return;
  st_->kill_group();
  int status = 0;
  if (st_->try_reap(status)) return;
  // SIGKILL was just sent; reap off this thread so no io thread blocks.
  std::thread([s = st_] {
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

namespace {

/// Capabilities that let a process read another's /proc/<pid>/environ and memory even when that
/// process is non-dumpable (measured on Linux 6.18: each one alone is enough).
constexpr int k_introspection_caps[] = {CAP_SYS_PTRACE, CAP_SYS_ADMIN, CAP_PERFMON};

bool is_introspection_cap(int cap) noexcept {
  for (int c : k_introspection_caps) {
    if (c == cap) return true;
  }
  return false;
}

/// In the child: drops every capability (sandboxed) or only k_introspection_caps (bypass), from
/// the bounding set too, so nothing regains them at execve. Root without them cannot read the
/// non-dumpable server's /proc/<pid>/environ or memory. Async-signal-safe (raw syscalls).
bool drop_capabilities(bool all) noexcept {
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

/// In the child: where the start report goes (the status pipe), for child_fail.
int g_status_fd = -1;

/// Tells the parent that the program never started ("!" on the status pipe), writes why to `fd`
/// (the output) and exits 127.
[[noreturn]] void child_fail(int fd, const char* what) noexcept {
  const int e = errno;
  if (g_status_fd >= 0) {
    ssize_t w = ::write(g_status_fd, "!", 1);
    (void)w;
  }
  char buf[256];
  const int n = std::snprintf(buf, sizeof buf, "warden sandbox: %s failed: %s\n", what, std::strerror(e));
  if (n > 0) {
    ssize_t w = ::write(fd, buf, static_cast<std::size_t>(n));
    (void)w;
  }
  ::_exit(127);
}

/// Its own session, no blocked or ignored signals (a pool or io thread blocks them all).
void child_signals() noexcept {
  ::setsid();
  sigset_t all;
  sigemptyset(&all);
  ::sigprocmask(SIG_SETMASK, &all, nullptr);
  for (int s : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD}) ::signal(s, SIG_DFL);
}

/// stdin /dev/null, stdout and stderr the pipe, the jail's descriptors as k_seccomp_fd and
/// k_workspace_fd (unless root stages the workspace), the start report as k_status_fd
/// (close-on-exec in bypass), every other descriptor closed.
void child_descriptors(const spawn_plan& p) noexcept {
  const int out = p.out_write.get();
  g_status_fd = p.status_write.get();
  if (p.service) {  // a service: stdin, stdout and stderr are three pipes
    if (::dup2(p.in_read.get(), 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(p.err_write.get(), 2) < 0) {
      child_fail(out, "redirecting the service's pipes");
    }
  } else {
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull < 0 || ::dup2(devnull, 0) < 0) child_fail(out, "opening /dev/null");
    if (::dup2(out, 1) < 0 || ::dup2(out, 2) < 0) child_fail(out, "redirecting output");
  }
  // The sources are all at 10 or above (prepare), so no dup2 here replaces another source.
  if (::dup2(p.status_write.get(), k_status_fd) < 0) child_fail(2, "passing the start report");
  g_status_fd = k_status_fd;
  if (p.jailed) {
    if (::dup2(p.seccomp_fd.get(), k_seccomp_fd) < 0) child_fail(2, "passing the sandbox descriptors");
    if (!p.as_root) {  // bound by descriptor (bwrap closes it after the mount)
      if (::dup2(p.workspace_fd.get(), k_workspace_fd) < 0) child_fail(2, "passing the sandbox descriptors");
    } else {
      ::close(k_workspace_fd);
    }
  } else {
    ::syscall(SYS_close_range, 3U, static_cast<unsigned>(k_status_fd - 1), 0U);
    ::fcntl(k_status_fd, F_SETFD, FD_CLOEXEC);  // closes empty when execve succeeds
  }
  int last = k_status_fd;
  if (p.go_child.get() >= 0) {  // a warm jail's go channel
    if (::dup2(p.go_child.get(), k_go_fd) < 0) child_fail(2, "passing the sandbox descriptors");
    last = k_go_fd;
  }
  ::syscall(SYS_close_range, static_cast<unsigned>(last + 1), ~0U, 0U);
}

/// k_limits (limits.h), with the call's file-size limit. RLIMIT_NPROC: the cap only for a root
/// server's call without a pids cgroup (it counts uid 65534's processes in every jail); a root
/// server's call with one gets the server's hard limit (unlimited, or the kernel's default of
/// threads-max / 2), so another session's flood, capped by its own cgroup, cannot exhaust it; a
/// non-root server leaves it alone (it would count the server user's own processes).
void child_rlimits(const spawn_plan& p) noexcept {
  for (const auto& l : k_limits) {
    rlim_t v = l.value;
    if (l.resource == RLIMIT_NPROC) {
      if (!p.as_root) continue;
      if (!p.nproc_rlimit) {  // as high as it goes without CAP_SYS_RESOURCE: the hard limit
        struct rlimit cur {};
        ::getrlimit(RLIMIT_NPROC, &cur);
        const struct rlimit most {cur.rlim_max, cur.rlim_max};
        if (::setrlimit(RLIMIT_NPROC, &most) != 0) child_fail(2, "setting resource limits");
        continue;
      }
    }
    if (l.resource == RLIMIT_CPU && p.service) continue;  // a service lives for hours
    if (l.resource == RLIMIT_FSIZE && p.max_file_bytes > 0) v = std::min(v, p.max_file_bytes);
    struct rlimit cur {};
    ::getrlimit(l.resource, &cur);
    if (cur.rlim_max != RLIM_INFINITY && v > cur.rlim_max) v = cur.rlim_max;
    struct rlimit nl {v, v};
    if (::setrlimit(l.resource, &nl) != 0) child_fail(2, "setting resource limits");
  }
}

/// Never let the jail's uid be host root: a root-mapped jail can still write /proc/sys
/// (kernel.core_pattern runs a helper as full root) and leave setuid-root files. So bubblewrap
/// runs as uid 65534 outside too. It must then reach the workspace by a path it may search: the
/// workspace is bind-mounted onto a stage folder in /tmp inside a private mount namespace of this
/// child only.
void child_stage_and_drop_root(const spawn_plan& p) noexcept {
  if (::unshare(CLONE_NEWNS) != 0) child_fail(2, "creating a private mount namespace");
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) child_fail(2, "making mounts private");
  if (::mount(p.workdir.c_str(), p.stage.path().c_str(), nullptr, MS_BIND, nullptr) != 0) {
    child_fail(2, "staging the workspace");
  }
  for (std::size_t i = 0; i < p.ro_stages.size(); ++i) {  // a service's read-only paths
    if (::mount(p.ro_sources[i].c_str(), p.ro_stages[i].path().c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) {
      child_fail(2, "staging a read-only path");
    }
  }
  if (::setgroups(0, nullptr) != 0 || ::setresgid(k_sandbox_gid, k_sandbox_gid, k_sandbox_gid) != 0 ||
      ::setresuid(k_sandbox_uid, k_sandbox_uid, k_sandbox_uid) != 0) {
    child_fail(2, "dropping to the sandbox user");
  }
}

void child_jail(const spawn_plan& p) noexcept {
  child_rlimits(p);
  if (p.cgroup) {
    // Join the call's cgroup in each hierarchy: everything started from here on counts.
    for (const auto& procs : p.cgroup->procs_paths()) {
      const int cg = ::open(procs.c_str(), O_WRONLY | O_CLOEXEC);
      if (cg < 0 || ::write(cg, "0", 1) != 1) child_fail(2, "joining the call's cgroup");
      ::close(cg);
    }
  }
  if (p.as_root) child_stage_and_drop_root(p);
}

std::vector<char*> c_pointers(std::vector<std::string>& v) {
  std::vector<char*> ptrs;
  ptrs.reserve(v.size() + 1);
  for (auto& s : v) ptrs.push_back(s.data());
  ptrs.push_back(nullptr);
  return ptrs;
}

error failed(const char* what, int e) { return make_error(errc::internal, std::string(what) + std::strerror(e)); }

}  // namespace

void run_child(const spawn_plan& p, pid_t parent, char* const* argv, char* const* envp) noexcept {
  child_signals();
  child_descriptors(p);
  if (::chdir(p.jailed ? "/" : p.workdir.c_str()) != 0) child_fail(2, "entering the workspace");
  ::umask(077);
  if (p.jailed) {
    child_jail(p);
  } else if (!drop_capabilities(false)) {
    child_fail(2, "dropping capabilities");
  }
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // after the uid change, which clears it
  if (::getppid() != parent) ::_exit(127);
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) child_fail(2, "setting no_new_privs");
  ::execve(argv[0], argv, envp);
  child_fail(2, "starting the program");
}

result<spawned_child> start(const run_request& req, const sandbox_policy& policy, bool warm) {
  auto plan = prepare(req, policy, warm);
  if (!plan) return std::move(plan).error();
  return fork_plan(std::move(*plan));
}

result<spawned_child> fork_plan(spawn_plan p) {
  std::vector<char*> argv = c_pointers(p.argv);
  std::vector<char*> envp = c_pointers(p.env);
  auto state = std::make_shared<child_state>();  // allocated before the fork: nothing can throw after it
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return failed("could not start the tool process: ", errno);
  if (pid == 0) run_child(p, parent, argv.data(), envp.data());
  state->pid = pid;
  child_guard guard(state);
  p.out_write.reset();  // the child's copies are its own now
  p.status_write.reset();
  p.seccomp_fd.reset();
  p.workspace_fd.reset();
  p.go_child.reset();
  p.in_read.reset();
  p.err_write.reset();
  return spawned_child{std::move(p), std::move(state), std::move(guard)};
}

}  // namespace warden::sandbox::detail
