// sandbox::runner — runs one tool program (python3, bash) as a child process, asynchronously.
//
// A `sandbox` object holds the policy (where bubblewrap is) and the cached answer of whether the
// jail works. The server makes one at start-up (app/serve.cpp) and passes it down to the code
// that runs tools; doctor makes its own to probe. There are no process-wide settings.
//
// sandbox::run() spawns `argv` in `workdir`, streams its merged stdout/stderr to `on_output` as
// bytes arrive, and returns when the program has exited and its output is drained. Waiting costs
// no thread (DESIGN.md §4): the pipe and a pidfd are read through asio on the caller's executor.
// A run has three parts (spawn.h):
//   prepare   — builds the spawn as a value: argv (bubblewrap's when jailed), environment, the
//               output pipe, the seccomp and workspace descriptors, the cgroup, the temporary
//               folders (the child allocates nothing);
//   child     — what runs between fork and execve: descriptors, limits, uid, capabilities, the
//               private mount; async-signal-safe calls only;
//   supervise — the coroutine that reads the output and waits for the exit, the timeout or a
//               cancel, kills, drains and reaps.
// The availability check (the first status() probes), prepare and fork happen on a thread of the
// `blocking_pool` when the object has one (an io thread never blocks on them), inline otherwise;
// supervise runs on the caller's executor.
//
// Isolation (`run_request::mode`):
//   sandboxed — the default: the program runs in bubblewrap (bwrap.h: user/pid/net/ipc/uts
//               namespaces, uid 65534, read-only /usr and a curated /etc, the workspace at
//               /workspace, nothing else of the host) with the seccomp filter of
//               seccomp_filter.h, an environment built from scratch (`sandbox_env()`),
//               rlimits (`k_limits`), a cgroup of its own with a process cap, a memory limit and
//               a CPU weight (call_cgroup.h; every value and its reason: limits.h), sized /tmp
//               and /dev/shm, no_new_privs, stdin /dev/null, every other inherited descriptor
//               closed. When the server is root, bubblewrap runs as uid 65534 outside too (the
//               workspace staged in a private mount namespace); RLIMIT_NPROC, which counts
//               that uid's processes in every jail at once, is then set only when the call got
//               no pids cgroup. Killing bwrap tears the pid namespace down:
//               nothing started inside survives, daemons included. Fails closed: when the
//               sandbox is unavailable (status()) the run fails with an actionable message.
//               Bubblewrap reports through `--json-status-fd` when it has started the program;
//               a jail that exits before that did not run it (run_result::started).
//   bypass    — the caller's explicit opt-out (`bypass_permissions`): on the host as the server
//               user, in the workspace, with the server's environment minus every secret
//               (env_scrub.h) and HOME/TMPDIR in a folder of this call only (/tmp/warden-home-*,
//               0700, removed with its contents afterwards), its own session and process group,
//               no rlimits, only CAP_SYS_PTRACE, CAP_SYS_ADMIN and CAP_PERFMON dropped (each lets
//               root read a non-dumpable process's environ). Refused when the server is still
//               dumpable.
// Either way, the workspace is measured first and the run refused (run_result::failure) when it
// is over the policy's quota (workspace_quota.h).
// The server makes itself non-dumpable at start-up (app/serve.cpp), so a tool without
// those capabilities cannot read /proc/<server>/environ or its memory.
// The whole process group is killed with SIGKILL when the timeout passes, when `cancel` fires,
// and when the coroutine is destroyed or cancelled early (client gone), or its started child is
// dropped unsupervised (the io_context went away while it was on the pool); the child is always
// reaped. Output after the program exits is drained for `k_drain_grace` at most (a background
// process that keeps the pipe open does not hold the call); what is already in the pipe then is
// still taken, up to `k_drain_max_bytes`.
// The child gets SIGKILL when the thread that forked it ends (PR_SET_PDEATHSIG): the pool's
// threads (or the io threads, without a pool) must outlive the runs, as they do in the server.
//
// Errors: spawn failures are returned in run_result::failure (errc::internal, naming what
// failed; also a run that reaches a stopped pool); the program's own failures are exit codes,
// not errors.
// Thread-safety: one `sandbox` serves the whole server: run() may be called concurrently from
// many coroutines on any executors, status() and probe() from any thread (the first status()
// probes once; concurrent callers wait for that answer). The object must outlive its runs, and
// its pool (if any) must outlive the object's runs.
#pragma once

#include <sys/resource.h>

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "common/cancel_token.h"
#include "common/error.h"
#include "common/result.h"
#include "sandbox/limits.h"

namespace warden {
class blocking_pool;  // common/blocking_pool.h
}

namespace warden::sandbox {

namespace detail {
class warm_pool;       // warm_pool.h
struct spawned_child;  // spawn.h
}  // namespace detail

enum class isolation { sandboxed, bypass };

/// Where bubblewrap is and the limits an operator sets (limits.h); fixed for the life of a
/// `sandbox`. app/serve.cpp fills it from the config (--bwrap, --call-memory, --workspace-quota).
struct sandbox_policy {
  std::string bwrap_path = "/usr/bin/bwrap";
  std::uint64_t call_memory_bytes = k_default_call_memory_mib * k_mib;  ///< a call's cgroup memory limit; 0 = none
  std::uint64_t workspace_quota_bytes = k_default_workspace_quota_mib * k_mib;  ///< checked before each call; 0 = none
  bool call_cgroups = true;  ///< false: no cgroup per call (sandbox_bench measures what one costs)
  /// Warm jails kept at most (warm_pool.h; --warm-jails): one per recently used workspace, made
  /// on a thread of the sandbox's own after a jailed call ends; 0 = every jail starts cold. Used
  /// only by a `sandbox` that has a blocking pool.
  std::size_t warm_jails = 8;
  std::chrono::seconds warm_idle{120};  ///< a warm jail unused this long is dropped
};

/// Whether sandboxed runs can start. Tools fail closed when not.
struct sandbox_status {
  bool available = false;
  std::string detail;  ///< what works or what is missing
  std::string fix;     ///< how to fix it ("" when available)
};
/// The error a tool reports when the sandbox is unavailable: what, how to fix, and that
/// `bypass_permissions` is the explicit opt-out.
std::string unavailable_message(const sandbox_status& st);
/// Makes a workspace folder or file usable by the sandbox user: a root server's jail runs as uid
/// 65534 outside too, so the path is given to it (lchown); otherwise nothing to do (the jail's uid
/// maps to the server's own).
void hand_over(const std::string& path);

/// Output read after the program's exit is waited for this long at most.
inline constexpr std::chrono::milliseconds k_drain_grace{200};
/// After that grace, what is already in the pipe is still taken, up to this many bytes (a
/// background writer outside the group cannot hold the call).
inline constexpr std::size_t k_drain_max_bytes = 1u << 20;

struct run_request {
  std::vector<std::string> argv;          ///< argv[0] is an absolute path
  std::string workdir;                    ///< absolute; must exist
  isolation mode = isolation::sandboxed;
  std::chrono::milliseconds timeout{300000};  ///< wall clock; 0 = no limit
  std::size_t keep_output_bytes = 256 * 1024;  ///< head of the output kept in run_result::output
};

/// A long-lived program with its own stdin, stdout and stderr pipes: an MCP stdio server
/// (issue 26). Jailed like a tool call (the same bubblewrap profile, seccomp filter, cgroup and
/// rlimits but RLIMIT_CPU, which would end a server that lives for hours), with no network unless
/// `network` (then the host's network namespace and its /etc/resolv.conf, /etc/hosts), the
/// `read_only_paths` bound read-only at the same place, and `env` on top of sandbox_env() (jailed)
/// or of the server's environment minus its secrets (bypass). No timeout: it runs until stopped.
struct service_request {
  std::vector<std::string> argv;          ///< argv[0] is an absolute path
  std::string workdir;                    ///< absolute; must exist (its own workspace)
  isolation mode = isolation::sandboxed;
  bool network = false;
  std::vector<std::string> read_only_paths;  ///< absolute host paths
  std::vector<std::string> env;              ///< "NAME=value"
};

/// A started service: the server end of its pipes and its process group. Destroying it kills the
/// group (SIGKILL) and reaps it (off the calling thread when that would block), then removes its
/// temporary folders and cgroup.
/// Thread-safety: kill() and exited() from any thread; each descriptor belongs to one reader or
/// writer at a time.
class service_process {
 public:
  struct impl;
  explicit service_process(std::unique_ptr<impl> p);
  ~service_process();
  service_process(const service_process&) = delete;
  service_process& operator=(const service_process&) = delete;

  int stdin_fd() const noexcept;   ///< write end of the program's stdin (blocking)
  int stdout_fd() const noexcept;  ///< read end of its stdout (blocking)
  int stderr_fd() const noexcept;  ///< read end of its stderr (blocking)
  int pid() const noexcept;
  /// SIGKILL to the whole group (nothing once reaped).
  void kill();
  /// Reaps without blocking: the exit status (128+N for signal N) once it has ended.
  std::optional<int> exited();

 private:
  std::unique_ptr<impl> impl_;
};


struct run_result {
  int exit_code = -1;        ///< the program's exit status; -1 when killed by a signal
  int term_signal = 0;       ///< the signal that ended it, 0 when it exited
  bool timed_out = false;
  bool cancelled = false;
  std::string output;        ///< the first keep_output_bytes bytes of merged stdout/stderr
  std::uint64_t output_bytes = 0;  ///< all bytes the program wrote
  std::optional<error> failure;    ///< the program could not be started (nothing ran): the sandbox is
                                   ///< unavailable, the workspace is over its quota, a spawn step failed
  /// The program was started: bubblewrap reported how it ended (`--json-status-fd`'s "exit-code",
  /// written only for a program it executed; when bubblewrap was killed, its "child-pid"), or, in
  /// bypass, execve succeeded (detail: spawn.h, started_from_report). False with `failure`, and
  /// when the jail could not start the program (bubblewrap exited by itself without running it;
  /// `output` then holds its message, e.g. "bwrap: Creating new namespace failed: …", "bwrap:
  /// execvp …"): such a call did not run.
  bool started = false;
  /// The kernel killed at least one of the call's processes at the memory limit of its cgroup
  /// (call_cgroup::memory_kills), whose size is memory_limit_bytes.
  bool memory_killed = false;
  std::uint64_t memory_limit_bytes = 0;
  /// The run took a warm jail (warm_pool.h): started before the call, its program exec'd in it.
  bool warm = false;
};

/// Why a finished run did not run its program (failure's message, or the jail's own message),
/// or nullopt when it ran (or was cancelled or timed out before it could start).
std::optional<std::string> not_started_reason(const run_result& r);

struct run_callbacks {
  /// Each piece of output as it arrives (raw bytes; may split UTF-8 sequences).
  std::function<boost::asio::awaitable<void>(std::string_view)> on_output;
  /// Called after `idle_interval` without output (keep-alives); may be empty.
  std::function<boost::asio::awaitable<void>()> on_idle;
  std::chrono::milliseconds idle_interval{15000};
};

/// The environment of a sandboxed program: PATH, HOME and TMPDIR (= `home`: the jail's private
/// tmpfs /tmp, k_inner_home, so nothing written there outlives the call), PYTHONNOUSERSITE=1,
/// LANG, TERM=dumb, PYTHONIOENCODING=utf-8, PYTHONUNBUFFERED=1, MPLBACKEND=Agg (reference §4.4).
/// Nothing is inherited from the server.
std::vector<std::string> sandbox_env(const std::string& home);

/// The tool sandbox of one server: its policy, the cached availability, and the runs.
class sandbox {
 public:
  /// `pool`: where prepare and fork run (nullptr: inline on the caller's thread); not owned.
  explicit sandbox(sandbox_policy p, warden::blocking_pool* pool = nullptr);
  sandbox(const sandbox&) = delete;
  sandbox& operator=(const sandbox&) = delete;

  const sandbox_policy& policy() const noexcept;
  /// Starts the jail once with /bin/true (blocking, tens of ms, on the calling thread), caches
  /// the answer and returns it. warden serve calls it at start-up.
  sandbox_status probe();
  /// The cached answer; probes on first use (blocking then). Thread-safe.
  sandbox_status status();
  /// Runs one program (see the top of this file). Fails closed: a sandboxed run while status()
  /// says unavailable returns run_result::failure with unavailable_message(). A jailed run takes
  /// the workspace's warm jail when there is one (warm_pool.h), and after it ends has the next
  /// one made on the sandbox's fill thread.
  boost::asio::awaitable<run_result> run(run_request req, std::shared_ptr<cancel_token> cancel, run_callbacks cb);
  /// Starts a long-lived service (service_request). Blocking (prepare and fork): call it from a
  /// thread that outlives the service (the blocking pool's: the child dies with the thread that
  /// forked it). Fails closed like run(): unavailable sandbox, spawn failures → errc::internal.
  result<std::unique_ptr<service_process>> start_service(const service_request& req);

  /// Makes `workdir`'s warm jail now unless there is one (blocking, on the calling thread); true
  /// when one is ready afterwards. For tests and the bench; run() does this on its fill thread.
  bool prewarm(const std::string& workdir);
  /// Warm jails ready now.
  std::size_t warm_jails();

  /// Drops the warm jails, and waits for the one being made.
  ~sandbox();

 private:
  /// The warm jail for `req`, its go message sent, or nullopt (run it cold); an error when the
  /// workspace is over its quota. On a pool thread.
  std::optional<result<detail::spawned_child>> take_warm(const run_request& req);
  void refill(const std::string& workdir);

  sandbox_policy policy_;
  warden::blocking_pool* pool_;
  std::mutex mu_;        ///< guards status_
  std::mutex probe_mu_;  ///< one first-use probe at a time
  std::optional<sandbox_status> status_;
  std::unique_ptr<detail::warm_pool> warm_;
  std::unique_ptr<warden::blocking_pool> fill_pool_;  ///< where warm jails are made (one thread)
  /// Drops idle warm jails on time (warm_pool.h) until the destructor sets closing_.
  void sweep_idle();
  std::thread sweeper_;
  std::mutex sweep_mu_;
  std::condition_variable sweep_cv_;
  bool closing_ = false;
};

}  // namespace warden::sandbox
