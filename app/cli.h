// Command line: `warden serve [options]`, `warden doctor [options]`, `warden audit [--home H]
// [--session S] [--since T] [--limit N] [--json]`, `warden chat [--url U] [--model ID] [--mode
// ask|auto|off|full] [--session ID] [--api-key KEY | --api-key-file FILE]` (app/commands.h), `warden --version`, and the
// hidden `warden serve --help-markdown` (the option table as Markdown, common/config.h's markdown_table()).
// Options come from the config table (common/config.h); a flag wins over its WARDEN_* variable,
// which wins over the default. Returns the process exit code: 0 ok, 1 runtime failure (model
// failed to load, …), 2 bad command line or configuration.
#pragma once

namespace warden::app {

int run_cli(int argc, char** argv);

}  // namespace warden::app
