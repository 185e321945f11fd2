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

/// The bytes of `rel` under the folder `dir_fd`; nullopt when there is no such file or a folder
/// on its way is missing. Files over `max_bytes` are refused.
result<std::optional<std::string>> read_beneath(int dir_fd, std::string_view rel, std::size_t max_bytes);

/// Replaces (or creates) `rel` under `dir_fd` with `content`, atomically; missing parent
/// folders are created (0755, less the umask). A symlink or other non-file at `rel` is refused,
/// never followed or replaced.
result<void> write_beneath(int dir_fd, std::string_view rel, std::string_view content);

}  // namespace warden::tools
