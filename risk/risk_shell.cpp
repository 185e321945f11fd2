// The terminal rules of the `auto` classifier (risk/risk.h; reference §3.6).
#include <algorithm>
#include <array>
#include <cctype>

#include "risk/risk_detail.h"
#include "risk/shell_allow.h"
#include "risk/shell_words.h"

namespace warden::risk::risk_detail {

namespace {

using argv_t = std::vector<std::string>;
using names_t = std::vector<std::string_view>;

struct shell_ctx {
  findings& out;
  int depth = 0;
  std::string downloader;       ///< "curl" / "wget" when the line has one
  bool decoder = false;         ///< the line decodes data (base64 -d, xxd -r, …)
  bool left_workspace = false;  ///< the line cds to a directory outside the workspace
};

bool has_dyn(std::string_view w) { return w.find('\0') != std::string_view::npos; }
bool is_option(std::string_view a) { return a.size() > 1 && a[0] == '-'; }
bool is_long(std::string_view a) { return a.starts_with("--"); }
bool short_cluster(std::string_view a) { return is_option(a) && !is_long(a); }
bool cluster_has(std::string_view a, char c) { return short_cluster(a) && a.find(c, 1) != std::string_view::npos; }
bool in(std::string_view w, const names_t& set) { return std::find(set.begin(), set.end(), w) != set.end(); }
bool has_word(const argv_t& a, const names_t& set) {
  return std::any_of(a.begin() + 1, a.end(), [&](const std::string& w) { return in(w, set); });
}
std::string_view option_name(std::string_view w) { return w.substr(0, w.find('=')); }

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

/// The program name as the rules see it: no directory, no .exe suffix.
std::string base_name(std::string_view prog) {
  std::string name(program_name(prog));
  if (name.size() > 4 && lower(name.substr(name.size() - 4)) == ".exe") name.resize(name.size() - 4);
  return name;
}

/// The value of the option at a[j] whose letter ends at `k`: the rest of the word or the next word.
std::string option_value(const argv_t& a, std::size_t j, std::size_t k) {
  if (k + 1 < a[j].size()) return a[j].substr(k + 1);
  return j + 1 < a.size() ? a[j + 1] : std::string();
}

struct category {
  std::string_view label;
  names_t names;
};

/// The high-risk program set of reference §3.6.
const std::vector<category>& categories() {
  static const std::vector<category> table = {
      {"privilege", {"sudo", "su", "doas", "pkexec", "runuser", "runas", "insmod", "rmmod", "modprobe"}},
      {"destructive", {"rm", "rmdir", "shred", "dd", "wipefs", "fdisk", "sfdisk", "cfdisk", "gdisk", "parted", "chattr", "truncate", "unlink", "format", "diskpart", "diskutil", "mkswap", "srm"}},
      {"process control", {"kill", "pkill", "killall", "taskkill", "skill"}},
      {"power", {"shutdown", "reboot", "halt", "poweroff", "telinit"}},
      {"services and scheduled jobs", {"crontab", "at", "batch", "systemctl", "service", "launchctl", "schtasks"}},
      {"user management", {"useradd", "userdel", "usermod", "groupadd", "groupdel", "groupmod", "adduser", "deluser", "passwd", "chpasswd", "gpasswd", "visudo", "chsh", "chfn"}},
      {"firewall", {"iptables", "ip6tables", "nft", "ufw", "firewall-cmd"}},
      {"mounts and namespaces", {"mount", "umount", "chroot", "nsenter", "unshare", "losetup"}},
      {"remote access", {"ssh", "scp", "sftp", "telnet", "nc", "ncat", "netcat", "socat", "ftp", "rsh", "rlogin", "sshpass"}},
      {"containers", {"docker", "docker-compose", "podman", "podman-compose", "kubectl", "lxc", "lxd", "nerdctl", "crictl"}},
      {"Windows registry and services", {"reg", "sc", "regedit", "bcdedit", "wmic"}},
  };
  return table;
}

std::optional<std::string_view> program_category(std::string_view name) {
  if (name.starts_with("mkfs")) return "destructive";
  for (const category& c : categories())
    if (in(name, c.names)) return c.label;
  return std::nullopt;
}

bool is_python(std::string_view name) {
  for (const std::string_view stem : {std::string_view("python"), std::string_view("pypy")}) {
    if (!name.starts_with(stem)) continue;
    const std::string_view rest = name.substr(stem.size());
    return std::all_of(rest.begin(), rest.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; });
  }
  return false;
}

bool is_posix_shell(std::string_view name) { return in(name, {"sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "rbash"}); }

void check_argv(const argv_t& a, const shell_command* c, shell_ctx& ctx);
void check_wrappers(const argv_t& raw, const argv_t& wrappers, const argv_t& a, shell_ctx& ctx);
void check_words_risk(const argv_t& raw, shell_ctx& ctx);

/// Shell code found inside an argument (find -exec sh -c, watch, flock -c, trap).
void nested_shell(std::string_view code, shell_ctx& ctx) {
  if (has_dyn(code)) return ctx.out.add("runs shell code computed at run time");
  if (ctx.depth + 1 > k_max_depth) return ctx.out.add("nesting is too deep to inspect");
  check_shell(code, ctx.out, ctx.depth + 1);
}

/// A bare argv found inside another command's arguments (find -exec, setpriv, strace, …).
void check_words(const argv_t& raw, shell_ctx& ctx) {
  if (raw.empty()) return;
  if (ctx.depth + 1 > k_max_depth) return ctx.out.add("nesting is too deep to inspect");
  shell_ctx inner{ctx.out, ctx.depth + 1, ctx.downloader, ctx.decoder, ctx.left_workspace};
  argv_t wrappers;
  const argv_t a = effective_argv(raw, &wrappers);
  for (const std::string& w : wrappers)
    if (w == "sudo" || w == "doas") ctx.out.add("runs " + w + " (privilege)");
  check_wrappers(raw, wrappers, a, ctx);
  check_words_risk(raw, ctx);
  if (!a.empty()) check_argv(a, nullptr, inner);
}

/// Code fed to an interpreter through its standard input.
void stdin_code(std::string_view name, const shell_command* c, shell_ctx& ctx) {
  if (c == nullptr || (!c->stdin_from_pipe && !c->here_string)) return;
  const std::string n(name);
  if (!c->stdin_from_pipe) ctx.out.add("runs " + n + " code from a here-string");
  else if (!ctx.downloader.empty()) ctx.out.add("pipes " + ctx.downloader + " into " + n);
  else if (ctx.decoder) ctx.out.add("decoded payload cannot be inspected");
  else ctx.out.add("pipes data into " + n + " as code");
}

void write_target(std::string_view path, shell_ctx& ctx) {
  if (has_dyn(path)) return ctx.out.add("writes to a file named at run time");
  if (outside_writable(path)) ctx.out.add("writes " + shorten(path) + " outside the workspace");
}

bool is_interpreter(std::string_view name) {
  return is_python(name) || is_posix_shell(name) ||
         in(name, {"perl", "ruby", "node", "nodejs", "php", "lua", "luajit", "bun", "deno", "fish", "csh", "tcsh", "busybox"});
}

bool is_wrapper(std::string_view name) {
  return in(name, {"env", "sudo", "doas", "nice", "nohup", "timeout", "time", "command", "exec", "builtin", "xargs", "stdbuf", "ionice", "chronic", "setsid"});
}

bool has_glob(std::string_view w) {
  if (w.find_first_of("*?[") != std::string_view::npos) return true;
  const std::size_t open = w.find('{');
  return open != std::string_view::npos && w.find(',', open) != std::string_view::npos && w.find('}', open) != std::string_view::npos;
}

/// A script argument read from a device, /proc, a file descriptor or a process substitution.
void script_source(std::string_view name, std::string_view script, shell_ctx& ctx) {
  if (has_dyn(script) || script.starts_with("/dev/") || script.starts_with("/proc/") || script == "-")
    ctx.out.add("runs " + std::string(name) + " code from a stream or a name chosen at run time");
}

/// The first word after a program's options (its script), skipping values of `value_letters`.
std::string first_operand(const argv_t& a, std::string_view value_letters) {
  for (std::size_t j = 1; j < a.size(); ++j) {
    const std::string& w = a[j];
    if (w == "--") return j + 1 < a.size() ? a[j + 1] : "";
    if (!is_option(w)) return w;
    if (is_long(w)) continue;
    for (std::size_t k = 1; k < w.size(); ++k) {
      if (value_letters.find(w[k]) == std::string_view::npos) continue;
      if (k + 1 == w.size()) ++j;
      break;
    }
  }
  return "";
}

// ---- program rules -------------------------------------------------------------------------

void python_module(const std::string& mod, const argv_t& a, shell_ctx& ctx) {
  static const names_t listeners = {"http.server", "SimpleHTTPServer", "CGIHTTPServer", "smtpd", "aiosmtpd", "uvicorn", "gunicorn", "hypercorn", "daphne", "xmlrpc.server", "socketserver", "websockets", "jupyter", "notebook", "jupyterlab", "streamlit"};
  if (has_dyn(mod)) return ctx.out.add("runs a python module named at run time");
  const bool listener = in(mod, listeners) || (mod == "flask" && has_word(a, {"run"})) || (mod == "pydoc" && has_word(a, {"-p", "-b"}));
  if (listener || mod.starts_with("wsgiref") || mod.starts_with("xmlrpc")) ctx.out.add("starts a listener (python -m " + mod + ")");
  if (in(mod, {"timeit", "code", "pdb", "trace", "profile", "cProfile", "runpy", "idlelib", "doctest", "pickle"}))
    ctx.out.add("runs code given on the command line (python -m " + mod + ")");
}

void check_python_cli(const std::string& name, const argv_t& a, const shell_command* c, shell_ctx& ctx) {
  if (!is_python(name)) return;
  bool script = false;
  for (std::size_t j = 1; j < a.size(); ++j) {  // every word: an option value may look like a script
    const std::string& w = a[j];
    if (w == "-" || w == "--") break;
    if (!short_cluster(w)) {
      if (!is_long(w) && !script) script_source(name, w, ctx);
      script = script || !is_long(w);
      continue;
    }
    for (std::size_t k = 1; k < w.size(); ++k) {
      if (w[k] == 'c') {
        const std::string code = option_value(a, j, k);
        if (has_dyn(code)) return ctx.out.add("runs python code computed at run time");
        if (ctx.depth + 1 > k_max_depth) return ctx.out.add("nesting is too deep to inspect");
        return check_python(code, ctx.out, ctx.depth + 1);
      }
      if (w[k] == 'm') return python_module(option_value(a, j, k), a, ctx);
      if (w[k] == 'W' || w[k] == 'X') {
        if (k + 1 == w.size()) ++j;
        break;
      }
    }
  }
  if (!script) stdin_code(name, c, ctx);
}

/// Whether a POSIX shell without -c reads its commands from standard input (no script, or -s).
bool shell_reads_stdin(const argv_t& a) {
  for (std::size_t j = 1; j < a.size(); ++j) {
    const std::string& w = a[j];
    if (w == "-" || w == "--") return true;
    if (w.size() < 2 || (w[0] != '-' && w[0] != '+')) return false;
    if (is_long(w)) {
      if (w == "--rcfile" || w == "--init-file") ++j;
      continue;
    }
    if (w[0] == '-' && w.find('s', 1) != std::string::npos) return true;
    if (w.find_first_of("oO", 1) != std::string::npos) ++j;
  }
  return true;
}

void check_shells(const std::string& name, const argv_t& a, const shell_command* c, shell_ctx& ctx) {
  if (name == "busybox" && a.size() > 1) return check_argv(argv_t(a.begin() + 1, a.end()), c, ctx);
  if (in(name, {"fish", "csh", "tcsh"})) {
    if (std::any_of(a.begin() + 1, a.end(), [](const std::string& w) { return cluster_has(w, 'c'); }))
      ctx.out.add("runs inline " + name + " code");
    return;
  }
  if (in(name, {"pwsh", "powershell", "cmd"})) {
    static const names_t inline_flags = {"-c", "-command", "-e", "-ec", "-encodedcommand", "/c", "/k", "-commandwithargs", "-cwa"};
    if (std::any_of(a.begin() + 1, a.end(), [](const std::string& w) { return in(lower(w), inline_flags); }))
      ctx.out.add("runs inline " + name + " code");
    return;
  }
  if (!is_posix_shell(name)) return;
  if (const auto payload = shell_c_payload(a)) {
    if (has_dyn(*payload)) ctx.out.add("runs shell code computed at run time");
    else if (c == nullptr) nested_shell(*payload, ctx);  // parse_shell already expanded a command's payload
    return;
  }
  if (shell_reads_stdin(a)) stdin_code(name, c, ctx);
  else script_source(name, first_operand(a, "oO"), ctx);
}

struct interpreter {
  std::string_view name;
  std::string_view inline_letters;  ///< short options whose value is code (-e)
  std::string_view value_letters;   ///< short options that take a value of another kind
  names_t inline_long;              ///< --eval, --print
  std::string_view attached = {};   ///< short options whose value is only the rest of the word
                                    ///< (perl -i[ext]: `perl -i -e` runs -e's code, perlrun(1))
};

/// A versioned interpreter name as its table entry: perl5.36.0 → perl, php8.2 → php, lua5.4 → lua.
std::string interpreter_stem(const std::string& name) {
  const std::size_t end = name.find_last_not_of("0123456789.-");
  if (end == std::string::npos || end + 1 == name.size()) return name;
  const std::string stem = name.substr(0, end + 1);
  return in(stem, {"perl", "ruby", "php", "lua", "luajit", "node", "nodejs"}) ? stem : name;
}

void check_interpreters(const std::string& versioned, const argv_t& a, const shell_command* c, shell_ctx& ctx) {
  const std::string name = interpreter_stem(versioned);
  static const std::vector<interpreter> table = {
      {"node", "ep", "r", {"--eval", "--print"}}, {"nodejs", "ep", "r", {"--eval", "--print"}},
      {"bun", "ep", "r", {"--eval", "--print"}},  {"perl", "eE", "", {}, "MmIdDxiFlC0"},
      {"ruby", "e", "IrCE", {}, "iKTWxF0l"},     {"php", "rBRE", "cdfzt", {}},
      {"lua", "e", "l", {}},                      {"luajit", "e", "l", {}},
      {"Rscript", "e", "", {}},                   {"osascript", "e", "l", {}},
  };
  if (name == "deno" && a.size() > 1 && a[1] == "eval") return ctx.out.add("runs inline deno code");
  const auto it = std::find_if(table.begin(), table.end(), [&](const interpreter& i) { return i.name == name; });
  if (it == table.end()) return;
  bool script = false;
  for (std::size_t j = 1; j < a.size() && !script; ++j) {
    const std::string& w = a[j];
    if (w == "--" || w == "-") break;
    if (is_long(w)) {
      if (in(option_name(w), it->inline_long)) return ctx.out.add("runs inline " + name + " code");
      continue;
    }
    if (!short_cluster(w)) script = true;
    for (std::size_t k = 1; !script && k < w.size(); ++k) {
      if (it->inline_letters.find(w[k]) != std::string_view::npos) return ctx.out.add("runs inline " + name + " code");
      if (it->attached.find(w[k]) != std::string_view::npos) break;
      if (it->value_letters.find(w[k]) == std::string_view::npos) continue;
      if (k + 1 == w.size()) ++j;
      break;
    }
  }
  if (!script) stdin_code(name, c, ctx);
  else script_source(name, first_operand(a, it->value_letters), ctx);
}

void check_listeners(const std::string& name, const argv_t& a, shell_ctx& ctx) {
  static const names_t servers = {"uvicorn", "gunicorn", "hypercorn", "daphne", "waitress-serve", "http-server", "live-server", "jupyter-notebook", "jupyter-lab"};
  const bool listener =
      in(name, servers) || (name == "flask" && has_word(a, {"run"})) || (name == "streamlit" && has_word(a, {"run"})) ||
      (is_python(name) && has_word(a, {"runserver"})) ||
      (name == "jupyter" && a.size() > 1 && in(a[1], {"notebook", "lab", "server"})) ||
      (name == "php" && std::any_of(a.begin() + 1, a.end(), [](const std::string& w) { return w.starts_with("-S"); })) ||
      (in(name, {"nc", "ncat", "netcat"}) && std::any_of(a.begin() + 1, a.end(), [](const std::string& w) { return cluster_has(w, 'l') || w == "--listen"; })) ||
      (name == "socat" && std::any_of(a.begin() + 1, a.end(), [](const std::string& w) { return lower(w).find("listen") != std::string::npos; }));
  if (listener) ctx.out.add("starts a listener (" + name + ")");
}

void check_permissions(const std::string& name, const argv_t& a, shell_ctx& ctx) {
  if (!in(name, {"chmod", "chown", "chgrp"})) return;
  const bool recursive = std::any_of(a.begin() + 1, a.end(), [](const std::string& w) { return w == "--recursive" || cluster_has(w, 'R'); });
  if (recursive) ctx.out.add("changes ownership or permissions recursively (" + name + " -R)");
}

void check_find(const std::string& name, const argv_t& a, shell_ctx& ctx) {
  if (name != "find") return;
  for (std::size_t j = 1; j < a.size(); ++j) {
    const std::string& w = a[j];
    if (w == "-delete") ctx.out.add("find -delete removes files");
    if (in(w, {"-fprint", "-fprint0", "-fprintf", "-fls"})) ctx.out.add("find " + w + " writes a file");
    if (in(w, {"-fprint", "-fprint0", "-fprintf", "-fls"}) && j + 1 < a.size()) write_target(a[j + 1], ctx);
    if (!in(w, {"-exec", "-execdir", "-ok", "-okdir"})) continue;
    ctx.out.add("find " + w + " runs programs");
    std::size_t end = j + 1;
    while (end < a.size() && a[end] != ";" && a[end] != "+") ++end;
    check_words(argv_t(a.begin() + static_cast<std::ptrdiff_t>(j + 1), a.begin() + static_cast<std::ptrdiff_t>(end)), ctx);
    j = end;
  }
}

void check_sysctl_setpriv(const std::string& name, const argv_t& a, shell_ctx& ctx) {
  if (name == "sysctl") {
    const bool writes = has_word(a, {"-w", "--write", "-p", "--load", "--system"}) ||
                        std::any_of(a.begin() + 1, a.end(), [](const std::string& w) { return !is_option(w) && w.find('=') != std::string::npos; });
    if (writes) ctx.out.add("writes kernel settings (sysctl)");
    return;
  }
  if (name != "setpriv") return;
  static const names_t privilege = {"--reuid", "--regid", "--ruid", "--euid", "--rgid", "--egid", "--clear-groups", "--keep-groups", "--init-groups", "--groups", "--inh-caps", "--ambient-caps", "--bounding-set", "--securebits"};
  static const names_t valued = {"--pdeathsig", "--selinux-label", "--apparmor-profile", "--landlock-access", "--landlock-rule", "--seccomp-filter"};
  std::size_t j = 1;
  for (; j < a.size() && is_option(a[j]); ++j) {
    if (in(option_name(a[j]), privilege)) return ctx.out.add("changes privileges (setpriv " + std::string(option_name(a[j])) + ")");
    if (in(a[j], valued)) ++j;
  }
  if (j < a.size()) check_words(argv_t(a.begin() + static_cast<std::ptrdiff_t>(j), a.end()), ctx);
}

struct runner {
  std::string_view name;
  std::string_view value_letters;  ///< short options that take a value
  char code_letter;                ///< short option whose value is shell code (flock -c, script -c)
  std::size_t positional;          ///< words between the options and the command (flock's lock file)
  bool joined;                     ///< the command words are joined into shell code (watch)
};

/// The dynamic loader run as a program (ld-linux-x86-64.so.2 /usr/bin/rm runs rm; ld.so(8)).
bool is_dynamic_loader(std::string_view name) {
  return name.starts_with("ld-linux") || name.starts_with("ld.so") || (name.starts_with("ld-") && name.find(".so") != std::string_view::npos);
}

/// The words after the options of `a`; `valued` options take the next word.
argv_t after_options(const argv_t& a, const names_t& valued) {
  std::size_t j = 1;
  for (; j < a.size() && is_option(a[j]); ++j) {
    if (a[j] == "--") return argv_t(a.begin() + static_cast<std::ptrdiff_t>(j + 1), a.end());
    if (in(a[j], valued)) ++j;
  }
  return j < a.size() ? argv_t(a.begin() + static_cast<std::ptrdiff_t>(j), a.end()) : argv_t{};
}

/// Programs that run their arguments as a command.
void check_runners(const std::string& name, const argv_t& a, shell_ctx& ctx) {
  static const std::vector<runner> table = {
      {"strace", "eoOpPsSuEXIab", 0, 0, false}, {"ltrace", "eoOpsSuanlLxAD", 0, 0, false},
      {"unbuffer", "", 0, 0, false},            {"fakeroot", "lsi", 0, 0, false},
      {"firejail", "", 0, 0, false},            {"catchsegv", "", 0, 0, false},
      {"caffeinate", "wt", 0, 0, false},        {"flock", "wE", 'c', 1, false},
      {"taskset", "", 0, 1, false},             {"watch", "nqg", 0, 0, true},
      {"script", "qTIOBE", 'c', 0, false},      {"trap", "", 0, 0, false},
      {"valgrind", "", 0, 0, false},            {"chrt", "TPD", 0, 1, false},
      {"prlimit", "p", 0, 0, false},
  };
  if (name == "sg") {  // sg GROUP [-c] COMMAND (sg(1))
    if (a.size() > 3 && a[2] == "-c") return nested_shell(a[3], ctx);
    return a.size() > 2 ? check_words(argv_t(a.begin() + 2, a.end()), ctx) : void();
  }
  if (is_dynamic_loader(name)) return check_words(after_options(a, {"--library-path", "--preload", "--argv0", "--audit"}), ctx);
  const auto it = std::find_if(table.begin(), table.end(), [&](const runner& r) { return r.name == name; });
  if (it == table.end()) return;
  if (name == "trap") return a.size() > 1 && !is_option(a[1]) ? nested_shell(a[1], ctx) : void();
  std::size_t j = 1;
  for (; j < a.size() && is_option(a[j]) && a[j] != "--"; ++j) {
    for (std::size_t k = 1; !is_long(a[j]) && k < a[j].size(); ++k) {
      if (a[j][k] == it->code_letter) return nested_shell(option_value(a, j, k), ctx);
      if (it->value_letters.find(a[j][k]) == std::string_view::npos) continue;
      if (k + 1 == a[j].size()) ++j;
      break;
    }
  }
  if (name == "script") return;  // script without -c runs an interactive shell
  j += (j < a.size() && a[j] == "--" ? 1 : 0) + it->positional;
  if (j >= a.size()) return;
  const argv_t rest(a.begin() + static_cast<std::ptrdiff_t>(j), a.end());
  if (!it->joined) return check_words(rest, ctx);
  std::string code;
  for (const std::string& w : rest) code += (code.empty() ? "" : " ") + w;
  nested_shell(code, ctx);
}

void check_curl(const std::string& name, const argv_t& a, shell_ctx& ctx) {
  if (name != "curl") return;
  static const names_t uploads = {"--data", "--data-raw", "--data-binary", "--data-urlencode", "--data-ascii", "--json", "--form", "--form-string", "--upload-file"};
  static const names_t methods = {"POST", "PUT", "DELETE", "PATCH"};
  const auto method = [&](const std::string& m) {
    std::string up = m;
    std::transform(up.begin(), up.end(), up.begin(), [](unsigned char ch) { return static_cast<char>(std::toupper(ch)); });
    if (in(up, methods)) ctx.out.add("sends an HTTP " + up + " (curl)");
  };
  for (std::size_t j = 1; j < a.size(); ++j) {
    const std::string& w = a[j];
    const std::string_view opt = option_name(w);
    const std::string value = w.find('=') != std::string::npos ? w.substr(w.find('=') + 1) : (j + 1 < a.size() ? a[j + 1] : "");
    if (is_long(w) && in(opt, uploads)) ctx.out.add("uploads data (curl " + std::string(opt) + ")");
    if (is_long(w) && opt == "--request") method(value);
    if (is_long(w) && opt == "--output") write_target(value, ctx);
    for (std::size_t k = 1; short_cluster(w) && k < w.size(); ++k) {
      const char ch = w[k];
      if (ch == 'd' || ch == 'F' || ch == 'T') ctx.out.add(std::string("uploads data (curl -") + ch + ")");
      if (ch == 'X') method(option_value(a, j, k));
      if (ch == 'o') write_target(option_value(a, j, k), ctx);
      if (std::string_view("dFTXoAbcCDeEHKmPQrtuUwxYyz").find(ch) != std::string_view::npos) break;
    }
  }
}

void check_wget(const std::string& name, const argv_t& a, shell_ctx& ctx) {
  if (name != "wget") return;
  for (std::size_t j = 1; j < a.size(); ++j) {
    const std::string& w = a[j];
    const std::string_view opt = option_name(w);
    if (in(opt, {"--post-data", "--post-file", "--body-data", "--body-file"})) ctx.out.add("uploads data (wget " + std::string(opt) + ")");
    if (opt == "--method") {
      const std::string m = lower(w.find('=') != std::string::npos ? w.substr(w.find('=') + 1) : (j + 1 < a.size() ? a[j + 1] : ""));
      if (in(m, {"post", "put", "delete", "patch"})) ctx.out.add("sends an HTTP request that changes data (wget --method)");
    }
    if (opt == "--output-document" && w.find('=') != std::string::npos) write_target(w.substr(w.find('=') + 1), ctx);
    if ((w == "-O" || w == "--output-document") && j + 1 < a.size()) write_target(a[j + 1], ctx);
    if (w.starts_with("-O") && w.size() > 2) write_target(w.substr(2), ctx);
  }
}

void check_writes(const std::string& name, const argv_t& a, shell_ctx& ctx) {
  static const names_t every = {"tee", "touch", "mkdir", "chmod", "chown", "chgrp"};
  static const names_t last = {"cp", "mv", "ln", "install", "rsync"};
  if (name == "dd") {
    for (const std::string& w : a)
      if (w.starts_with("of=")) write_target(w.substr(3), ctx);
    return;
  }
  if (name == "sort") {
    for (std::size_t j = 1; j < a.size(); ++j) {
      if (a[j].starts_with("--output=")) write_target(a[j].substr(9), ctx);
      for (std::size_t k = 1; short_cluster(a[j]) && !is_long(a[j]) && k < a[j].size(); ++k)
        if (a[j][k] == 'o') write_target(option_value(a, j, k), ctx);
      if (a[j] == "--output" && j + 1 < a.size()) write_target(a[j + 1], ctx);
    }
    return;
  }
  const bool all = in(name, every);
  if (!all && !in(name, last)) return;
  argv_t operands;
  for (std::size_t j = 1; j < a.size(); ++j) {
    const std::string& w = a[j];
    if ((w == "-t" || w == "--target-directory") && j + 1 < a.size()) write_target(a[++j], ctx);
    else if (w.starts_with("--target-directory=")) write_target(w.substr(19), ctx);
    else if (!is_option(w)) operands.push_back(w);
  }
  if (all) {
    for (const std::string& w : operands) write_target(w, ctx);
  } else {
    for (const std::string& w : operands)
      if (!has_dyn(w) && outside_writable(w)) ctx.out.add("copies or moves " + shorten(w) + " outside the workspace");
    if (operands.size() >= 2) write_target(operands.back(), ctx);
  }
}

void check_sed(const std::string& name, const argv_t& a, shell_ctx& ctx) {
  if (name != "sed") return;
  bool in_place = false, script_option = false;
  argv_t operands;
  for (std::size_t j = 1; j < a.size(); ++j) {
    const std::string& w = a[j];
    if (w.starts_with("--in-place") || (short_cluster(w) && w[1] == 'i')) in_place = true;
    if (w == "-e" || w == "-f" || w == "--expression" || w == "--file") script_option = true, ++j;
    else if (w.starts_with("--expression=") || w.starts_with("--file=")) script_option = true;
    else if (!is_option(w)) operands.push_back(w);
  }
  if (!in_place) return;
  for (std::size_t k = script_option ? 0 : 1; k < operands.size(); ++k) write_target(operands[k], ctx);
}

void check_remote_copy(const std::string& name, const argv_t& a, shell_ctx& ctx) {
  if (name != "rsync") return;
  for (std::size_t j = 1; j < a.size(); ++j) {
    const std::string& w = a[j];
    if (is_option(w) || has_dyn(w)) continue;
    const std::size_t colon = w.find(':');
    const bool remote = w.starts_with("rsync://") || w.find("::") != std::string::npos ||
                        (colon != std::string::npos && colon > 0 && w.find('/') > colon);
    if (remote) return ctx.out.add("copies to or from a remote host (rsync)");
  }
}

void check_awk_eval(const std::string& name, const argv_t& a, const shell_command* c, shell_ctx& ctx) {
  if (in(name, {"awk", "gawk", "mawk", "nawk"})) {
    for (std::size_t j = 1; j < a.size(); ++j) {
      std::string compact;
      for (const char ch : a[j])
        if (ch != ' ' && ch != '\t') compact += ch;
      bool pipe = false;
      for (std::size_t k = 0; k < compact.size(); ++k)
        if (compact[k] == '|' && (k + 1 >= compact.size() || compact[k + 1] != '|') && (k == 0 || compact[k - 1] != '|')) pipe = true;
      if (compact.find("system(") != std::string::npos || pipe)
        return ctx.out.add("awk runs a command");
    }
    return;
  }
  if (name == "eval" && a.size() > 1) return ctx.out.add("eval runs text as shell code");
  if ((name == "source" || name == ".") && a.size() > 1) {
    if (has_dyn(a[1])) return ctx.out.add("sources a file chosen at run time");
    if (in(a[1], {"/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", "-"})) stdin_code(name, c, ctx);
  }
}

/// Shell built-ins that change how later words are run (alias, hash -p, trap, printf -v, …).
void check_builtins(const std::string& name, const argv_t& a, shell_ctx& ctx) {
  const auto any = [&](const names_t& set) { return has_word(a, set); };
  bool bad = false;
  if (name == "hash") bad = std::any_of(a.begin() + 1, a.end(), [](const std::string& w) { return cluster_has(w, 'p'); });
  else if (name == "alias" || name == "enable") bad = a.size() > 1;
  else if (name == "shopt") bad = any({"expand_aliases", "extdebug"});
  else if (name == "trap") bad = a.size() > 1 && !any({"-l", "-p"});
  else if (name == "printf") bad = std::any_of(a.begin() + 1, a.end(), [](const std::string& w) { return w.starts_with("-v"); });
  else if (name == "builtin" || name == "eval") bad = true;
  else if (name == "mapfile" || name == "readarray") {
    if (std::any_of(a.begin() + 1, a.end(), [](const std::string& w) { return cluster_has(w, 'C'); })) ctx.out.add(name + " -C runs a callback");
  }
  else if (name == "declare" || name == "typeset" || name == "local" || name == "readonly") bad = std::any_of(a.begin() + 1, a.end(), [](const std::string& w) { return cluster_has(w, 'n'); });
  if (bad) ctx.out.add("uses a shell built-in that changes how commands run (" + name + ")");
}

/// A sqlite3 dot command (sqlite3 accepts any unique prefix: .sh is .shell) that runs a program,
/// loads code or writes a file.
bool sqlite_dot_runs(std::string_view w) {
  if (!w.starts_with(".") || w.size() < 3) return false;
  const std::string_view cmd = w.substr(1, w.find_first_of(" \t\n") == std::string_view::npos ? std::string_view::npos : w.find_first_of(" \t\n") - 1);
  for (const std::string_view full : {"shell", "system", "load", "output", "once", "excel", "save", "backup", "import"})
    if (full.starts_with(cmd)) return true;
  return false;
}

/// Programs and editors that run commands given in their options.
void check_command_options(const std::string& name, const argv_t& a, shell_ctx& ctx) {
  if (name == "sqlite3") {
    for (std::size_t j = 1; j < a.size(); ++j) {
      const std::string w(a[j].substr(std::min(a[j].size(), a[j].find_first_not_of(" \t\n"))));
      if (sqlite_dot_runs(w) || w == "-cmd") return ctx.out.add("sqlite3 runs a command or writes a file (" + shorten(w.substr(0, w.find(' '))) + ")");
    }
    return;
  }
  if (!in(name, {"vim", "vi", "nvim", "ex", "view", "gvim", "rvim", "gdb", "lldb", "emacs", "less", "more", "man", "nano", "ed"})) return;
  static const names_t opts = {"-c", "--cmd", "-ex", "-es", "-Es", "-S", "-x", "-iex", "-ix", "--command", "--eval", "--batch", "-batch", "-l", "--load", "-o", "--one-line", "-s", "--source", "-P", "--pager", "-H", "--html", "-O", "-k"};
  const bool bad = std::any_of(a.begin() + 1, a.end(), [](const std::string& w) {
    return w.starts_with("+") || in(option_name(w), opts) || w.starts_with("-c") || w.starts_with("--eval") || w.starts_with("--pager");
  });
  if (bad) ctx.out.add(name + " runs commands given on its command line");
}

void check_tar(const std::string& name, const argv_t& a, shell_ctx& ctx) {
  if (!in(name, {"tar", "bsdtar", "gtar"})) return;
  static const names_t runs = {"--checkpoint-action", "--to-command", "--use-compress-program", "--info-script", "--new-volume-script", "--rsh-command", "--rmt-command", "--compress-program"};
  for (std::size_t j = 1; j < a.size(); ++j) {
    const std::string& w = a[j];
    if (in(option_name(w), runs) || cluster_has(w, 'I') || cluster_has(w, 'F')) ctx.out.add("tar runs a command (" + shorten(w) + ")");
    if (option_name(w) == "--directory") write_target(w.find('=') != std::string::npos ? w.substr(w.find('=') + 1) : (j + 1 < a.size() ? a[j + 1] : ""), ctx);
    for (std::size_t k = 1; short_cluster(w) && k < w.size(); ++k) {
      if (w[k] != 'C' && w[k] != 'f') continue;
      if (w[k] == 'C') write_target(option_value(a, j, k), ctx);
      break;
    }
  }
}

void check_sed_exec(const std::string& name, const argv_t& a, shell_ctx& ctx) {
  if (name != "sed") return;
  const auto runs = [](const std::string& w) {
    const std::string_view script = w.starts_with("--expression=") ? std::string_view(w).substr(13) : std::string_view(w);
    return judge_sed_script(script) == sed_verdict::runs;
  };
  if (std::any_of(a.begin() + 1, a.end(), [&](const std::string& w) { return (!is_option(w) || w.starts_with("--expression=")) && runs(w); }))
    ctx.out.add("sed runs a command or writes a file (e/w)");
}

void check_listeners_more(const std::string& name, const argv_t& a, shell_ctx& ctx) {
  const bool listener = (name == "openssl" && has_word(a, {"s_server", "s_time"})) ||
                        (name.starts_with("pydoc") && std::any_of(a.begin() + 1, a.end(), [](const std::string& w) { return w.starts_with("-p") || w.starts_with("-b"); })) ||
                        (in(name, {"busybox", "toybox"}) && has_word(a, {"httpd", "nc", "telnetd", "ftpd", "tcpsvd", "udpsvd"})) ||
                        in(name, {"httpd", "nginx", "lighttpd", "tcpserver", "inetd", "xinetd", "ngrok", "cloudflared"});
  if (listener) ctx.out.add("starts a listener (" + name + ")");
}

void check_argv(const argv_t& a, const shell_command* c, shell_ctx& ctx) {
  if (has_dyn(a[0])) return ctx.out.add("the program name is computed at run time");
  if (has_glob(a[0]) && a[0] != "[" && a[0] != "[[") return ctx.out.add("the program name is expanded at run time");
  if (is_option(a[0])) return ctx.out.add("a wrapper has an option the classifier does not know (" + shorten(a[0]) + ")");
  const std::string name = base_name(a[0]);
  if (const auto cat = program_category(name)) ctx.out.add("runs " + name + " (" + std::string(*cat) + ")");
  check_permissions(name, a, ctx);
  check_find(name, a, ctx);
  if (name == "git") check_git_dangers(a, ctx.out);
  check_sysctl_setpriv(name, a, ctx);
  check_curl(name, a, ctx);
  check_wget(name, a, ctx);
  check_python_cli(name, a, c, ctx);
  check_shells(name, a, c, ctx);
  check_interpreters(name, a, c, ctx);
  check_listeners(name, a, ctx);
  check_runners(name, a, ctx);
  check_writes(name, a, ctx);
  check_sed(name, a, ctx);
  check_remote_copy(name, a, ctx);
  check_awk_eval(name, a, c, ctx);
  check_builtins(name, a, ctx);
  check_command_options(name, a, ctx);
  check_tar(name, a, ctx);
  check_sed_exec(name, a, ctx);
  check_listeners_more(name, a, ctx);
}

void check_redirects(const shell_command& c, shell_ctx& ctx) {
  for (std::size_t i = 0; i < c.redirects.size(); ++i) {
    const std::string& target = c.redirects[i];
    if (target.starts_with("/dev/tcp/") || target.starts_with("/dev/udp/") || target.find("/dev/tcp/") != std::string::npos ||
        target.find("/dev/udp/") != std::string::npos)
      ctx.out.add("opens a network connection (" + shorten(target) + ")");
    if (!target.empty())
      if (const auto r = sensitive_path(target)) ctx.out.add(*r);
    if (!c.redirect_writes[i]) continue;
    if (target.empty()) ctx.out.add("writes to a file named at run time");
    else if (outside_writable(target)) ctx.out.add("writes " + shorten(target) + " outside the workspace");
    else if (ctx.left_workspace && !target.starts_with("/")) ctx.out.add("writes after changing to a directory outside the workspace");
    else if (!target.starts_with("/dev/")) ctx.out.add("writes to " + shorten(target) + " (redirection)");
  }
}

/// Wrapper chains the unwrapping cannot see through: too many, env options it does not know,
/// xargs running a wrapper, a shell or an interpreter (or nothing: echo).
void check_wrappers(const argv_t& raw, const argv_t& wrappers, const argv_t& a, shell_ctx& ctx) {
  if (wrappers.size() >= 60) ctx.out.add("too many wrappers to unwrap");
  for (std::size_t p = 0; p < raw.size(); ++p) {
    if (program_name(raw[p]) != "env") continue;
    for (std::size_t q = p + 1; q < raw.size() && (is_option(raw[q]) || is_assignment_word(raw[q])); ++q)
      if (raw[q].starts_with("--split-string") || (short_cluster(raw[q]) && raw[q].find('S') != std::string::npos))
        ctx.out.add("env -S splits a string into a command");
  }
  const auto x = std::find(wrappers.begin(), wrappers.end(), "xargs");
  if (x == wrappers.end()) return;
  if (a.empty() || x + 1 != wrappers.end() || is_interpreter(base_name(a[0])) || is_wrapper(base_name(a[0])))
    ctx.out.add("xargs runs a shell, an interpreter or a wrapper");
}

/// Variables that change which program runs or which file a listed program loads code or
/// configuration from (HOME and XDG_CONFIG_HOME: git's config, whose core.fsmonitor runs a
/// command; RIPGREP_CONFIG_PATH: rg options such as --pre; GCONV_PATH: glibc loads iconv modules;
/// PYTHONINSPECT: python reads code from standard input after -c).
bool risky_variable(std::string_view name) {
  static const names_t vars = {"PATH", "PS1", "PS2", "PS4", "PROMPT_COMMAND", "BASH_ENV", "ENV", "IFS", "PAGER", "EDITOR", "VISUAL", "MANPAGER", "LESSOPEN", "BROWSER", "SHELLOPTS", "BASHOPTS", "NODE_OPTIONS", "PERL5OPT", "RUBYOPT", "CDPATH", "HISTFILE", "TERMINAL", "HOME", "RIPGREP_CONFIG_PATH", "GCONV_PATH", "BASH_LOADABLES_PATH"};
  static const names_t harmless_python = {"PYTHONUNBUFFERED", "PYTHONIOENCODING", "PYTHONDONTWRITEBYTECODE", "PYTHONHASHSEED", "PYTHONUTF8"};
  return in(name, vars) || name.starts_with("GIT_") || name.starts_with("BASH_FUNC_") || name.starts_with("LD_") ||
         name.starts_with("XDG_") || name.starts_with("PIP_") || (name.starts_with("PYTHON") && !in(name, harmless_python));
}

/// Assignments to variables that change what later commands run, and globbed system paths.
void check_words_risk(const argv_t& raw, shell_ctx& ctx) {
  for (const std::string& w : raw) {
    if (is_assignment_word(w)) {
      const std::string_view var = std::string_view(w).substr(0, w.find_first_of("[+="));
      if (risky_variable(var)) ctx.out.add("sets " + std::string(var) + ", which changes what commands run");
    }
    const std::string_view val = is_assignment_word(w) || is_long(w) ? std::string_view(w).substr(w.find('=') == std::string::npos ? 0 : w.find('=') + 1) : std::string_view(w);
    if (!has_glob(val)) continue;
    static const names_t roots = {"/etc", "/proc", "/root", "/home", "/sys", "/dev", "/boot", "/var", "/usr", "/opt", "/srv", "/run", "/mnt", "/media", "/lib"};
    const bool outside = val.starts_with("~") || val.starts_with(std::string_view("\0", 1)) ||
                         std::any_of(roots.begin(), roots.end(), [&](std::string_view r) { return val.starts_with(r); }) || (val.starts_with("/") && !val.starts_with("/workspace/") && !val.starts_with("/tmp/"));
    if (outside) ctx.out.add("a path pattern outside the workspace (" + shorten(val) + ")");
  }
}

void check_command(const shell_command& c, shell_ctx& ctx) {
  argv_t wrappers;
  const argv_t a = effective_argv(c.argv, &wrappers);
  for (const std::string& w : wrappers)
    if (w == "sudo" || w == "doas") ctx.out.add("runs " + w + " (privilege)");
  for (const std::string& w : c.argv)
    if (const auto r = sensitive_path(w)) ctx.out.add(*r);
  check_wrappers(c.argv, wrappers, a, ctx);
  check_words_risk(c.argv, ctx);
  check_redirects(c, ctx);
  const auto first = std::find_if(c.argv.begin(), c.argv.end(), [](const std::string& w) { return !is_assignment_word(w); });
  if (first != c.argv.end() && program_name(*first) == "exec" && !c.redirects.empty())
    ctx.out.add("exec with redirections rewires the shell's files");
  const std::size_t named = ctx.out.added;
  if (!a.empty()) check_argv(a, &c, ctx);
  if (ctx.out.added != named) return;  // the program's own danger is named; "not known to be safe" adds nothing
  // The allow-list (risk/shell_allow.h): a[0] is the word at this index, its directory stripped.
  const std::size_t at = c.argv.size() >= a.size() ? c.argv.size() - a.size() : 0;
  check_allowed_wrappers(wrappers, argv_t(c.argv.begin(), c.argv.begin() + static_cast<std::ptrdiff_t>(at)), ctx.out);
  if (!a.empty()) check_allowed(a, at < c.argv.size() ? std::string_view(c.argv[at]) : std::string_view(a[0]), ctx.out);
}

bool is_decoder(const std::string& name, const argv_t& a) {
  if (in(name, {"base64", "base32", "basenc", "openssl"})) return has_word(a, {"-d", "--decode", "-D"});
  if (name == "xxd") return std::any_of(a.begin() + 1, a.end(), [](const std::string& w) { return cluster_has(w, 'r'); });
  return in(name, {"uudecode", "gunzip", "zcat", "bunzip2", "xzcat", "unxz"}) || (name == "gzip" && has_word(a, {"-d", "--decompress"}));
}

bool leaves_workspace(const argv_t& a) {
  std::size_t j = 1;
  while (j < a.size() && is_option(a[j])) ++j;
  if (j >= a.size()) return true;  // cd alone goes home
  return a[j] == "-" || has_dyn(a[j]) || outside_writable(a[j]);
}

}  // namespace

void check_shell(std::string_view command, findings& out, int depth) {
  const bool control = std::any_of(command.begin(), command.end(), [](char ch) {
    const auto u = static_cast<unsigned char>(ch);
    return (u < 0x20 && ch != '\t' && ch != '\n') || u == 0x7f;
  });
  if (control) out.add("contains control characters");
  check_arithmetic_text(command, out);
  const shell_parse p = parse_shell(command);
  if (!p.ok) return out.add("the command cannot be parsed (" + p.why + ")");
  check_shapes(p, out);
  for (const shell_loop& l : p.loops)  // `for HOME in …` assigns like HOME=…
    if (!l.words.empty() && risky_variable(l.words[0])) out.add("sets " + l.words[0] + ", which changes what commands run");
  shell_ctx ctx{out, depth, "", false, false};
  for (const shell_command& c : p.commands) {
    const argv_t a = effective_argv(c.argv);
    if (a.empty()) continue;
    if (const auto payload = shell_c_payload(a)) check_arithmetic_text(*payload, out);  // its text was single-quoted
    const std::string name = base_name(a[0]);
    if ((name == "curl" || name == "wget") && ctx.downloader.empty()) ctx.downloader = name;
    if (is_decoder(name, a)) ctx.decoder = true;
    if ((name == "cd" || name == "pushd") && leaves_workspace(a)) ctx.left_workspace = true;
  }
  for (const shell_command& c : p.commands) check_command(c, ctx);
}

}  // namespace warden::risk::risk_detail
