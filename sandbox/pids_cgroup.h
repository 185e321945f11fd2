// pids_cgroup — a per-call process-count limit for a server that is not root (RLIMIT_NPROC
// would count every process of that user). A root server does not need it: its jails run as
// uid 65534 outside, where RLIMIT_NPROC holds (and attaching to a v1 cgroup costs ~10 ms a call).
//
// create() makes `<pids hierarchy>/warden/run-<n>` with pids.max = max_pids: cgroup v1
// (/sys/fs/cgroup/pids) or v2 (/sys/fs/cgroup with the pids controller). The child joins it
// by writing "0" to `procs_path()` before it execs, so everything it starts counts. The folder
// is removed when the object is destroyed (after the run's processes are gone).
// nullopt when no writable pids hierarchy exists: the call then has no process cap. Measured on this kind of machine: dependencies.md §4 (cgroup v1, pids.max
// = 20 allowed 17 forks, then EAGAIN).
// Thread-safety: create() may be called concurrently.
#pragma once

#include <optional>
#include <string>

namespace warden::sandbox {

class pids_cgroup {
 public:
  static std::optional<pids_cgroup> create(unsigned max_pids);
  pids_cgroup(pids_cgroup&& o) noexcept : dir_(std::move(o.dir_)), procs_(std::move(o.procs_)) { o.dir_.clear(); }
  pids_cgroup& operator=(pids_cgroup&&) = delete;
  pids_cgroup(const pids_cgroup&) = delete;
  ~pids_cgroup();
  const std::string& procs_path() const { return procs_; }

 private:
  pids_cgroup(std::string dir, std::string procs) : dir_(std::move(dir)), procs_(std::move(procs)) {}
  std::string dir_;
  std::string procs_;
};

/// Which hierarchy create() uses, for doctor ("" when none).
std::string pids_cgroup_root();

}  // namespace warden::sandbox
