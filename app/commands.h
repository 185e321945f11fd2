// The subcommands behind the CLI. Each returns a process exit code (see cli.h).
#pragma once

#include "common/config.h"

namespace warden::app {

/// Serves until SIGINT/SIGTERM. Prints one line with the URL and model id when ready.
int run_serve(const config& cfg);

/// Prints a status line per check; returns 1 when a check fails.
int run_doctor(const config& cfg);

}  // namespace warden::app
