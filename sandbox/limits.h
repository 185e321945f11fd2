// limits — every resource limit a tool call runs under: its value and the reason for it, in one
// place (docs/security.md's "Limits" section and the README's table quote this file).
//
//   per process  rlimits (k_limits), set in the child before bubblewrap starts; sandboxed runs only.
//   per call     a cgroup of its own (call_cgroup.h): processes (pids.max), memory
//                (memory.max / memory.limit_in_bytes, swap included where the kernel counts it)
//                and CPU weight (cpu.weight / cpu.shares). Sandboxed runs only.
//   per call     the jail's file systems (bwrap.h): /tmp and /dev/shm are tmpfs of a fixed size,
//                /dev is read-only. The tmpfs pages count against the call's memory limit too.
//   per session  the workspace quota (workspace_quota.h): before each call (sandboxed or bypass)
//                the session workspace is measured and the call refused past the quota; in the
//                jail no single file may grow past what is left of it (RLIMIT_FSIZE).
// The values that an operator sets (the call's memory, the workspace quota) come from
// sandbox_policy (runner.h), filled from the config table (--call-memory, --workspace-quota);
// the defaults here are the same as the table's.
// The shared budget they replace: as root every jail runs as uid 65534, and RLIMIT_NPROC counts
// that uid's processes, so one call's fork flood used to fail every other session's calls
// ("bwrap: Creating new namespace failed", issue 22). With a pids cgroup per call that rlimit is
// raised to the server's hard limit (unlimited, or the kernel's default, threads-max / 2: raising
// the hard limit needs CAP_SYS_RESOURCE); 512 stays only as the fallback when no pids cgroup can
// be made.
// Thread-safety: constants.
#pragma once

#include <sys/resource.h>

#include <cstdint>

namespace warden::sandbox {

inline constexpr std::uint64_t k_mib = std::uint64_t{1} << 20;

/// Processes one sandboxed call may have at once: its pids cgroup's pids.max, or (no pids cgroup
/// and a root server) RLIMIT_NPROC of uid 65534 as a fallback. A fork bomb stops there; 512
/// leaves room for a parallel build or a process pool (reference unsloth-studio.md §4.4 uses a
/// per-call cap of the same order).
inline constexpr unsigned k_max_processes = 512;

/// Memory of one call, all its processes and its tmpfs pages together (--call-memory's default,
/// MiB): a runaway allocation is OOM-killed inside its own call instead of pushing the host (and
/// every other session) into swap or the global OOM killer. 4 GiB: enough for pandas-sized work;
/// a single process is also capped at 8 GiB of address space (k_limits).
inline constexpr std::uint64_t k_default_call_memory_mib = 4096;

/// CPU weight of each call's cgroup: the default of cgroup v2 (cpu.weight 100; on v1 cpu.shares
/// 1024). Every call weighs the same, however many processes it runs, so a call with 500 busy
/// processes gets the same share of a busy CPU as a call with one (the kernel splits by group).
inline constexpr unsigned k_call_cpu_weight = 100;

/// Size of the jail's private /tmp (also HOME and TMPDIR): enough for pip's and matplotlib's
/// caches and scratch files; without a size a tmpfs may take half the machine's RAM.
inline constexpr std::uint64_t k_tmp_bytes = 256 * k_mib;
/// Size of the jail's /dev/shm (POSIX shared memory, multiprocessing's semaphores and queues).
inline constexpr std::uint64_t k_shm_bytes = 64 * k_mib;

/// Default disk quota of one session's workspace (--workspace-quota's default, MiB).
inline constexpr std::uint64_t k_default_workspace_quota_mib = 1024;

/// rlimits applied to sandboxed runs; values from the reference system (unsloth-studio.md §4.4).
struct rlimit_spec {
  int resource;
  rlim_t value;
  const char* why;
};
inline constexpr rlimit_spec k_limits[] = {
    {RLIMIT_AS, rlim_t{8} << 30, "address space 8 GiB: a runaway allocation fails instead of swapping the host"},
    {RLIMIT_CPU, 600, "600 CPU seconds: a busy loop cannot outlive a long wall-clock timeout"},
    {RLIMIT_FSIZE, rlim_t{100} << 20,
     "files up to 100 MiB, and no larger than what is left of the workspace quota: one write cannot fill the "
     "disk or take the workspace far past its quota"},
    {RLIMIT_NOFILE, 16384, "16384 open files (clamped to the hard limit)"},
    {RLIMIT_CORE, 0, "no core dumps in the workspace"},
    {RLIMIT_NPROC, k_max_processes,
     "the fallback process cap, only for a root server's call that got no pids cgroup: it counts every process "
     "of uid 65534, which all jails share, so one call's fork flood can then starve the others; a root server's "
     "call with a pids cgroup runs with the server's hard limit (not this one), and a non-root server never sets it (it would count the "
     "server user's own processes)"},
};

}  // namespace warden::sandbox
