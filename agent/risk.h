// risk — the `auto` permission mode's classifier: is this tool call low or high risk?
// A pure function over the tool's wire name and its parsed arguments, following
// ../shared/reference/unsloth-studio.md §3.6 (the `auto` classifier of tools.py).
//
// It fails closed: whatever it cannot decide (a command the tokenizer cannot parse, Python that
// cannot be tokenized, a missing or non-string argument, an unknown tool) is high, with a reason.
//   terminal (arg "command")     every simple command, nested ones included (agent/shell_words.h):
//                                the §3.6 program set, sudo/doas as wrappers, recursive chmod/
//                                chown/chgrp, find -delete/-exec, destructive git, sysctl writes,
//                                setpriv privilege flags, curl/wget uploads and methods, code fed
//                                to a shell or interpreter through a pipe or here-string (curl|sh,
//                                base64 -d|sh), inline interpreter code (python -c is judged by the
//                                python rules; perl/ruby/node/php/lua inline is high), sensitive
//                                paths and `..` components, listeners, a program name computed at
//                                run time, eval, source of a computed file, exec with redirections,
//                                and writes (redirections, tee/cp/mv/…) outside /workspace and /tmp.
//   python (arg "code")          a small Python lexer (agent/python_tokens.h); names inside string
//                                literals and comments never count.
//   render_html (arg "code")     HTML/JS that reaches the network (fetch, WebSocket, a remote
//                                src/href/url(), …); data: URLs and <a href> links do not count.
//   web_search                   low without "url", high with a non-empty "url".
//   search_knowledge_base, search_conversation   always low.
//   edit_file and any other tool always high.
// `reasons` are short human phrases ("runs rm (destructive)"), in order, without duplicates;
// empty exactly when the level is low.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/json_util.h"

namespace warden::agent {

enum class risk_level { low, high };

/// "low" / "high".
const char* to_string(risk_level level) noexcept;

struct risk_assessment {
  risk_level level = risk_level::high;
  std::vector<std::string> reasons;  ///< empty when low
  bool operator==(const risk_assessment&) const = default;
};

/// tool = the wire name; args = the parsed arguments object (anything else is high).
risk_assessment classify_call(std::string_view tool, const json& args);

}  // namespace warden::agent
