// The named dangers of git commands for the terminal rules (risk/shell_allow.h): a config set on
// the command line or one that runs commands, subcommands that run other programs, and operations
// that destroy work or history. Sources: the git manual pages (git-config(1) core.*, alias.*,
// *.textconv, *.command; git-grep -O, git-rebase -x, git-submodule foreach, git-difftool -x).
#include <algorithm>
#include <cctype>

#include "risk/shell_allow.h"

namespace warden::risk::risk_detail {

namespace {

using argv_t = std::vector<std::string>;
using names_t = std::vector<std::string_view>;

bool has_dyn(std::string_view w) { return w.find('\0') != std::string_view::npos; }
bool is_option(std::string_view a) { return a.size() > 1 && a[0] == '-'; }
bool cluster_has(std::string_view a, char c) { return is_option(a) && !a.starts_with("--") && a.find(c, 1) != std::string_view::npos; }
bool in(std::string_view w, const names_t& set) { return std::find(set.begin(), set.end(), w) != set.end(); }
std::string_view option_name(std::string_view w) { return w.substr(0, w.find('=')); }

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool git_config_runs(std::string key, std::string_view value) {
  key = lower(key);
  if (key.starts_with("core.") || key.starts_with("alias.") || key.ends_with(".textconv") || key.ends_with(".command")) return true;
  static const names_t keys = {"core.sshcommand", "core.pager", "core.fsmonitor", "core.hookspath", "core.editor", "sequence.editor", "diff.external", "core.gitproxy", "credential.helper"};
  return in(key, keys) || (key.starts_with("alias.") && value.starts_with("!"));
}

/// "git <sub> …" when the operation destroys work or history; "" otherwise.
std::string destructive_git(const std::string& sub, const argv_t& r) {
  const auto any = [&](auto pred) { return std::any_of(r.begin(), r.end(), pred); };
  const auto word = [&](const names_t& set) { return any([&](const std::string& w) { return in(option_name(w), set); }); };
  const auto letter = [&](char c) { return any([&](const std::string& w) { return cluster_has(w, c); }); };
  bool bad = false;
  if (sub == "reset") bad = word({"--hard"});
  else if (sub == "push")
    bad = word({"--force", "--force-with-lease", "--force-if-includes", "--delete", "--mirror", "--prune"}) || letter('f') || letter('d') ||
          any([](const std::string& w) { return !is_option(w) && (w.starts_with("+") || w.starts_with(":")); });
  else if (sub == "checkout") bad = word({"--force"}) || letter('f');
  else if (sub == "switch") bad = word({"--force", "--discard-changes"}) || letter('f');
  else if (sub == "branch") bad = letter('D') || ((word({"--delete"}) || letter('d')) && (word({"--force"}) || letter('f')));
  else if (sub == "clean") bad = word({"--force"}) || letter('f');
  else if (sub == "stash") bad = !r.empty() && in(r[0], {"clear", "drop"});
  else if (sub == "reflog") bad = !r.empty() && in(r[0], {"expire", "delete"});
  else if (sub == "update-ref") bad = word({"-d"});
  else bad = in(sub, {"filter-branch", "filter-repo"});
  if (!bad) return "";
  std::string what = "git " + sub;
  for (const std::string& w : r)
    if (is_option(w) && what.size() < 40) what += " " + w;
  return what;
}

/// git subcommands that run other programs (grep -O, rebase -x, submodule foreach).
void git_runs_commands(const std::string& sub, const argv_t& r, findings& out) {
  const auto opt = [&](std::string_view long_name, char letter) {
    return std::any_of(r.begin(), r.end(), [&](const std::string& w) {
      return option_name(w) == long_name || (letter != 0 && cluster_has(w, letter)) || (letter == 'O' && w.starts_with("-O"));
    });
  };
  bool bad = false;
  if (sub == "grep") bad = opt("--open-files-in-pager", 'O');
  else if (sub == "rebase") bad = opt("--exec", 'x');
  else if (sub == "submodule") bad = std::find(r.begin(), r.end(), "foreach") != r.end();
  else if (sub == "difftool" || sub == "mergetool") bad = opt("--extcmd", 'x') || opt("--tool", 't');
  if (bad) out.add("git " + sub + " runs other commands");
}

}  // namespace

void check_git_dangers(const argv_t& a, findings& out) {
  std::size_t j = 1;
  while (j < a.size() && is_option(a[j])) {
    const std::string& w = a[j];
    if (w.starts_with("-c") || w.starts_with("--config-env")) out.add("sets a git config on the command line (git -c)");
    j += in(w, {"-c", "-C", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix"}) ? 2 : 1;
  }
  if (j >= a.size()) return;
  const argv_t rest(a.begin() + static_cast<std::ptrdiff_t>(j + 1), a.end());
  if (has_dyn(a[j])) return out.add("runs a git command named at run time");
  if (a[j] == "config" && std::any_of(rest.begin(), rest.end(), [](const std::string& w) { return !is_option(w) && git_config_runs(w, ""); }))
    out.add("sets a git config that runs commands");
  git_runs_commands(a[j], rest, out);
  const std::string what = destructive_git(a[j], rest);
  if (!what.empty()) out.add("runs a destructive git operation (" + what + ")");
}

}  // namespace warden::risk::risk_detail
