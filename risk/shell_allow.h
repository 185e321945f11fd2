// shell_allow — the allow-list half of the terminal rules (issue 22): a simple command is known to
// be safe only when its program is on the read-only list (risk/shell_allowlist.h) with options
// known to be safe for it; arithmetic contexts only on literal text; no background job, loop over
// computed words, function definition or large brace range. Used by risk_shell.cpp, which keeps
// the named dangers (rm, uploads, sensitive paths, writes, …). Internal to the classifier.
//
// Reasons are findings (risk/risk_detail.h): "<what> is not known to be safe" is reason_kind::
// unknown; a named danger ("sed -i edits files in place", "runs a command in the background (&)")
// is reason_kind::hazard.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "risk/risk_detail.h"
#include "risk/shell_words.h"

namespace warden::risk::risk_detail {

/// Reasons why the simple command `a` is not known to be safe: `a` is the effective argv
/// (wrappers removed, a[0] the bare program name) and `program_word` the word that named the
/// program in the line (with its directory, if any). Adds nothing when it is known to be safe.
void check_allowed(const std::vector<std::string>& a, std::string_view program_word, findings& out);

/// The wrappers in front of a program (shell_words.h effective_argv's `wrappers`; `prefix` the
/// raw words before the program): each must be a safe wrapper named from a system directory.
void check_allowed_wrappers(const std::vector<std::string>& wrappers, const std::vector<std::string>& prefix, findings& out);

/// Arithmetic contexts and expansions in the raw text of a command line (single-quoted text is
/// skipped): (( )), $(( )), $[ ], ${x:offset}, ${a[i]}, ${!x} and ${x@P} ask unless literal.
void check_arithmetic_text(std::string_view text, findings& out);

/// Shapes of a whole parsed line: background jobs, function definitions, loops (while/until; for
/// over computed words, ranges or no word list), brace ranges of more than k_max_brace_words
/// words, and leading assignments to array elements with computed subscripts.
void check_shapes(const shell_parse& p, findings& out);

/// A brace range ({1..1000}) that expands to more words than this asks.
inline constexpr long long k_max_brace_words = 10000;

/// Whether `s` is literal arithmetic: digits, blanks and operators only (no names, no $, no
/// brackets), so evaluating it cannot run anything. Empty is not.
bool literal_arithmetic(std::string_view s);

/// The named dangers of a git command (`a` the effective argv, a[0] == "git"): -c/--config-env,
/// a config that runs commands, grep -O/rebase -x/submodule foreach/difftool -x, and destructive
/// operations (reset --hard, push --force, clean -f, branch -D, …). risk/shell_git.cpp.
void check_git_dangers(const std::vector<std::string>& a, findings& out);

/// sed's verdict on a script (all -e scripts joined by newlines, as GNU sed joins them).
enum class sed_verdict { safe, runs, unknown };
sed_verdict judge_sed_script(std::string_view script);

}  // namespace warden::risk::risk_detail
