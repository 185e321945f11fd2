// The built-in tools, in the reference order (unsloth-studio.md §2.2, the ones that exist here):
//   python {code}          — Python 3 code, run by the real /usr/bin/python3 with `-I -u`
//                            (isolated: nothing planted in the workspace or HOME runs first),
//                            from a hidden script file in the workspace (python_tool.cpp)
//   terminal {command}     — `/bin/bash --noprofile --norc -c command` (terminal_tool.cpp)
//   edit_file {path, old_string, new_string, replace_all?} — one exact replacement in a
//                            workspace file, made on a confined thread (edit_file_tool.cpp)
//   render_html {code, title?} — only acknowledges: the client renders (reference §4.9)
// python and terminal run through `sb` (sandbox::sandbox, wired in app/serve.cpp).
// Thread-safety: build once at start-up; the tools are then shared.
#pragma once

#include <memory>

#include "common/blocking_pool.h"
#include "sandbox/runner.h"
#include "tools/tool.h"

namespace warden::tools {

std::unique_ptr<tool> make_python_tool(sandbox::sandbox& sb);
std::unique_ptr<tool> make_terminal_tool(sandbox::sandbox& sb);
std::unique_ptr<tool> make_render_html_tool();
/// edit_file (edit_file_tool.cpp; issue 25). `pool`: where its file work runs (nullptr: inline);
/// `quota_bytes`: the session workspace's disk quota, checked before each edit as before each
/// program (0: none).
std::unique_ptr<tool> make_edit_file_tool(blocking_pool* pool, std::uint64_t quota_bytes = 0);

/// python, terminal, edit_file, render_html. `pool`: edit_file's (nullptr: inline).
std::unique_ptr<registry> make_builtin_registry(sandbox::sandbox& sb, blocking_pool* pool = nullptr);

}  // namespace warden::tools
