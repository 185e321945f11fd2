// beneath — reading and writing a file named by a path relative to a folder, never outside it
// (issue 25: edit_file's path rules; reference unsloth-studio.md §4.6 checks a realpath, which a
// symlink swapped in between check and use defeats).
//
// Every open goes through openat2(2) with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
// RESOLVE_NO_MAGICLINKS from the folder's descriptor, component by component for the parent
// folders, so `..` that climbs out, an absolute path, a symlink anywhere on the path (planted by
// an earlier call, or swapped in while this one runs), and /proc's magic links are all refused
// by the kernel at the moment of use: there is no check-then-use gap. On a kernel without
// openat2 (before Linux 5.6) each component is opened with openat(O_NOFOLLOW) and `..` is
// refused by name, which holds the same line.
// A path is at most 4096 bytes and 64 parts, holds no control character (NUL, newline, …) and
// does not end with '/'.
// A file with more than one hard link is refused (it may be a link to a file outside), and so
// is anything but a regular file (a FIFO would block, a device is not a file). The write is
// atomic: a temporary file in the same folder, written, fsync'd, then renamed over the name,
// so a crash leaves the old file or the new one, never half of one; the new file keeps the old
// one's permission bits but never setuid, setgid or sticky (0644 for a new file), and its owner
// and group where the writer may give them (a root server), else the writer's.
// Errors: errc::invalid_request with a message for the model (the path is named); errc::internal
// for an I/O failure. Blocking (file I/O): call from the blocking pool. Thread-safe (no state).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace warden::tools {

/// Which file a name held when it was read: none (0, 0), or its device, inode, size and
/// modification time. A write that names the version it read is refused when the name holds
/// another by the time of the rename (another program wrote it in between), so its change is not
/// lost. The window left is the one between that check and the rename.
struct file_version {
  bool exists = false;
  unsigned long long dev = 0, ino = 0;
  long long size = 0, mtime_ns = 0;
  bool operator==(const file_version&) const = default;
};

/// The bytes of `rel` under the folder `dir_fd`; nullopt when there is no such file or a folder
/// on its way is missing. Files over `max_bytes` are refused. `version`, when given, gets the
/// version read.
result<std::optional<std::string>> read_beneath(int dir_fd, std::string_view rel, std::size_t max_bytes,
                                                file_version* version = nullptr);

/// Replaces (or creates) `rel` under `dir_fd` with `content`, atomically; missing parent
/// folders are created (0755, less the umask). A symlink or other non-file at `rel` is refused,
/// never followed or replaced. With `expected`, refused (nothing written) when `rel` no longer
/// holds that version.
result<void> write_beneath(int dir_fd, std::string_view rel, std::string_view content,
                           const file_version* expected = nullptr);

}  // namespace warden::tools
