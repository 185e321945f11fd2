// shell_allowlist — the read-only program list of the `auto` classifier for terminal commands
// (issue 22, "auto by allow-list"): the one reviewed file that says which programs a command may
// run without a question, which of their options are known to be safe, and where that knowledge
// comes from. risk/shell_allow.h judges a simple command against it; a program that is not listed
// asks ("perl is not known to be safe"), and so does a listed program with an option that is not
// known to be safe for it.
//
// Sources cited by the entries (facts and lists of names only; no code is copied):
//   Codex        openai/codex codex-rs/core/src/command_safety/is_safe_command.rs
//                (is_known_safe_command: cat cd cut echo expr false grep head id ls nl paste pwd
//                rev seq stat tail tr true uname uniq wc which whoami numfmt tac base64 find rg
//                git status/log/diff/show/branch, sed -n Np; its unsafe find/rg/git/base64 options)
//   coreutils    the GNU coreutils manual (https://www.gnu.org/software/coreutils/manual/), the
//                invocation section of each program: what each option does
//   bash         the GNU Bash reference manual (builtins, conditional expressions, arithmetic)
//   <program>    that program's own manual (grep, findutils, diffutils, sed, gawk, git, jq, tree,
//                ripgrep, procps, util-linux)
// Thread-safety: the table is built once (a function-local static) and only read.
#pragma once

#include <string_view>
#include <vector>

namespace warden::risk::shell_allowlist {

/// How the words after the program name are judged (risk/shell_allow.cpp).
enum class check {
  options,  ///< options by the tables of the entry; the other words are operands (files, patterns)
  text,     ///< every word is text, nothing is an option (echo, printf, expr, true)
  find,     ///< findutils expression: primaries from a list; -exec/-delete/-fprint ask
  git,      ///< a read-only subcommand, global options from a list, no option that writes or runs
  sed,      ///< no -i, no -f; the script is parsed and has no e/w/W command or s///e, s///w flag
  awk,      ///< program text without system, |, @, and > after the first {; no -f/-E/-l/-i/-o
  test,     ///< test / [: every word literal (a run-time word can turn into -v), -v on a plain name
  cond,     ///< [[ ]]: -eq/-ne/-lt/-le/-gt/-ge and -v only on literal operands (they evaluate arithmetic)
  let,      ///< every argument is literal arithmetic (digits and operators only)
  declare,  ///< declare/typeset/local/export/readonly: no -i, no -n; literal array subscripts
  unset,    ///< plain names or array elements with literal subscripts
  seq,      ///< literal numbers, at most k_max_seq_count of them
  python,   ///< python -c CODE (the code is judged by the Python rules) or --version; no script, no -m
  shell,    ///< sh/bash -c CODE (the code is parsed and judged as nested commands); no script file
  source,   ///< source / . always run a file: asks
};

/// At most this many numbers from `seq` (a larger range is a resource shape, not a listing).
inline constexpr long long k_max_seq_count = 100000;

/// An option that is never safe for the program, with what it does.
struct denied_option {
  std::string_view option;  ///< "-o" (also found inside a cluster: -uo) or "--output" (also its
                            ///< unique abbreviations, --out, as GNU getopt_long accepts them)
  std::string_view why;     ///< completes "<program> <option> …": "writes a file"
};

struct entry {
  std::string_view names = {};        ///< space-separated program names that share the entry
  check how = check::options;
  /// Every option of the program is known to be safe except `denied` (its manual lists no other
  /// option that writes a file, runs a program or changes the system); false: only the options
  /// listed below are.
  bool any_option = false;
  std::string_view flags = {};        ///< short options without a value ("alh1")
  std::string_view valued = {};       ///< short options whose value is the rest of the word or the next word
  std::string_view optional = {};     ///< short options whose optional value is only the rest of the word
  std::string_view long_flags = {};   ///< space-separated long names (no "--") without a value; also as --name=V
  std::string_view long_valued = {};  ///< space-separated long names that take the next word unless --name=V
  std::vector<denied_option> denied = {};
  int max_operands = -1;         ///< more operands ask (uniq IN OUT writes OUT); -1: any number
  std::string_view subcommands = {};  ///< when set: the first operand must be one of these (space-separated)
  std::string_view operand_prefix = {};  ///< when set: every operand must start with it (date +FORMAT)
  std::string_view source = {};       ///< why the program and these options are known to be safe
};

/// The whole list, in review order.
const std::vector<entry>& entries();

/// The entry that names `program` (a bare name, no directory), or nullptr.
const entry* find(std::string_view program);

/// A read-only git subcommand and the shape its arguments must have.
enum class git_shape {
  any,           ///< any arguments except k_git_denied (status, log, diff, show, …)
  branch_list,   ///< only listing options (-a -r -v -l --list --show-current --format= …), no names
  tag_list,      ///< no arguments, or -l/--list with patterns and listing options
  remote_list,   ///< no arguments, -v, or get-url NAME
  config_read,   ///< --get/--get-all/--get-regexp/--list/-l (or `config get|list`), no write option
  stash_list,    ///< list or show
  reflog_show,   ///< no arguments or show
  worktree_list, ///< list
};

struct git_subcommand {
  std::string_view name;
  git_shape shape;
  std::string_view source;
};

/// The read-only git subcommands (Codex: status log diff show branch; the others from the git
/// manual pages, each of which only reads the repository and prints).
const std::vector<git_subcommand>& git_subcommands();

/// git's global options (before the subcommand) that are known to be safe: flags, and options
/// that take the next word (-C dir). -c/--config-env/--exec-path/--git-dir/--work-tree/-p ask.
std::string_view git_global_flags();
std::string_view git_global_valued();

/// Options that write a file or run a program in any git subcommand (Codex's unsafe git flags
/// --output --ext-diff --textconv --exec --paginate, and the git manual's --output-directory,
/// --upload-pack, grep's -O/--open-files-in-pager).
const std::vector<denied_option>& git_denied();

/// Wrappers that run the rest of their line unchanged and are safe around a listed program:
/// env (no -S), command, time (no -o/-a), nice, timeout, stdbuf. Source: coreutils (env, nice,
/// timeout, stdbuf), bash (command, time). Others (xargs, nohup, exec, setsid, …) ask.
bool safe_wrapper(std::string_view name);

/// Directories whose programs are the system's own: a program named with a path elsewhere
/// (./ls, /workspace/bin/cat) is a file the call may have written and is not known to be safe.
bool system_program_path(std::string_view word);

}  // namespace warden::risk::shell_allowlist
