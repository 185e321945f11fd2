// env_scrub — the environment of a `bypass_permissions` run: the server's own, minus every
// variable secrets/secret_detect.h calls secret (names, token-format values, credential URLs),
// with HOME/TMPDIR/TEMP/TMP moved to `home` (the call's own folder, never the workspace:
// runner.h) and MPLBACKEND defaulted to Agg.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "secrets/secret_detect.h"

namespace warden::sandbox {

using warden::secrets::is_secret_variable;

/// `environ`-style "NAME=value" entries in, the bypass environment out.
std::vector<std::string> bypass_env(const std::vector<std::string>& server_env, const std::string& home);

}  // namespace warden::sandbox
