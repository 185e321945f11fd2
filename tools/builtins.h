// The built-in tools, in the reference order (unsloth-studio.md §2.2, the ones that exist here):
//   python {code}          — Python 3 code, run by the real /usr/bin/python3 with `-I -u`
//                            (isolated: nothing planted in the workspace or HOME runs first),
//                            from a hidden script file in the workspace (python_tool.cpp)
//   terminal {command}     — `/bin/bash --noprofile --norc -c command` (terminal_tool.cpp)
//   edit_file {path, old_string, new_string, replace_all?} — one exact replacement in a
//                            workspace file, made on a confined thread (edit_file_tool.cpp)
//   web_search {query?, url?} — a query to the --search-backend, or one page read as text
//                            through the SSRF guard (web_search_tool.cpp, web_fetch.h)
//   render_html {code, title?} — only acknowledges: the client renders (reference §4.9)
// python and terminal run through `sb` (sandbox::sandbox, wired in app/serve.cpp).
// Thread-safety: build once at start-up; the tools are then shared.
#pragma once

#include <atomic>
#include <memory>

#include "common/blocking_pool.h"
#include "sandbox/runner.h"
#include "tools/tool.h"
#include "tools/web_search.h"

namespace warden::tools {

std::unique_ptr<tool> make_python_tool(sandbox::sandbox& sb);
std::unique_ptr<tool> make_terminal_tool(sandbox::sandbox& sb);
std::unique_ptr<tool> make_render_html_tool();
/// edit_file (edit_file_tool.cpp; issue 25). `pool`: where its file work runs (nullptr: inline);
/// `quota_bytes`: the session workspace's disk quota, checked before each edit as before each
/// program (0: none).
std::unique_ptr<tool> make_edit_file_tool(blocking_pool* pool, std::uint64_t quota_bytes = 0);

/// What web_search needs from the server's configuration.
struct web_options {
  search_backend backend;            ///< --search-backend (none: searching says how to turn it on)
  bool allow_private_fetch = false;  ///< --allow-private-fetch
  /// warden's listening port, set once it listens: never fetched from this machine (web_fetch.h).
  std::shared_ptr<std::atomic<int>> own_port = std::make_shared<std::atomic<int>>(0);
  blocking_pool* pool = nullptr;     ///< where fetches and searches run (nullptr: inline)
};
/// web_search (web_search_tool.cpp; issue 25).
std::unique_ptr<tool> make_web_search_tool(web_options o);

struct knowledge_runtime;

/// python, terminal, edit_file, web_search, render_html, and search_knowledge_base when
/// `knowledge` is given (knowledge.h; it must outlive the registry). `pool`: edit_file's
/// (nullptr: inline).
std::unique_ptr<registry> make_builtin_registry(sandbox::sandbox& sb, blocking_pool* pool = nullptr,
                                                web_options web = {}, knowledge_runtime* knowledge = nullptr);

}  // namespace warden::tools
