#include "sandbox/workspace_quota.h"

#include <fcntl.h>
#include <fts.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "sandbox/limits.h"

namespace warden::sandbox {

namespace {

std::string mib(std::uint64_t bytes) { return std::to_string((bytes + k_mib - 1) / k_mib) + " MiB"; }

/// One walk; the folders it could not read (their contents uncounted) go to `unreadable`.
workspace_usage walk(const std::string& dir, std::uint64_t max_entries, std::vector<std::string>* unreadable) {
  workspace_usage u;
  std::string path = dir;
  char* roots[] = {path.data(), nullptr};
  FTS* fts = ::fts_open(roots, FTS_PHYSICAL | FTS_XDEV | FTS_NOCHDIR, nullptr);
  if (!fts) return u;
  while (FTSENT* e = ::fts_read(fts)) {
    if (e->fts_info == FTS_DP) continue;  // a folder again, after its contents
    if (u.entries >= max_entries) {
      u.truncated = true;
      break;
    }
    ++u.entries;
    if (e->fts_info == FTS_DNR && unreadable) unreadable->emplace_back(e->fts_path);
    if (e->fts_statp && e->fts_info != FTS_NS && e->fts_info != FTS_NSOK && e->fts_info != FTS_ERR) {
      u.bytes += static_cast<std::uint64_t>(e->fts_statp->st_blocks) * 512;
    }
  }
  ::fts_close(fts);
  return u;
}

/// Gives the owner back read and search permission on a folder of its own, without following a
/// symlink (the jail's program may have swapped one in): chmod through an O_PATH descriptor.
void reopen_folder(const std::string& path) {
  const int fd = ::open(path.c_str(), O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    const std::string via = "/proc/self/fd/" + std::to_string(fd);
    (void)::chmod(via.c_str(), (st.st_mode & 07777) | S_IRWXU);
  }
  ::close(fd);
}

}  // namespace

workspace_usage measure_workspace(const std::string& dir, std::uint64_t max_entries) {
  // A tool that made one of its folders unreadable (chmod 000) would hide what is in it from a
  // server that is not root: such folders are given back to their owner and the walk repeated.
  std::vector<std::string> unreadable;
  workspace_usage u = walk(dir, max_entries, &unreadable);
  if (unreadable.empty()) return u;
  for (const auto& p : unreadable) reopen_folder(p);
  return walk(dir, max_entries, nullptr);
}

std::optional<std::string> quota_refusal(const workspace_usage& u, std::uint64_t quota_bytes) {
  if (quota_bytes == 0) return std::nullopt;
  // a tool call cannot free it (none runs), so the text says who can
  const std::string tail =
      "; no tool call runs in this session until someone removes files from the session's workspace folder on the "
      "server, or use another session";
  if (u.truncated) {
    return "the session workspace holds more than " + std::to_string(u.entries) +
           " files and folders (the most warden measures before a call), over its quota of " + mib(quota_bytes) + tail;
  }
  if (u.bytes <= quota_bytes) return std::nullopt;
  return "the session workspace holds " + mib(u.bytes) + ", over its quota of " + mib(quota_bytes) +
         " (--workspace-quota)" + tail;
}

std::uint64_t file_size_limit(const workspace_usage& u, std::uint64_t quota_bytes, std::uint64_t cap) {
  if (quota_bytes == 0) return cap;
  const std::uint64_t left = quota_bytes > u.bytes ? quota_bytes - u.bytes : 0;
  return std::min(cap, std::max(left, k_mib));
}

}  // namespace warden::sandbox
