// secret_file — reads a secret (an API key) from a file named on the command line, so the secret
// itself never appears in argv (/proc/<pid>/cmdline is readable by every process of the machine).
//
// The file holds the secret on one line; trailing line ends (\n, \r\n) are dropped, nothing else
// is trimmed. Used by `warden serve --api-key-file / --upstream-api-key-file` (common/config.h's
// finalize()) and `warden chat --api-key-file` (client/chat.h).
// Thread-safety: a pure function over the file system.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "common/result.h"

namespace warden {

/// Largest secret file read (bytes); a bigger file is refused, not truncated.
inline constexpr std::size_t k_max_secret_file_bytes = 64 * 1024;

/// The secret in `path`. `flag` names where the path came from ("--api-key-file") for messages.
/// Errors (errc::invalid_request, the message naming `flag` and `path`, never the content): the
/// file is missing or unreadable (the system's reason), a directory, over
/// k_max_secret_file_bytes, empty (once the trailing line ends are dropped), or holds a line end
/// or NUL before its end (more than one line).
result<std::string> read_secret_file(const std::string& path, std::string_view flag);

}  // namespace warden
