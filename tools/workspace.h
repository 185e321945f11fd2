// workspace — the per-session folder a tool call works in (reference unsloth-studio.md §4.4).
//
// `<root>/<session_id>` for sandboxed runs (handed to the sandbox user), `<root>/.host/<session_id>`
// for bypass runs (the server user's): a session id can never be ".host" (ids have no dots), and
// the jail sees only its own workspace, so code run in the sandbox can never plant anything that a
// later bypass run (on the host) would execute. Folders are 0700, created on first use.
// Disk quota: each workspace is measured before every call that runs a program in it, and the
// call is not run past --workspace-quota (sandbox/workspace_quota.h, applied by the sandbox's
// prepare step for both isolations; the tool result then says why: tool_result::not_run).
// Blocking (mkdir): the loop calls it through the blocking pool.
// Thread-safety: concurrent calls are safe (mkdir is atomic; EEXIST is fine).
#pragma once

#include <string>
#include <string_view>

#include "common/permission_mode.h"
#include "common/result.h"
#include "tools/tool.h"

namespace warden::tools {

/// True for `[A-Za-z0-9_-]{1,64}` (reference §4.4; common/permission_mode.h).
using warden::valid_session_id;

/// Folder under the workspaces root that holds the workspaces of bypass runs.
inline constexpr const char* k_host_workspaces = ".host";

/// Creates (0700) and returns the session's workspace. errc::invalid_request for a bad id,
/// errc::internal when it cannot be created.
result<std::string> ensure_workspace(const std::string& root, const std::string& session_id,
                                     isolation mode = isolation::sandboxed);

}  // namespace warden::tools
