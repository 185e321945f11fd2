// risk — the `auto` permission mode's classifier: is this tool call low or high risk?
// A pure function over what a tool declares about itself (its profile: the traits the tools
// module declares, mapped by agent/) and the call's parsed arguments, following
// ../shared/reference/unsloth-studio.md §3.6 (the `auto` classifier of tools.py). It never looks
// at a tool's name except to word a reason, so a new tool (edit_file, an MCP tool) gets the
// treatment its traits call for.
//
// It fails closed: whatever it cannot decide (a command the tokenizer cannot parse, Python that
// cannot be tokenized, a missing or non-string argument, a tool that declares nothing the
// classifier can judge) is high, with a reason. In this order:
//   read_only, no network        always low (search_knowledge_base, search_conversation), even
//                                when the arguments are not an object.
//   writes_files, no code        always high: "<name> always asks" (edit_file).
//   no code and not read_only    high: "unknown tool" (nothing declared that the rules can judge).
//   arguments not an object      high.
//   read_only + reads_network    low without "url", high with a non-empty "url" (web_search).
//   code = shell (its argument, e.g. "command")
//                                an allow-list (issue 22; risk/shell_allow.h): low only when every
//                                simple command, nested ones included (risk/shell_words.h: pipes,
//                                lists, $( ), <( ), sh -c payloads, wrappers such as env/timeout),
//                                is a program on the read-only list (risk/shell_allowlist.h, one
//                                reviewed file with the source of each entry) with options known to
//                                be safe for it; with no write redirection (only /dev/null and fd
//                                dups), no arithmetic on non-literal text ((( )), $(( )), let,
//                                declare -i, [[ -eq ]], test -v, array subscripts, ${x:i}, ${!x}),
//                                no background job, while/until loop, for loop over computed
//                                words or a range, function definition or huge brace range.
//                                Anything else is high: "perl is not known to be safe", "sort -o
//                                writes a file". The named dangers of the earlier deny-list stay as
//                                reasons where they apply: the §3.6 program set, sudo/doas,
//                                recursive chmod/chown/chgrp, find -delete/-exec, destructive git,
//                                sysctl writes, setpriv privilege flags, curl/wget uploads, code
//                                fed to a shell or interpreter through a pipe or here-string,
//                                inline interpreter code (python -c is judged by the python rules),
//                                sensitive paths and `..` components, listeners, a program name
//                                computed at run time, eval, exec with redirections, variables that
//                                change what runs (PATH, HOME, LD_*, PYTHON*, GIT_*, …), and writes
//                                outside /workspace and /tmp.
//   code = python (e.g. "code")  an allow-list over the tokens of a small Python lexer
//                                (risk/python_tokens.h; the lists: risk/python_allowlist.h): low
//                                only when every import is a safe module (math, json, re,
//                                datetime, collections, pathlib, …), no denied name appears at any
//                                place of a dotted chain (os, sys, subprocess, builtins, _os,
//                                modules, __subclasses__, unlink, write_text, …; eval, exec,
//                                getattr, vars as bare names), open() only reads, no size exceeds
//                                10^8 (bytearray(7*2**30), 'x' * 10**10, range(10**12)) and no
//                                coding cookie (utf-7) changes what the tokens say.
//                                A module off the list is only "not known to be safe"; the other
//                                reasons are hazards. Names inside strings and comments never count.
//   code = html (e.g. "code")    HTML/JS that reaches the network (fetch, WebSocket, a remote
//                                src/href/url(), …); data: URLs and <a href> links do not count.
//   a code tool whose argument is missing or not a string: high.
// `reasons` are short human phrases ("runs rm (destructive)"), in order, without duplicates;
// empty exactly when the level is low. `hazard` tells the two kinds apart: a reason that only says
// something is not known to be safe ("make is not known to be safe", "bash runs a script file
// (c.sh)") leaves it false; any named danger sets it.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/json_util.h"

namespace warden::risk {

enum class risk_level { low, high };

/// "low" / "high".
const char* to_string(risk_level level) noexcept;

struct risk_assessment {
  risk_level level = risk_level::high;
  std::vector<std::string> reasons;  ///< empty when low
  /// High because of a specific danger (a destructive program, a write outside the workspace, a
  /// network upload, …), not only because something is not known to be safe. A remembered
  /// prefix rule may cover a call that is high without a hazard; never one with a hazard.
  bool hazard = false;
  bool operator==(const risk_assessment&) const = default;
};

/// The language of a tool's code argument, which decides the rules that judge it.
enum class code_language { none, shell, python, html };

/// What the classifier reads about a tool (agent/ builds it from tools::tool_traits).
struct tool_profile {
  std::string_view name;            ///< wire name, only for wording reasons ("edit_file always asks")
  code_language code = code_language::none;
  std::string_view code_argument;   ///< the argument holding the code ("command", "code"); with code
  bool read_only = false;           ///< changes nothing and runs nothing (searches)
  bool reads_network = false;       ///< may fetch from the network (a "url" argument is high)
  bool writes_files = false;        ///< changes files in the workspace
};

/// args = the parsed arguments object (anything else is high, except for a read-only local tool).
risk_assessment classify_call(const tool_profile& tool, const json& args);

}  // namespace warden::risk
