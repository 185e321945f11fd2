// pids_cgroup — a process-count limit that holds for root too (RLIMIT_NPROC does not: the
// kernel exempts uid 0, and a root server's bubblewrap maps the jail's uid to root outside).
//
// create() makes `<pids hierarchy>/warden/run-<n>` with pids.max = max_pids: cgroup v1
// (/sys/fs/cgroup/pids) or v2 (/sys/fs/cgroup with the pids controller). The child joins it
// by writing "0" to `procs_path()` before it execs, so everything it starts counts. The folder
// is removed when the object is destroyed (after the run's processes are gone).
// nullopt when no writable pids hierarchy exists (not root, or no controller): callers fall
// back to RLIMIT_NPROC. Measured on this kind of machine: dependencies.md §4 (cgroup v1, pids.max
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
