// sandbox::detail spawn — the three parts of one run (runner.h), internal to the sandbox module.
//
//   prepare()   — builds a spawn_plan: the value that describes the spawn (argv, environment,
//                 descriptors, cgroup, temporary folders). Blocking file-system calls only; no
//                 process is started. Its failures are errc::internal errors naming what failed.
//   start()     — prepare(), then fork; the child part (child.cpp) runs between fork and execve
//                 and makes async-signal-safe calls only. Returns the running child, owned.
//   supervise() — the coroutine that reads the output, waits for the exit, the timeout or a
//                 cancel, kills, drains and reaps (supervise.cpp).
// prepare() and start() may run on any thread (a blocking_pool's); supervise() runs on the
// caller's executor.
// Ownership: a spawned_child kills and reaps its process group when destroyed before supervise()
// has reaped it, then removes the run's temporary folders and cgroup.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>
#include <unistd.h>

#include <boost/asio/awaitable.hpp>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/cancel_token.h"
#include "common/result.h"
#include "sandbox/call_cgroup.h"
#include "sandbox/runner.h"

namespace warden::sandbox::detail {

/// A descriptor, closed on destruction.
class owned_fd {
 public:
  owned_fd() = default;
  explicit owned_fd(int fd) noexcept : fd_(fd) {}
  owned_fd(owned_fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  owned_fd& operator=(owned_fd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  owned_fd(const owned_fd&) = delete;
  owned_fd& operator=(const owned_fd&) = delete;
  ~owned_fd() { reset(); }

  int get() const noexcept { return fd_; }
  int release() noexcept { return std::exchange(fd_, -1); }
  void reset() noexcept;

 private:
  int fd_ = -1;
};

/// A temporary folder, removed on destruction: rmdir (an empty mount point), or with everything
/// in it (a call's HOME).
class owned_dir {
 public:
  owned_dir() = default;
  owned_dir(std::string path, bool with_contents) : path_(std::move(path)), with_contents_(with_contents) {}
  owned_dir(owned_dir&& o) noexcept : path_(std::exchange(o.path_, {})), with_contents_(o.with_contents_) {}
  owned_dir& operator=(owned_dir&& o) noexcept {  // the old folder goes with `o`
    std::swap(path_, o.path_);
    std::swap(with_contents_, o.with_contents_);
    return *this;
  }
  owned_dir(const owned_dir&) = delete;
  ~owned_dir();

  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
  bool with_contents_ = false;
};

/// The descriptors the child passes on, by number: the seccomp program (jailed), the workspace
/// (jailed, not root), and the start report (bubblewrap's --json-status-fd when jailed; in bypass
/// it is close-on-exec, so it closes empty when execve succeeds).
inline constexpr int k_seccomp_fd = 3;
inline constexpr int k_workspace_fd = 4;
inline constexpr int k_status_fd = 5;
/// A warm jail's go channel (warm_pool.h): the stub reads the call's program from it.
inline constexpr int k_go_fd = 6;

/// Everything the child needs, built before the fork (the child only reads it).
struct spawn_plan {
  bool jailed = true;              ///< isolation::sandboxed
  bool as_root = false;            ///< the server is root: a jail stages the workspace, drops to 65534
  std::vector<std::string> argv;   ///< what is exec'd: bwrap's whole argv when jailed
  std::vector<std::string> env;    ///< the program's environment (bypass); bwrap's is empty
  std::string workdir;             ///< bypass: the working directory; jailed: the workspace
  owned_fd out_read, out_write;    ///< the merged stdout/stderr pipe
  owned_fd status_read, status_write;  ///< the start report (k_status_fd): did the program start?
  owned_fd seccomp_fd;             ///< jailed: the BPF program, passed as k_seccomp_fd
  owned_fd workspace_fd;           ///< jailed, not root: the workspace (O_PATH), passed as k_workspace_fd
  std::optional<call_cgroup> cgroup;  ///< jailed, when any hierarchy is usable (call_cgroup.h)
  bool nproc_rlimit = false;       ///< jailed as root without a pids cgroup: RLIMIT_NPROC is the cap
  rlim_t max_file_bytes = 0;       ///< jailed: RLIMIT_FSIZE (k_limits' value, less near the quota)
  owned_dir stage;                 ///< jailed as root: where the child's mount shows the workspace
  owned_dir home;                  ///< bypass: the call's own HOME
  /// A warm jail (warm_pool.h): one end of a socket pair, passed as k_go_fd (the stub's, at 10 or
  /// above until the child's dup2); the other end stays here until the call's go message is sent.
  owned_fd go_child, go_parent;
  bool warm = false;               ///< made as a warm jail (its program is the stub)
  /// A service (runner.h service_request): stdin and stderr are pipes of their own (out_* is then
  /// stdout alone), no RLIMIT_CPU; as root each read-only path is bound onto a stage folder of its
  /// own in the child's mount namespace (ro_stages[i] ← ro_sources[i]) before the uid drop.
  bool service = false;
  owned_fd in_read, in_write;
  owned_fd err_read, err_write;
  std::vector<std::string> ro_sources;
  std::vector<owned_dir> ro_stages;
};

/// Builds the spawn of `req` (argv non-empty). Blocking (the quota walk, mkdtemp, memfd, cgroup),
/// no fork. A workspace over the quota is an errc::internal error with the refusal's text.
/// `warm`: a jailed spawn that also gets the go channel (k_go_fd; warm_pool.h); its quota is
/// checked when a call takes it, not here (max_file_bytes is file_size_cap()).
result<spawn_plan> prepare(const run_request& req, const sandbox_policy& policy, bool warm = false);
/// Builds the spawn of a service (runner.h service_request): the same jail, its own pipes.
result<spawn_plan> prepare_service(const service_request& req, const sandbox_policy& policy);
/// Forks the child of a prepared plan (the child runs run_child); the parent's copies of the
/// child's ends are closed.
result<spawned_child> fork_plan(spawn_plan p);

/// The largest file any call may write: k_limits' RLIMIT_FSIZE, no more than the server's hard
/// limit (the child cannot raise its own past it).
rlim_t file_size_cap();

/// The quota check of a call in `workdir` (workspace_quota.h): the refusal past the quota, else
/// the largest file the call may write (file_size_cap(), less near the quota). Blocking (walks
/// the workspace).
result<rlim_t> file_limit_for(const std::string& workdir, const sandbox_policy& policy);

/// The child's process group, killable from any thread until it is reaped.
struct child_state {
  std::mutex mu;
  pid_t pid = -1;
  bool reaped = false;

  /// SIGKILL to the group (to the child alone while it has none yet); nothing once reaped.
  void kill_group();
  /// Reaps without blocking; true once reaped (`status` is set then). Once the leader has exited
  /// (a zombie, so its id cannot be reused yet), what is left of its group is killed first.
  bool try_reap(int& status);
};

/// Kills and reaps the child unless release()d (the coroutine ended early, or the spawn was
/// never supervised); the reap moves to a thread of its own when it would block.
class child_guard {
 public:
  explicit child_guard(std::shared_ptr<child_state> st) : st_(std::move(st)) {}
  child_guard(child_guard&&) noexcept = default;
  child_guard& operator=(child_guard&&) = delete;
  child_guard(const child_guard&) = delete;
  ~child_guard();
  void release() noexcept { st_.reset(); }

 private:
  std::shared_ptr<child_state> st_;
};

/// A started child and what it uses; destroyed after the child is gone (members in that order).
struct spawned_child {
  spawn_plan plan;                     ///< out_read still open; out_write closed
  std::shared_ptr<child_state> state;
  child_guard guard;                   ///< destroyed first: kill and reap before the cleanup
};

/// Whether the program started, from what the start pipe held after the child was reaped and
/// whether the child (bubblewrap, or the bypass program) exited by itself (`exited`: not killed by
/// a signal). Bypass: nothing in the pipe (execve closed it), not the child's "!" (it failed
/// before execve). Jail: bubblewrap writes {"child-pid": N} as soon as it has cloned the jail's
/// first process (before the jail's mounts and the execvp, which may still fail) and
/// {"exit-code": N} only for a program that was executed (measured with bubblewrap 0.8: a failed
/// mount or execvp exits 1 with neither line after "child-pid"); so a bubblewrap that exited by
/// itself started the program iff it wrote "exit-code", and one that was killed (the timeout, a
/// cancel) iff it got as far as "child-pid" (what happened after that is unknown: it counts as
/// started). Pure.
bool started_from_report(bool jailed, const std::string& report, bool exited);

/// prepare(), then fork; the child runs the child part and execs plan.argv.
result<spawned_child> start(const run_request& req, const sandbox_policy& policy, bool warm = false);

/// The child part: between fork and execve, async-signal-safe calls only. Never returns.
[[noreturn]] void run_child(const spawn_plan& p, pid_t parent, char* const* argv, char* const* envp) noexcept;

/// Supervises a started child to its end (see the top of this file); once it is reaped, reads the
/// start report into run_result::started (started_from_report()).
boost::asio::awaitable<run_result> supervise(spawned_child child, run_request req, std::shared_ptr<cancel_token> cancel,
                                             run_callbacks cb);

}  // namespace warden::sandbox::detail
