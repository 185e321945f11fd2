// workspace_quota — the disk quota of a session's workspace: measured before each call and the
// call refused past it (limits.h). Not a file-system quota (that needs XFS project quotas or a
// mount per session, neither of which warden can count on): a call that starts under the quota
// may still write past it, by at most one file of what was left (RLIMIT_FSIZE, in the jail) per
// file it writes, until its timeout; the next call of the session is then refused, with the
// numbers, until files are removed. The server's disk is what the quota protects: other
// sessions' calls and warden's own database keep working.
//
// measure_workspace() walks the folder (no symlink followed, not across mount points), summing
// the space its entries take on disk (st_blocks, so a sparse file counts what it allocates), and
// stops after `max_entries` entries (a bounded walk: a workspace of millions of files is refused
// for its count instead of taking seconds to measure).
// Blocking (file system); runs in the sandbox's prepare step, on the blocking pool.
// Thread-safety: pure functions and a walk over one folder.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace warden::sandbox {

/// Entries a measurement looks at before it stops (and the call is refused for the count).
inline constexpr std::uint64_t k_max_workspace_entries = 200000;

struct workspace_usage {
  std::uint64_t bytes = 0;    ///< allocated bytes of everything seen
  std::uint64_t entries = 0;  ///< files, folders, links seen
  bool truncated = false;     ///< the walk stopped at max_entries
};

workspace_usage measure_workspace(const std::string& dir, std::uint64_t max_entries = k_max_workspace_entries);

/// Why a call may not run in a workspace with `u`, or nullopt when it may (`quota_bytes` 0 = no
/// quota). The text names the size and the quota in MiB. Pure.
std::optional<std::string> quota_refusal(const workspace_usage& u, std::uint64_t quota_bytes);

/// The largest file a call may write: the smaller of `cap` and what is left of the quota, but at
/// least 1 MiB (so a call near the quota can still write small scratch files). Pure.
std::uint64_t file_size_limit(const workspace_usage& u, std::uint64_t quota_bytes, std::uint64_t cap);

}  // namespace warden::sandbox
