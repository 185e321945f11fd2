// call_cgroup — the cgroup of one sandboxed call: a process cap (pids.max), a memory limit and a
// CPU weight (the values and their reasons: limits.h), for a root server and a non-root one alike.
//
// Where: for each controller (pids, memory, cpu) the hierarchy that has it, read from
// /proc/self/mounts and /proc/self/cgroup (plan_call_cgroups(), pure):
//   cgroup v2 — the unified hierarchy when its root lists the controller in cgroup.controllers:
//               `<mount>/warden/run-<pid>-<n>`; warden/ gets the controllers in its
//               subtree_control (so the root's subtree_control must have them, or be writable:
//               root only; a v2 cgroup of the server's own cannot be used, since it holds the
//               server's processes and v2 forbids controllers there);
//   cgroup v1 — the controller's own hierarchy (`/sys/fs/cgroup/pids`, `memory`, `cpu`, or a
//               co-mounted `cpu,cpuacct`), nested under the server's own cgroup in it:
//               `<mount><own path>/warden/run-<pid>-<n>`, so limits set on the server's cgroup
//               (a systemd unit, a container) still hold for its calls. A non-root server can use
//               it when that folder is writable (delegated to its user).
// A controller whose hierarchy is missing or not writable is skipped; the call then runs without
// that limit (the fallbacks: RLIMIT_NPROC, RLIMIT_AS; see limits.h). `warden doctor` shows what
// holds (call_cgroup_summary()).
//
// create() makes the call's folder in each usable hierarchy and writes its limits; the child
// joins them by writing "0" to each of `procs_paths()` before it execs bubblewrap, so everything
// started in the jail counts. The folders are removed when the object is destroyed (after the
// call's processes are gone; one the kernel still releases is removed by a later create()).
// Folders of a server that is gone (crash, kill) are removed when the next server starts.
// Cost (bench/sandbox_bench, cgroup v1 with 3 hierarchies, a 2-core machine at load 8-17):
// create + join + remove took 1.3-3.2 ms p50 per call against 0.3-0.4 ms for the bare fork and
// reap, lost in the noise of a jail's round trip (50-150 ms there).
// Thread-safety: create() may be called concurrently; an object belongs to one call.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace warden::sandbox {

/// What a call cgroup limits.
struct call_limits {
  unsigned max_processes = 0;      ///< pids.max; 0 = not limited
  std::uint64_t memory_bytes = 0;  ///< memory.max / memory.limit_in_bytes; 0 = not limited
  unsigned cpu_weight = 0;         ///< cgroup v2 scale (1..10000, default 100); v1 cpu.shares = weight*1024/100; 0 = unset
};

enum class cgroup_controller { pids, memory, cpu };
const char* to_string(cgroup_controller c) noexcept;

/// One controller's place: the folder that holds the run-* folders, and the hierarchy's version.
struct cgroup_place {
  cgroup_controller controller = cgroup_controller::pids;
  std::string base;   ///< e.g. "/sys/fs/cgroup/pids/warden"
  bool v2 = false;
  std::string mount;  ///< the hierarchy's mount point, e.g. "/sys/fs/cgroup/pids"
};

/// Where each controller's call cgroups go, from the text of /proc/self/mounts, of
/// /proc/self/cgroup, and of the v2 root's cgroup.controllers ("" when none). Controllers with no
/// hierarchy are absent. Pure.
std::vector<cgroup_place> plan_call_cgroups(std::string_view mounts, std::string_view self_cgroup,
                                            std::string_view v2_root_controllers);

/// The file a limit is written to, and its text; nullopt when the limit is 0 (not limited). Pure.
struct cgroup_write {
  std::string file;  ///< relative to the call's folder
  std::string value;
  bool optional = false;  ///< missing on some kernels (v1 memsw, v2 swap): skipped when absent
};
std::vector<cgroup_write> limit_writes(cgroup_controller c, bool v2, const call_limits& l);

class call_cgroup {
 public:
  /// The call's cgroup in every usable hierarchy; nullopt when none is usable (then the call has
  /// none of these limits).
  static std::optional<call_cgroup> create(const call_limits& limits);
  call_cgroup(call_cgroup&& o) noexcept;
  call_cgroup& operator=(call_cgroup&&) = delete;
  call_cgroup(const call_cgroup&) = delete;
  ~call_cgroup();

  /// The cgroup.procs files the child writes "0" to (one per hierarchy).
  const std::vector<std::string>& procs_paths() const { return procs_; }
  /// Whether this call's processes are capped by pids.max (then RLIMIT_NPROC is not needed).
  bool limits(cgroup_controller c) const;
  /// The call's folders (one per hierarchy).
  const std::vector<std::string>& dirs() const { return dirs_; }
  /// The memory limit it holds, in bytes (0 when the memory controller is not held).
  std::uint64_t memory_limit() const { return limits(cgroup_controller::memory) ? memory_bytes_ : 0; }
  /// How many of the call's processes the kernel killed at the memory limit: `oom_kill` of
  /// memory.events (v2) or memory.oom_control (v1, Linux 4.13 and later); 0 when the memory
  /// controller is not held or the kernel does not count them. Blocking (reads a file).
  std::uint64_t memory_kills() const;

 private:
  call_cgroup() = default;
  std::uint64_t memory_bytes_ = 0;
  std::string memory_dir_;  ///< the folder of the memory controller ("" when not held)
  bool memory_v2_ = false;
  std::vector<std::string> dirs_;
  std::vector<std::string> procs_;
  std::vector<cgroup_controller> held_;
};

/// The places create() uses on this machine, after setting them up once (mkdir, v2
/// subtree_control, removal of stale folders); empty when none is usable.
const std::vector<cgroup_place>& call_cgroup_places();

/// One line for doctor: which limits hold where ("" when none).
std::string call_cgroup_summary();

/// Removes the empty folders `<dir>/<prefix><pid>-*` of servers that are gone (no /proc/<pid>):
/// what a killed server left (its call cgroups, its jails' stage folders). A folder of a live
/// server, or one not empty (or a cgroup still in use), is left.
void remove_dead_servers_folders(const std::string& dir, std::string_view prefix);

}  // namespace warden::sandbox
