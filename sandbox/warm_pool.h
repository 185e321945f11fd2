// sandbox::detail warm jails — a jail started before its call, so a call does not wait for
// bubblewrap to build the namespaces and mounts (issue 23: python round trip ≤ 25 ms p50 warm,
// terminal overhead ≤ 10 ms; bench/sandbox_bench.cpp measures both, cold beside).
//
// A warm jail is an ordinary jail (spawn.h, the same bwrap argv, cgroup, rlimits, seccomp,
// workspace binding) whose program is a stub (warm_stub_argv(): bash, no profile, no rc) that
// waits on the go channel (k_go_fd, a socket pair) for the call's go message, then execs the
// call's argv in place: same pid, same jail. Isolation stays per call: a warm jail serves exactly
// one call and is killed with it; the next one is a new jail (a new pid, mount, network, ipc and
// uts namespace, a fresh /tmp and /dev/shm, a new cgroup).
//
// What a warm call sees that a cold one does not: SHLVL=0 in its environment (bash re-exports it
// on exec; PWD=/workspace is bubblewrap's, cold too), and the stub's command line in the jail's
// first process (bubblewrap's init, /proc/1/cmdline). A program whose execve fails inside a warm jail
// is reported as started (bash's message and exit 126/127), where a cold jail reports
// bubblewrap's "execvp" failure as not started: the programs warden runs are fixed paths
// (/usr/bin/python3, /bin/bash) that exist whenever the jail works.
//
// The pool (`warm_pool`): at most one warm jail per workspace, at most `max_jails` in all (the
// least recently made goes first), none older than `idle` (removed when the pool is next
// touched; the sandbox's sweeper touches it every idle / 4). A jail is taken only when its
// workspace is still the folder it was made for (device and inode), and it is still alive.
// sandbox::run() takes one for a jailed call when there is one and the go message fits
// k_warm_max_message, checks the workspace quota then (a warm jail is made with the largest
// file-size limit, file_size_cap(), and the stub lowers it to the value of that moment), and
// makes the next one on a thread of the sandbox's own after the call ends.
// Thread-safety: warm_pool's members may be called from any thread (one mutex); the jails it
// drops are killed and reaped outside it.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sandbox/spawn.h"

namespace warden::sandbox::detail {

/// The largest go message a warm jail takes; a longer argv (a terminal command of more than
/// this) runs cold. bash reads a socket one byte per read(2): 16 KiB cost ~5 ms here, 128 KiB
/// ~45 ms (measured 2026-12-03), more than the cold jail's ~10 ms.
inline constexpr std::size_t k_warm_max_message = 16 * 1024;

/// The stub's argv (bash with a script): write "r" to k_go_fd (ready), read the file-size limit in KiB and the argv strings,
/// each ended by a NUL, from k_go_fd until end of file; close it; lower RLIMIT_FSIZE; exec the
/// argv. Exits 125 when the message is missing or malformed.
std::vector<std::string> warm_stub_argv();

/// The go message for `argv`: the file-size limit in KiB (rounded down), then each string cut at
/// its first NUL (as execve would read it), each followed by a NUL. Pure.
std::string go_message(const std::vector<std::string>& argv, rlim_t max_file_bytes);

/// Waits up to `timeout` for the stub's "r" on the go channel: the jail is built and the stub
/// waits for its message. False when it did not come (the jail is then unusable). Blocking.
bool wait_ready(spawned_child& child, std::chrono::milliseconds timeout);

/// Sends `message` on the child's go channel and closes it (end of file for the stub). False
/// when the stub is gone or the message did not fit at once (the jail is then unusable).
bool send_go(spawned_child& child, const std::string& message);

/// Whether the jail's first process has exited (it can no longer take a call). Non-blocking.
bool has_exited(const spawned_child& child);

class warm_pool {
 public:
  warm_pool(std::size_t max_jails, std::chrono::seconds idle);
  warm_pool(const warm_pool&) = delete;
  warm_pool& operator=(const warm_pool&) = delete;

  /// The warm jail of `workdir`, if there is one made for this folder (same device and inode
  /// now) and still alive; it leaves the pool. Drops expired and dead jails on the way.
  std::optional<spawned_child> take(const std::string& workdir);
  /// Whether a jail for `workdir` should be made now: none there, none being made, the pool not
  /// closed. True marks it as being made: end_fill() must follow.
  bool begin_fill(const std::string& workdir);
  /// The jail made for `workdir` (or nothing when making it failed); `dev`/`ino` identify the
  /// folder it was made for. Past max_jails, the oldest jail goes. After close(), it is dropped.
  void end_fill(const std::string& workdir, std::optional<spawned_child> jail, dev_t dev, ino_t ino);
  /// Drops every jail and refuses new ones.
  void close();
  /// Jails ready now, and whether one is ready for `workdir` (tests and the bench).
  std::size_t size();
  bool ready(const std::string& workdir);

 private:
  struct entry {
    spawned_child jail;
    dev_t dev;
    ino_t ino;
    std::chrono::steady_clock::time_point made;
  };
  /// Moves expired entries into `out` (destroyed by the caller, outside the lock).
  void expire_locked(std::vector<entry>& out);

  std::size_t max_jails_;
  std::chrono::seconds idle_;
  std::mutex mu_;
  std::map<std::string, entry> jails_;
  std::set<std::string> filling_;
  bool closed_ = false;
};

}  // namespace warden::sandbox::detail
