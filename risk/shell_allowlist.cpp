// The read-only program list (risk/shell_allowlist.h). Review rule for a new entry: the program
// only reads files and prints; every option it accepts here is in its manual; options that write
// a file, run a program or change the system are `denied` (or the entry lists its options instead
// of `any_option`); `source` says where that was checked.
#include "risk/shell_allowlist.h"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <string>

namespace warden::risk::shell_allowlist {

namespace {

bool listed(std::string_view names, std::string_view name) {
  std::size_t start = 0;
  while (start < names.size()) {
    const std::size_t end = std::min(names.find(' ', start), names.size());
    if (names.substr(start, end - start) == name) return true;
    start = end + 1;
  }
  return false;
}

using c = check;

// clang-format off
std::vector<entry> listing() {
  return {
      {.names = "ls dir vdir", .any_option = true,
       .source = "Codex (ls); coreutils 'ls invocation': every option selects or formats what is listed"},
      {.names = "stat", .any_option = true, .source = "Codex (stat); coreutils 'stat invocation': prints file status"},
      {.names = "du", .any_option = true, .source = "coreutils 'du invocation': prints disk usage (--files0-from only reads names)"},
      {.names = "df", .any_option = true, .source = "coreutils 'df invocation': prints file system usage"},
      {.names = "file", .any_option = true, .valued = "mFefP",
       .long_valued = "magic-file separator exclude exclude-quiet files-from parameter",
       .denied = {{"-C", "writes a compiled magic file"}, {"--compile", "writes a compiled magic file"}},
       .source = "file(1): prints file types; -C/--compile writes a .mgc file"},
      {.names = "tree", .any_option = true, .valued = "LPIHTo",
       .long_valued = "charset filelimit timefmt sort",
       .denied = {{"-o", "writes a file"}, {"-R", "writes 00Tree.html files in every directory"}},
       .source = "tree(1): lists a directory tree; -o writes the listing to a file, -R writes one per directory"},
      {.names = "pwd", .any_option = true, .source = "Codex (pwd); coreutils 'pwd invocation'"},
      {.names = "basename dirname", .any_option = true, .source = "coreutils 'basename/dirname invocation': print parts of names"},
      {.names = "realpath readlink", .any_option = true, .source = "coreutils 'realpath/readlink invocation': print resolved names"},
      {.names = "which whereis type", .any_option = true, .source = "Codex (which); bash 'type'; whereis(1): print where programs are"},
      {.names = "command", .any_option = true,
       .source = "bash 'command': with -v/-V (the only form that reaches the list) it prints how a name resolves"},
  };
}

std::vector<entry> reading() {
  return {
      {.names = "cat tac", .any_option = true, .source = "Codex (cat, tac); coreutils 'cat/tac invocation'"},
      {.names = "head tail", .any_option = true, .source = "Codex (head, tail); coreutils 'head/tail invocation': print parts of files"},
      {.names = "wc", .any_option = true, .source = "Codex (wc); coreutils 'wc invocation'"},
      {.names = "nl", .any_option = true, .source = "Codex (nl); coreutils 'nl invocation'"},
      {.names = "cut paste", .any_option = true, .source = "Codex (cut, paste); coreutils 'cut/paste invocation'"},
      {.names = "tr", .any_option = true, .source = "Codex (tr); coreutils 'tr invocation': filters standard input to standard output"},
      {.names = "rev", .any_option = true, .source = "Codex (rev); util-linux rev(1)"},
      {.names = "fold expand unexpand fmt", .any_option = true, .source = "coreutils 'fold/expand/unexpand/fmt invocation': reformat to standard output"},
      {.names = "column", .any_option = true, .source = "util-linux column(1): formats to standard output (-o is a separator, not a file)"},
      {.names = "comm join", .any_option = true, .source = "coreutils 'comm/join invocation': compare sorted files to standard output"},
      {.names = "od hexdump", .any_option = true, .source = "coreutils 'od invocation'; util-linux hexdump(1): dump to standard output"},
      {.names = "strings", .any_option = true, .source = "GNU binutils strings(1): prints printable strings"},
      {.names = "numfmt", .any_option = true, .source = "Codex (numfmt); coreutils 'numfmt invocation'"},
      {.names = "grep egrep fgrep", .any_option = true,
       .source = "Codex (grep); GNU grep manual: reads files and prints matches; no option runs a program or writes a file"},
      {.names = "rg", .any_option = true, .valued = "ABCEefgjmMrtT",
       .long_valued = "after-context before-context context encoding regexp file glob iglob threads max-count max-columns "
                      "replace type type-not type-add type-clear ignore-file path-separator sort sortr max-depth max-filesize "
                      "colors color pre pre-glob hostname-bin",
       .denied = {{"--pre", "runs a program on every file"}, {"--hostname-bin", "runs a program"},
                  {"--search-zip", "runs decompression programs"}, {"-z", "runs decompression programs"}},
       .source = "Codex (rg and its unsafe options --pre, --hostname-bin, --search-zip/-z); ripgrep rg(1)"},
      {.names = "sort", .any_option = true, .valued = "ktoST",
       .long_valued = "key field-separator output buffer-size temporary-directory files0-from random-source parallel "
                      "batch-size compress-program sort",
       .denied = {{"-o", "writes a file"}, {"--output", "writes a file"}, {"--compress-program", "runs a program"}},
       .source = "coreutils 'sort invocation': -o/--output writes a file, --compress-program runs one; the rest order what is printed"},
      {.names = "uniq", .any_option = true, .valued = "fsw", .long_valued = "skip-fields skip-chars check-chars",
       .max_operands = 1,
       .source = "Codex (uniq); coreutils 'uniq invocation': a second operand is an output file"},
      {.names = "shuf", .any_option = true, .valued = "noi", .long_valued = "head-count output input-range random-source",
       .denied = {{"-o", "writes a file"}, {"--output", "writes a file"}},
       .source = "coreutils 'shuf invocation': -o/--output writes a file"},
      {.names = "diff", .any_option = true,
       .source = "GNU diffutils manual: diff compares files and prints the differences; it writes no file"},
      {.names = "cmp", .any_option = true, .source = "GNU diffutils manual: cmp compares two files and prints where they differ"},
      {.names = "md5sum sha1sum sha224sum sha256sum sha384sum sha512sum b2sum cksum sum", .any_option = true,
       .source = "coreutils 'md5sum/sha2 utilities/cksum invocation': print or check digests (--check only reads)"},
      {.names = "base64 base32 basenc", .any_option = true, .valued = "w", .long_valued = "wrap", .max_operands = 1,
       .source = "Codex (base64, no output option); coreutils 'base64/basenc invocation': one input file, output to standard output"},
      {.names = "xxd", .any_option = true, .valued = "cglnoRs", .max_operands = 1,
       .source = "xxd(1): a second operand is an output file"},
      {.names = "jq", .any_option = true,
       .source = "jq manual: filters JSON to standard output; no option or builtin runs a program or writes a file"},
  };
}

std::vector<entry> system_facts() {
  return {
      {.names = "whoami id groups logname tty", .any_option = true, .source = "Codex (id, whoami); coreutils: print user and terminal facts"},
      {.names = "uname arch nproc", .any_option = true, .source = "Codex (uname); coreutils 'uname/arch/nproc invocation'"},
      {.names = "uptime free ps pgrep", .any_option = true,
       .source = "procps uptime(1) free(1) ps(1) pgrep(1): print process and memory facts (pkill is not listed)"},
      {.names = "lscpu locale getconf", .any_option = true, .source = "util-linux lscpu(1); locale(1); getconf(1): print settings"},
      {.names = "printenv", .any_option = true, .source = "coreutils 'printenv invocation': prints the environment (secrets are never in the jail's)"},
      {.names = "date", .any_option = true, .valued = "dfr", .optional = "I",
       .long_flags = "iso-8601 rfc-3339", .long_valued = "date file reference",
       .denied = {{"-s", "sets the clock"}, {"--set", "sets the clock"}}, .operand_prefix = "+",
       .source = "coreutils 'date invocation': -s/--set and an operand without + set the clock"},
      {.names = "hostname", .any_option = true, .valued = "F", .long_valued = "file",
       .denied = {{"-F", "sets the host name"}, {"--file", "sets the host name"}, {"-b", "sets the host name"}, {"--boot", "sets the host name"}},
       .max_operands = 0, .source = "hostname(1): an operand or -F/-b sets the host name"},
      {.names = "pip pip3", .any_option = true,
       .long_valued = "log log-file cache-dir python index-url extra-index-url proxy cert client-cert timeout retries format path",
       .denied = {{"--log", "writes a file"}, {"--log-file", "writes a file"}, {"--python", "runs another interpreter"}},
       .subcommands = "list show freeze",
       .source = "pip documentation: list, show and freeze print the installed packages; --log writes a file, --python runs pip in another interpreter"},
  };
}

std::vector<entry> shell_builtins() {
  return {
      {.names = "echo", .how = c::text, .source = "Codex (echo); bash 'echo': prints its arguments"},
      {.names = "printf", .how = c::text,
       .source = "bash 'printf': prints; -v (assigns a variable, risk_shell.cpp) asks, so a first word known only at run time asks"},
      {.names = "true false :", .how = c::text, .source = "Codex (true, false); bash ':'"},
      {.names = "expr", .how = c::text, .source = "Codex (expr); coreutils 'expr invocation': evaluates its words, runs nothing"},
      {.names = "sleep", .how = c::text, .source = "coreutils 'sleep invocation' (the call's time limit bounds it)"},
      {.names = "cd pushd popd dirs", .any_option = true, .source = "Codex (cd); bash 'cd/pushd/popd/dirs': change the directory of this shell"},
      {.names = "set shopt", .any_option = true,
       .source = "bash 'set/shopt': shell options (shopt expand_aliases/extdebug ask in risk_shell.cpp)"},
      {.names = "shift exit return break continue wait", .how = c::text,
       .source = "bash: numeric arguments are read as plain numbers (legal_number), not arithmetic"},
      {.names = "jobs", .flags = "lnprs", .denied = {{"-x", "runs its operands as a command"}},
       .source = "bash 'jobs': -l -n -p -r -s list jobs; -x COMMAND runs COMMAND"},
      {.names = "test [", .how = c::test,
       .source = "bash 'test': -eq compares plain numbers; -v NAME[SUBSCRIPT] evaluates the subscript, so operands must be literal"},
      {.names = "[[", .how = c::cond,
       .source = "bash 'Conditional Constructs': in [[ ]] -eq/-ne/-lt/-le/-gt/-ge and -v evaluate arithmetic"},
      {.names = "let", .how = c::let, .source = "bash 'let': evaluates arithmetic (a[$(cmd)] runs cmd), so only literal arithmetic"},
      {.names = "declare typeset local export readonly", .how = c::declare,
       .source = "bash 'declare': -i makes assignments arithmetic, -n makes a name reference; subscripts are arithmetic"},
      {.names = "unset", .how = c::unset, .source = "bash 'unset': a subscript is evaluated as arithmetic"},
      {.names = "seq", .how = c::seq, .source = "Codex (seq); bounded to k_max_seq_count numbers"},
  };
}

/// Programs with their own checks (risk/shell_allow.cpp).
std::vector<entry> judged() {
  return {
      {.names = "find", .how = c::find,
       .source = "Codex (find without -exec -execdir -ok -okdir -delete -fls -fprint -fprint0 -fprintf); GNU findutils manual"},
      {.names = "git", .how = c::git, .source = "Codex (git status/log/diff/show/branch, no -c/--config-env, no --output/--ext-diff/--textconv/--exec/--paginate); git manual pages"},
      {.names = "sed", .how = c::sed, .source = "Codex (sed -n Np); GNU sed manual: e, w, W and s///e, s///w run commands or write files; -i edits in place"},
      {.names = "awk gawk mawk nawk", .how = c::awk,
       .source = "gawk manual: system(), | pipes and > redirections run commands or write files; -f/-E/-i/-l/-o/--profile load or write files"},
      {.names = "python python3", .how = c::python, .source = "python -c CODE: the code is judged by the Python rules (risk_python.cpp)"},
      {.names = "sh bash dash zsh ksh ash mksh", .how = c::shell,
       .source = "Codex (bash -lc with known-safe commands): the -c code is parsed and each command judged"},
      {.names = "source .", .how = c::source, .source = "bash 'source': runs a file, whose text is not known"},
  };
}
// clang-format on

std::vector<entry> build() {
  std::vector<entry> all;
  for (auto part : {listing, reading, system_facts, shell_builtins, judged}) {
    std::vector<entry> p = part();
    all.insert(all.end(), std::make_move_iterator(p.begin()), std::make_move_iterator(p.end()));
  }
  return all;
}

/// pythonX, pythonX.Y → python3 (versioned interpreters share the entry).
std::string normalized(std::string_view program) {
  if (!program.starts_with("python")) return std::string(program);
  const std::string_view rest = program.substr(6);
  const bool version = std::all_of(rest.begin(), rest.end(), [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)) || ch == '.'; });
  return version ? "python3" : std::string(program);
}

}  // namespace

const std::vector<entry>& entries() {
  static const std::vector<entry> table = build();
  return table;
}

const entry* find(std::string_view program) {
  const std::string name = normalized(program);
  for (const entry& e : entries())
    if (listed(e.names, name)) return &e;
  return nullptr;
}

const std::vector<git_subcommand>& git_subcommands() {
  static const std::vector<git_subcommand> table = {
      {"status", git_shape::any, "Codex"},
      {"log", git_shape::any, "Codex"},
      {"diff", git_shape::any, "Codex"},
      {"show", git_shape::any, "Codex"},
      {"branch", git_shape::branch_list, "Codex (git_branch_is_read_only)"},
      {"shortlog", git_shape::any, "git-shortlog(1): summarizes git log"},
      {"whatchanged", git_shape::any, "git-whatchanged(1): git log with a diff format"},
      {"rev-parse", git_shape::any, "git-rev-parse(1): prints object names and repository facts"},
      {"rev-list", git_shape::any, "git-rev-list(1): lists commits"},
      {"ls-files", git_shape::any, "git-ls-files(1): lists files of the index and work tree"},
      {"ls-tree", git_shape::any, "git-ls-tree(1): lists a tree object"},
      {"cat-file", git_shape::any, "git-cat-file(1): prints objects (--textconv/--filters are denied)"},
      {"describe", git_shape::any, "git-describe(1): names a commit"},
      {"blame", git_shape::any, "git-blame(1): annotates lines"},
      {"grep", git_shape::any, "git-grep(1): searches tracked files (-O/--open-files-in-pager denied)"},
      {"diff-tree", git_shape::any, "git-diff-tree(1)"},
      {"diff-files", git_shape::any, "git-diff-files(1)"},
      {"diff-index", git_shape::any, "git-diff-index(1)"},
      {"merge-base", git_shape::any, "git-merge-base(1): prints common ancestors"},
      {"name-rev", git_shape::any, "git-name-rev(1)"},
      {"show-ref", git_shape::any, "git-show-ref(1): lists references"},
      {"for-each-ref", git_shape::any, "git-for-each-ref(1): lists references"},
      {"show-branch", git_shape::any, "git-show-branch(1)"},
      {"count-objects", git_shape::any, "git-count-objects(1)"},
      {"check-ignore", git_shape::any, "git-check-ignore(1)"},
      {"check-attr", git_shape::any, "git-check-attr(1)"},
      {"version", git_shape::any, "git-version(1)"},
      {"tag", git_shape::tag_list, "git-tag(1): without names, or with -l, it lists tags"},
      {"remote", git_shape::remote_list, "git-remote(1): without a subcommand (-v) or get-url it prints remotes"},
      {"config", git_shape::config_read, "git-config(1): --get/--get-all/--get-regexp/--list and `get`/`list` only read"},
      {"stash", git_shape::stash_list, "git-stash(1): list and show print"},
      {"reflog", git_shape::reflog_show, "git-reflog(1): show (the default) prints"},
      {"worktree", git_shape::worktree_list, "git-worktree(1): list prints"},
  };
  return table;
}

std::string_view git_global_flags() {
  return "--no-pager -P --no-optional-locks --literal-pathspecs --glob-pathspecs --noglob-pathspecs "
         "--icase-pathspecs --no-replace-objects --version";
}

std::string_view git_global_valued() { return "-C"; }

const std::vector<denied_option>& git_denied() {
  static const std::vector<denied_option> table = {
      {"--output", "writes a file"},
      {"--output-directory", "writes files"},
      {"--ext-diff", "runs an external diff program"},
      {"--textconv", "runs text conversion programs"},
      {"--filters", "runs filter programs"},
      {"--exec", "runs a program"},
      {"--upload-pack", "runs a program"},
      {"--paginate", "runs a pager"},
      {"--open-files-in-pager", "runs a pager"},
  };
  return table;
}

bool safe_wrapper(std::string_view name) { return listed("env command time nice timeout stdbuf", name); }

bool system_program_path(std::string_view word) {
  if (word.find('/') == std::string_view::npos) return true;
  for (const std::string_view dir : {"/bin/", "/usr/bin/", "/usr/local/bin/", "/sbin/", "/usr/sbin/"}) {
    if (!word.starts_with(dir)) continue;
    const std::string_view rest = word.substr(dir.size());
    return rest.find('/') == std::string_view::npos && !rest.empty();
  }
  return false;
}

}  // namespace warden::risk::shell_allowlist
