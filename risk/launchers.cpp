#include "risk/launchers.h"

#include <algorithm>
#include <array>
#include <vector>

namespace warden::risk {

namespace {

using e = launcher_entry;

// Each entry: the program, whether names that start with it count too, how it runs other
// programs, and where that is documented. Man page sections as in Debian 12 (bookworm).
constexpr auto k_launchers = std::to_array<launcher_entry>({
    // ---- shells: `-c STRING` runs STRING; a file operand is a script ----
    e{"sh", false, "-c runs shell code", "POSIX.1-2017 sh(1p): -c command_string"},
    e{"bash", false, "-c runs shell code", "bash(1): OPTIONS, -c"},
    e{"rbash", false, "-c runs shell code (restricted bash still runs commands)", "bash(1): RESTRICTED SHELL"},
    e{"dash", false, "-c runs shell code", "dash(1): -c"},
    e{"ash", false, "-c runs shell code", "busybox(1): ash"},
    e{"zsh", false, "-c runs shell code", "zshoptions(1) / zsh(1): -c"},
    e{"ksh", false, "-c runs shell code", "ksh(1): -c"},
    e{"mksh", false, "-c runs shell code", "mksh(1): -c"},
    e{"pdksh", false, "-c runs shell code", "ksh(1): -c"},
    e{"yash", false, "-c runs shell code", "yash(1): -c"},
    e{"posh", false, "-c runs shell code", "posh(1): -c"},
    e{"fish", false, "-c runs shell code", "fish(1): -c / --command"},
    e{"csh", false, "-c runs shell code", "csh(1): -c"},
    e{"tcsh", false, "-c runs shell code", "tcsh(1): -c"},
    e{"elvish", false, "-c runs shell code", "elvish.io: elvish -c"},
    e{"nu", false, "-c runs shell code", "nushell.sh book: nu -c"},
    e{"xonsh", false, "-c runs shell code", "xonsh.github.io: xonsh -c"},
    e{"pwsh", false, "-Command runs PowerShell code", "learn.microsoft.com: about_Pwsh, -Command"},
    e{"powershell", false, "-Command runs PowerShell code", "learn.microsoft.com: about_Pwsh, -Command"},
    e{"busybox", false, "runs any of its applets, sh included", "busybox(1): USAGE (a multi-call binary)"},
    e{"toybox", false, "runs any of its commands, sh included", "toybox(1): a multi-call binary"},
    // ---- interpreters: inline code (-c, -e, -r, …), a script, or code on standard input ----
    e{"python", true, "-c runs Python code", "python(1): -c command"},
    e{"pypy", true, "-c runs Python code", "pypy3(1): -c cmd"},
    e{"ipython", true, "-c runs Python code", "ipython(1): -c"},
    e{"jupyter", false, "runs notebooks and kernels (code)", "docs.jupyter.org: jupyter execute / nbconvert --execute"},
    e{"perl", true, "-e runs Perl code", "perlrun(1): -e commandline"},
    e{"ruby", true, "-e runs Ruby code", "ruby(1): -e command"},
    e{"irb", false, "runs Ruby code", "irb(1)"},
    e{"php", true, "-r runs PHP code", "php(1): -r code"},
    e{"lua", true, "-e runs Lua code", "lua(1): -e stat"},
    e{"tclsh", true, "runs Tcl code (exec runs programs)", "tclsh(1); Tcl exec(n)"},
    e{"wish", true, "runs Tcl code (exec runs programs)", "wish(1); Tcl exec(n)"},
    e{"expect", false, "-c runs Tcl code and spawns programs", "expect(1): -c, spawn"},
    e{"node", true, "-e runs JavaScript", "node(1): -e, --eval"},
    e{"deno", false, "eval / run runs JavaScript and TypeScript", "docs.deno.com: deno eval, deno run"},
    e{"bun", false, "-e runs JavaScript; bun run runs scripts", "bun.sh docs: bun run, --eval"},
    e{"rscript", false, "-e runs R code (system() runs programs)", "Rscript(1): -e expr"},
    e{"r", false, "-e runs R code (system() runs programs)", "R(1): -e EXPR"},
    e{"julia", false, "-e runs Julia code", "julia(1): -e, --eval"},
    e{"guile", false, "-c runs Scheme code", "guile(1): -c expr"},
    e{"racket", false, "-e runs Racket code", "racket(1): -e"},
    e{"sbcl", false, "--eval runs Lisp code", "sbcl(1): --eval"},
    e{"clisp", false, "-x runs Lisp code", "clisp(1): -x expressions"},
    e{"ocaml", false, "runs OCaml scripts (Sys.command runs programs)", "ocaml(1)"},
    e{"ghci", false, "-e runs Haskell code", "ghc(1): -e expr"},
    e{"runghc", false, "runs Haskell programs", "runghc(1)"},
    e{"runhaskell", false, "runs Haskell programs", "runghc(1)"},
    e{"erl", false, "-eval runs Erlang code", "erl(1): -eval Expr"},
    e{"escript", false, "runs Erlang scripts", "escript(1)"},
    e{"elixir", false, "-e runs Elixir code", "elixir(1): -e command"},
    e{"iex", false, "runs Elixir code", "iex(1)"},
    e{"java", false, "runs Java programs and single-file sources", "java(1): java [options] source-file"},
    e{"jshell", false, "runs Java code", "jshell(1)"},
    e{"groovy", false, "-e runs Groovy code", "groovy(1): -e"},
    e{"scala", false, "-e runs Scala code", "scala(1): -e"},
    e{"kotlin", false, "runs Kotlin scripts", "kotlinlang.org: kotlin command-line compiler, -script"},
    e{"dotnet", false, "runs .NET programs and builds (MSBuild Exec tasks)", "learn.microsoft.com: dotnet run"},
    e{"osascript", false, "-e runs AppleScript (do shell script)", "osascript(1): -e statement"},
    e{"m4", false, "syscmd() and esyscmd() run shell commands", "GNU m4 manual §13 Running shell commands"},
    e{"dc", false, "! runs the rest of the line as a shell command", "dc(1): Miscellaneous, !"},
    e{"awk", false, "system() and print | \"cmd\" run shell commands", "POSIX.1-2017 awk(1p): system(), output pipes"},
    e{"gawk", false, "system() and print | \"cmd\" run shell commands", "gawk(1): I/O Functions, system()"},
    e{"mawk", false, "system() and print | \"cmd\" run shell commands", "mawk(1): system()"},
    e{"nawk", false, "system() and print | \"cmd\" run shell commands", "POSIX.1-2017 awk(1p): system()"},
    e{"sed", false, "the e command and the s///e flag run shell commands", "GNU sed manual §3.8 Commands for sed gurus: e; §3.3 s///e"},
    e{"ed", false, "!command runs a shell command", "POSIX.1-2017 ed(1p): ! command"},
    e{"ex", false, "!command and :! run shell commands", "POSIX.1-2017 ex(1p): ! command"},
    e{"vi", false, ":! and -c run shell commands", "POSIX.1-2017 vi(1p): ! command; -c command"},
    e{"vim", false, "-c and :! run shell commands", "vim(1): -c command; :help :!"},
    e{"nvim", false, "-c and :! run shell commands", "nvim(1): -c command"},
    e{"view", false, "-c and :! run shell commands", "vim(1): view is vim -R"},
    e{"emacs", false, "--eval runs Lisp (shell-command runs programs)", "emacs(1): --eval expression"},
    e{"sqlite", false, ".shell and .system run shell commands", "sqlite.org/cli.html: .shell, .system"},
    e{"duckdb", false, ".shell runs shell commands", "duckdb.org docs: CLI dot commands, .shell"},
    e{"psql", false, "\\! runs a shell command", "psql(1): \\! [ command ]"},
    e{"mysql", false, "system (\\!) runs a shell command", "mysql(1): system [command]"},
    e{"gdb", false, "-ex 'shell …' runs commands; it runs the program it debugs", "gdb(1): -ex; GDB manual: shell command"},
    // ---- build tools, package managers and runners: they run the commands their files name ----
    e{"make", false, "runs the recipes of a Makefile (and --eval adds rules)", "GNU make manual §5 Writing Recipes; --eval"},
    e{"gmake", false, "runs the recipes of a Makefile", "GNU make manual §5 Writing Recipes"},
    e{"bmake", false, "runs the recipes of a Makefile", "bmake(1)"},
    e{"cmake", false, "-P runs CMake scripts (execute_process runs programs); -E env runs programs", "cmake(1): -P, -E env"},
    e{"ninja", false, "runs the commands of build.ninja", "ninja manual: Writing your own Ninja files, rule command"},
    e{"meson", false, "runs build and test commands; run_command() at configure time", "mesonbuild.com: Reference manual, run_command"},
    e{"scons", false, "runs SConstruct (Python) and its build commands", "scons(1)"},
    e{"bazel", false, "runs build actions and `bazel run` targets", "bazel.build: Command-line reference, run"},
    e{"npm", false, "runs package scripts (npm run, install scripts)", "docs.npmjs.com: npm-run-script, scripts"},
    e{"npx", false, "runs a package's program", "docs.npmjs.com: npx"},
    e{"yarn", false, "runs package scripts", "yarnpkg.com: yarn run"},
    e{"pnpm", false, "runs package scripts", "pnpm.io: pnpm run, pnpm exec"},
    e{"corepack", false, "runs package managers", "nodejs.org: Corepack"},
    e{"pip", false, "installs packages, running their build scripts (setup.py)", "pip.pypa.io: pip install, Build System Interface"},
    e{"pipx", false, "runs a package's program (pipx run)", "pipx.pypa.io: pipx run"},
    e{"uv", false, "uv run runs programs and scripts", "docs.astral.sh/uv: uv run"},
    e{"uvx", false, "runs a package's program", "docs.astral.sh/uv: uvx (uv tool run)"},
    e{"poetry", false, "poetry run runs programs", "python-poetry.org: poetry run"},
    e{"pdm", false, "pdm run runs programs", "pdm-project.org: pdm run"},
    e{"hatch", false, "hatch run runs programs", "hatch.pypa.io: hatch run"},
    e{"tox", false, "runs the commands of tox.ini", "tox.wiki: commands"},
    e{"nox", false, "runs the sessions of noxfile.py", "nox.thea.codes: session.run"},
    e{"pytest", false, "imports conftest.py and test files (code)", "docs.pytest.org: conftest.py plugins"},
    e{"cargo", false, "runs build scripts, `cargo run` and aliases", "doc.rust-lang.org/cargo: build scripts, cargo run, [alias]"},
    e{"rustup", false, "rustup run runs programs", "rust-lang.github.io/rustup: rustup run"},
    e{"go", false, "go run and go generate run programs; -toolexec", "go.dev/cmd/go: go run, go generate, -toolexec"},
    e{"gcc", false, "-wrapper runs a program; plugins", "GCC manual §3.2 Overall Options: -wrapper"},
    e{"g++", false, "-wrapper runs a program; plugins", "GCC manual §3.2 Overall Options: -wrapper"},
    e{"cc", false, "the C compiler driver (gcc: -wrapper runs a program)", "GCC manual §3.2 Overall Options: -wrapper"},
    e{"c++", false, "the C++ compiler driver (gcc: -wrapper runs a program)", "GCC manual §3.2 Overall Options: -wrapper"},
    e{"clang", false, "-fplugin loads code; -Xclang -load", "clang(1); Clang Plugins"},
    e{"clang++", false, "-fplugin loads code; -Xclang -load", "clang(1); Clang Plugins"},
    e{"mvn", false, "runs build plugins (exec-maven-plugin)", "maven.apache.org: exec-maven-plugin"},
    e{"gradle", false, "runs build scripts (Exec tasks)", "docs.gradle.org: Exec task"},
    e{"ant", false, "runs build files (<exec>)", "ant.apache.org: Exec task"},
    e{"sbt", false, "runs build definitions and `run`", "scala-sbt.org: Running"},
    e{"bundle", false, "bundle exec runs programs", "bundle-exec(1)"},
    e{"gem", false, "installs gems, running their extension builds", "guides.rubygems.org: gems with extensions"},
    e{"rake", false, "runs Rakefile tasks (sh runs programs)", "rake(1); Rake::FileUtilsExt#sh"},
    e{"composer", false, "runs package scripts", "getcomposer.org: Scripts"},
    e{"apt", false, "runs package maintainer scripts and -o hooks", "apt.conf(5): DPkg::Pre-Invoke"},
    e{"apt-get", false, "runs package maintainer scripts and -o hooks", "apt.conf(5): DPkg::Pre-Invoke"},
    e{"dpkg", false, "runs package maintainer scripts", "deb-postinst(5)"},
    e{"docker", false, "docker run / exec run programs", "docs.docker.com: docker run, docker exec"},
    e{"podman", false, "podman run / exec run programs", "podman-run(1), podman-exec(1)"},
    e{"kubectl", false, "kubectl exec runs programs", "kubernetes.io: kubectl exec"},
    // ---- wrappers: their operand is a program they run ----
    e{"env", false, "runs its operand as a program (and -S splits a string)", "env(1): env [OPTION] [NAME=VALUE] [COMMAND]"},
    e{"sudo", false, "runs its operand as a program, as another user", "sudo(8)"},
    e{"doas", false, "runs its operand as a program, as another user", "doas(1)"},
    e{"sudoedit", false, "runs an editor named by SUDO_EDITOR/VISUAL/EDITOR", "sudo(8): -e (sudoedit)"},
    e{"su", false, "-c runs a command as another user", "su(1): -c"},
    e{"runuser", false, "runs a command as another user", "runuser(1)"},
    e{"pkexec", false, "runs a program as another user", "pkexec(1)"},
    e{"sg", false, "runs a command (-c) with another group", "sg(1)"},
    e{"newgrp", false, "starts a shell with another group", "newgrp(1)"},
    e{"nice", false, "runs its operand as a program", "nice(1)"},
    e{"ionice", false, "runs its operand as a program", "ionice(1)"},
    e{"nohup", false, "runs its operand as a program", "nohup(1)"},
    e{"timeout", false, "runs its operand as a program", "timeout(1)"},
    e{"time", false, "runs its operand as a program", "time(1)"},
    e{"stdbuf", false, "runs its operand as a program", "stdbuf(1)"},
    e{"unbuffer", false, "runs its operand as a program", "unbuffer(1)"},
    e{"chronic", false, "runs its operand as a program", "chronic(1) (moreutils)"},
    e{"ifne", false, "runs its operand as a program", "ifne(1) (moreutils)"},
    e{"setsid", false, "runs its operand as a program", "setsid(1)"},
    e{"chrt", false, "runs its operand as a program", "chrt(1)"},
    e{"taskset", false, "runs its operand as a program", "taskset(1)"},
    e{"numactl", false, "runs its operand as a program", "numactl(8)"},
    e{"prlimit", false, "runs its operand as a program", "prlimit(1)"},
    e{"setarch", false, "runs its operand as a program", "setarch(8)"},
    e{"linux32", false, "runs its operand as a program (linux32 and linux64 fold to one name)", "setarch(8)"},
    e{"chroot", false, "runs its operand as a program", "chroot(8)"},
    e{"unshare", false, "runs its operand as a program", "unshare(1)"},
    e{"nsenter", false, "runs its operand as a program", "nsenter(1)"},
    e{"setpriv", false, "runs its operand as a program", "setpriv(1)"},
    e{"capsh", false, "-- -c runs shell code", "capsh(1)"},
    e{"fakeroot", false, "runs its operand as a program", "fakeroot(1)"},
    e{"proot", false, "runs its operand as a program", "proot(1)"},
    e{"firejail", false, "runs its operand as a program", "firejail(1)"},
    e{"bwrap", false, "runs its operand as a program", "bwrap(1)"},
    e{"flock", false, "runs its operand (or -c) as a program", "flock(1)"},
    e{"script", false, "-c runs a command", "script(1): -c"},
    e{"screen", false, "runs its operand as a program", "screen(1)"},
    e{"tmux", false, "runs commands in new windows", "tmux(1): new-session shell-command"},
    e{"xargs", false, "runs its operand as a program, once per input batch", "POSIX.1-2017 xargs(1p)"},
    e{"parallel", false, "runs its operand as commands, in parallel", "parallel(1) (GNU parallel)"},
    e{"watch", false, "runs its operand as a shell command, repeatedly", "watch(1)"},
    e{"entr", false, "runs its operand as a program when files change", "entr(1)"},
    e{"rlwrap", false, "runs its operand as a program", "rlwrap(1)"},
    e{"catchsegv", false, "runs its operand as a program", "catchsegv(1)"},
    e{"strace", false, "runs its operand as a program", "strace(1)"},
    e{"ltrace", false, "runs its operand as a program", "ltrace(1)"},
    e{"valgrind", false, "runs its operand as a program", "valgrind(1)"},
    e{"perf", false, "perf record / stat run a program", "perf-record(1), perf-stat(1)"},
    e{"systemd-run", false, "runs its operand as a program in a unit", "systemd-run(1)"},
    e{"cgexec", false, "runs its operand as a program in a cgroup", "cgexec(1)"},
    e{"at", false, "runs commands later", "POSIX.1-2017 at(1p)"},
    e{"batch", false, "runs commands later", "POSIX.1-2017 batch(1p)"},
    e{"crontab", false, "installs commands that cron runs", "crontab(1), crontab(5)"},
    e{"ld.so", false, "the dynamic loader runs the program named as its operand", "ld.so(8): ld.so [option]... [program [args]]"},
    e{"ld-", true, "the dynamic loader runs the program named as its operand", "ld.so(8): ld-linux.so*, ld-musl-*.so*"},
    // ---- shell builtins that run what follows ----
    e{"command", false, "runs its operand as a program", "POSIX.1-2017 command(1p)"},
    e{"builtin", false, "runs a builtin (builtin eval, builtin source)", "bash(1): SHELL BUILTIN COMMANDS, builtin"},
    e{"exec", false, "replaces the shell with its operand", "POSIX.1-2017 §2.14 exec"},
    e{"eval", false, "runs its arguments as shell code", "POSIX.1-2017 §2.14 eval"},
    e{"jobs", false, "-x runs its operands as a command", "bash(1): SHELL BUILTIN COMMANDS, jobs -x"},
    e{"source", false, "runs a file as shell code", "bash(1): SHELL BUILTIN COMMANDS, source"},
    e{".", false, "runs a file as shell code", "POSIX.1-2017 §2.14 dot"},
    e{"trap", false, "runs its argument as shell code on a signal or exit", "POSIX.1-2017 §2.14 trap"},
    // ---- programs with an option that runs a command or code of the caller's choosing ----
    e{"find", false, "-exec, -execdir, -ok and -okdir run programs", "POSIX.1-2017 find(1p): -exec, -ok; find(1): -execdir"},
    e{"git", false, "runs hooks, `!` aliases, core.fsmonitor, core.pager, diff/merge tools and -c settings",
      "git-config(1): alias.*, core.fsmonitor, core.pager; githooks(5)"},
    e{"hg", false, "runs hooks and `!` aliases", "hgrc(5): [hooks], [alias]"},
    e{"svn", false, "--diff-cmd and --editor-cmd run programs", "svn help diff: --diff-cmd"},
    e{"ssh", false, "runs a remote command; ProxyCommand and LocalCommand run local ones", "ssh(1); ssh_config(5): ProxyCommand, LocalCommand"},
    e{"scp", false, "-S runs a program for the connection", "scp(1): -S program"},
    e{"sftp", false, "-S runs a program for the connection", "sftp(1): -S program"},
    e{"rsync", false, "-e and --rsync-path run programs", "rsync(1): -e, --rsh; --rsync-path"},
    e{"tar", false, "--to-command, -I/--use-compress-program and --checkpoint-action=exec run programs",
      "GNU tar manual: --to-command, --use-compress-program, --checkpoint-action"},
    e{"zip", false, "-TT/--unzip-command runs a program", "zip(1): -TT cmd"},
    e{"rg", false, "--pre runs a program on every file searched", "rg(1): --pre COMMAND"},
    e{"man", false, "-P and MANPAGER run a program as the pager", "man(1): -P pager"},
    e{"sort", false, "--compress-program runs a program", "sort(1) (GNU coreutils): --compress-program=PROG"},
    e{"split", false, "--filter runs a shell command for every piece", "split(1) (GNU coreutils): --filter=COMMAND"},
    e{"install", false, "--strip-program runs a program", "install(1) (GNU coreutils): --strip-program=PROGRAM"},
    e{"wget", false, "--use-askpass runs a program", "wget(1): --use-askpass=command"},
    e{"less", false, "! runs a shell command; LESSOPEN runs a preprocessor", "less(1): !shell-command, INPUT PREPROCESSOR"},
});

}  // namespace

std::span<const launcher_entry> launchers() noexcept { return k_launchers; }

std::string fold_program_name(std::string_view word) {
  if (const std::size_t slash = word.rfind('/'); slash != std::string_view::npos) word.remove_prefix(slash + 1);
  std::string name(word);
  std::transform(name.begin(), name.end(), name.begin(), [](char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  });
  std::size_t end = name.size();
  while (end > 0 && ((name[end - 1] >= '0' && name[end - 1] <= '9') || name[end - 1] == '.')) --end;
  if (end == name.size() || end == 0) return name;  // no version, or nothing but a version
  if (end > 1 && (name[end - 1] == '-' || name[end - 1] == '_')) --end;
  name.resize(end);
  return name;
}

const launcher_entry* launcher_of(std::string_view word) {
  // The entries' folded names, computed once (thread-safe static initialization).
  static const std::vector<std::string> folded = [] {
    std::vector<std::string> out;
    for (const launcher_entry& l : k_launchers) out.push_back(fold_program_name(l.name));
    return out;
  }();
  const std::string name = fold_program_name(word);
  if (name.empty()) return nullptr;
  for (std::size_t i = 0; i < k_launchers.size(); ++i) {
    if (name == folded[i] || (k_launchers[i].family && name.starts_with(folded[i]))) return &k_launchers[i];
  }
  return nullptr;
}

}  // namespace warden::risk
