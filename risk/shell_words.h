// shell_words — a POSIX/bash command-line tokenizer for the approval gate's risk checks and
// remembered-approval rules (reference ../shared/reference/unsloth-studio.md §3.6: the `auto`
// classifier judges terminal commands by the programs they run, so those programs must be found
// the way the shell finds them, never by substring or regex matching).
//
// parse_shell() splits a command line into simple commands and removes quotes the way bash does:
//   r''m → rm    \rm → rm    "a b" → one word    $'\x72m' → rm    # comment → dropped
// It splits at ; & && || | |& and newlines, treats the reserved words (if then else elif fi
// for select while until do done { } ! function) as separators so the commands in their bodies
// are seen, and also returns, as nested commands, what runs inside $( ), backticks, <( ), >( ),
// ( ) subshells, { } groups and the payload of `sh -c '…'` / `bash -c …` (parsed recursively).
// `[[ … ]]` is one command whose words are kept; `(( … ))` and `$(( … ))` are arithmetic.
//
// Shapes:
//   - a part of a word whose value is known only at run time ($VAR, ${…}, $( ), backticks,
//     $(( )), <( )) is kept in argv as one '\0' byte (a shell word can never hold NUL), and the
//     command's `dynamic` is set. Globs (* ? [) and a leading ~ are kept literally, not dynamic.
//   - nested commands come before the command whose word holds them (they run first); the
//     payload of sh -c comes right after the sh command.
//   - a command is listed when it has words or redirections (`> f` alone truncates f).
//   - what the resource and shape rules of the `auto` classifier need is recorded too: a command
//     run in the background (`&`, `coproc`), shell function definitions (`f() { …; }`,
//     `function f`), and each loop (for/select with the words it iterates, while/until).
//
// Errors: ok=false with `why` when the tokenizer cannot decide: unbalanced quotes, parentheses,
// braces or backticks; here-documents (<<); `case`; array assignments; command substitution
// inside ${…} or $(( )); a NUL byte; input over 64 KiB; nesting deeper than 32. Callers must
// treat ok=false as "unknown" (the risk classifier fails closed).
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace warden::risk {

struct shell_command {
  std::vector<std::string> argv;       ///< words after quote removal; run-time parts are '\0'
  bool dynamic = false;                ///< some word or redirection target is known only at run time
  std::vector<std::string> redirects;  ///< targets of > >> &> >| <> < >&file; "" when dynamic
  std::vector<bool> redirect_writes;   ///< parallel to redirects: true for output (> >> &> >| <> >&)
  bool nested = false;                 ///< from inside $( ), backticks, <( ), >( ), ( ), { }, sh -c
  bool stdin_from_pipe = false;        ///< reads a pipe (| or |&), directly or via its enclosing group
  bool here_string = false;            ///< has a <<< here-string on its standard input
  bool background = false;             ///< ends with & (a job the shell does not wait for) or is a coproc
};

/// A loop of the command line (nested ones included, in the order they start).
struct shell_loop {
  std::string keyword;             ///< "for", "select", "while" or "until"
  std::vector<std::string> words;  ///< for/select: the words after the keyword up to `;`/`do`
                                   ///< ("i", "in", "a", "b"); run-time parts are '\0'; empty otherwise
};

struct shell_parse {
  bool ok = true;                        ///< false: the tokenizer cannot decide
  std::string why;                       ///< when !ok
  std::vector<shell_command> commands;   ///< every simple command, nested ones included
  bool defines_function = false;         ///< the line defines a shell function
  std::vector<shell_loop> loops;         ///< every loop, nested ones included
};

/// Tokenizes `command` (see the file comment). Never throws except std::bad_alloc.
shell_parse parse_shell(std::string_view command);

/// argv with leading wrappers removed: env (NAME=value, -i, -u X, -C dir, -S "split string"),
/// sudo/doas (their options), nice, nohup, timeout (options and the duration), time, command,
/// exec, builtin, xargs (its options), stdbuf, ionice, chronic, setsid; leading VAR=value
/// assignments; a path prefix on the program (/bin/rm → rm). `command -v/-V` is not unwrapped
/// (it only prints). The names of the wrappers removed (path prefix stripped) are appended to
/// `wrappers` when it is not null. Returns the effective argv (may be empty).
std::vector<std::string> effective_argv(const std::vector<std::string>& argv,
                                        std::vector<std::string>* wrappers = nullptr);

/// The program name without its directory (/usr/bin/rm → rm); "" for "".
std::string_view program_name(std::string_view word) noexcept;

/// The code a POSIX shell runs from `-c` when `eff_argv` (already unwrapped) is sh, bash, dash,
/// zsh, ksh, ash, mksh, rbash or `busybox sh` with a -c option (-c, -lc, -ec, -o opt -c, …); nullopt
/// otherwise.
std::optional<std::string> shell_c_payload(const std::vector<std::string>& eff_argv);

/// Whether `word` is a shell variable assignment (NAME=… or NAME+=…, NAME[i]=…).
bool is_assignment_word(std::string_view word) noexcept;

}  // namespace warden::risk
