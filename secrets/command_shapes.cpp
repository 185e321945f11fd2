// Rule 2 of secrets/find_secrets.h read word by word: the text is split into simple commands
// (at line breaks, ; | || & && ( ) and backquotes outside quotes), each into words (quotes
// group blanks; a quote that does not close ends at the line's end), and each command is
// checked for the credential shapes that are positional: `set NAME VALUE`, `-a PASS` of
// redis-cli, `-N`/`-P` of ssh-keygen, `-w` of LDAP tools, `-U user%pass`, and the words echoed
// into `sudo -S`.
//
// Linear: every byte is read once by the splitter, and every rule reads a command's words a
// bounded number of times.
#include <string_view>
#include <vector>

#include "secrets/scan_text.h"
#include "secrets/secret_detect.h"

namespace warden::secrets::detail {
namespace {

struct word {
  std::size_t b, e;
};

/// One simple command: its words and the separator after it ('|' a pipe, 0 anything else).
struct command {
  std::vector<word> words;
  char sep = 0;
};

constexpr bool ends_command(char c) {
  switch (c) {
    case '\n': case ';': case '(': case ')': case '`': case '|': return true;
    default: return false;
  }
}

/// `&` that belongs to a redirection (`2>&1`, `&>f`) rather than separating commands.
bool redirect_amp(std::string_view s, std::size_t i) {
  return (i > 0 && (s[i - 1] == '>' || s[i - 1] == '<')) || (i + 1 < s.size() && s[i + 1] == '>');
}

/// Reads the command starting at `i` into `c`; returns where the next one starts.
std::size_t read_command(std::string_view s, std::size_t i, command& c) {
  c.words.clear();
  c.sep = 0;
  while (i < s.size()) {
    while (i < s.size() && is_space(s[i]) && s[i] != '\n') ++i;  // \r \f \v too: each pass moves on
    if (i >= s.size()) break;
    const char ch = s[i];
    if (ch == '|') {
      const bool pipe = i + 1 >= s.size() || s[i + 1] != '|';
      c.sep = pipe ? '|' : 0;
      return i + (pipe ? 1 : 2);
    }
    if (ends_command(ch) || (ch == '&' && !redirect_amp(s, i))) return i + 1;
    if (ch == '#') {  // a comment, to the end of the line
      while (i < s.size() && s[i] != '\n') ++i;
      continue;
    }
    std::size_t j = i;
    while (j < s.size() && !is_space(s[j]) && !ends_command(s[j]) && (s[j] != '&' || redirect_amp(s, j))) {
      if (s[j] == '\\') {
        j += 2;
      } else if (s[j] == '"' || s[j] == '\'') {
        const std::size_t close = quote_end(s, j);
        j = close < s.size() && s[close] == s[j] ? close + 1 : close;
      } else {
        ++j;
      }
    }
    j = std::min(j, s.size());
    c.words.push_back({i, j});
    i = j;
  }
  return s.size();
}

/// A word's content: inside its quotes when the whole word is one quoted string.
span content(std::string_view s, word w) {
  if (w.e - w.b >= 2 && (s[w.b] == '"' || s[w.b] == '\'') && s[w.e - 1] == s[w.b]) return {w.b + 1, w.e - 1};
  return {w.b, w.e};
}

std::string_view text(std::string_view s, span c) { return s.substr(c.begin, c.end - c.begin); }

/// Records `v` unless it is empty or an expansion (`$X`, `$(…)`: not in the text).
void record(std::string_view s, span v, std::vector<span>& out) {
  if (v.end <= v.begin) return;
  if (s[v.begin] == '$' && v.begin > 0 && s[v.begin - 1] == '\'') {  // '$…' is literal
    out.push_back(v);
    return;
  }
  if (!is_expansion_at(s, v.begin)) out.push_back(v);
}

/// The program of a command (its index and name, without directory), after NAME=value words
/// and the wrappers sudo (and its flags), env, time, nohup, exec, command; and whether sudo
/// reads the password from stdin (-S, --stdin).
struct program {
  std::size_t at = 0;
  std::string_view name;
  bool sudo_stdin = false;
};

bool is_assignment(std::string_view w) {
  const auto eq = w.find('=');
  return eq != std::string_view::npos && eq > 0 && (is_alpha(w[0]) || w[0] == '_');
}

program program_of(std::string_view s, const command& c) {
  program p;
  bool in_sudo = false;
  for (; p.at < c.words.size(); ++p.at) {
    const std::string_view w = text(s, content(s, c.words[p.at]));
    if (in_sudo && w.starts_with("-")) {
      p.sudo_stdin = p.sudo_stdin || w == "--stdin" || (!w.starts_with("--") && w.find('S') != std::string_view::npos);
      if (w == "-u" || w == "-g" || w == "-C" || w == "-h" || w == "-p") ++p.at;  // takes a value
      continue;
    }
    in_sudo = w == "sudo";
    if (in_sudo || w == "env" || w == "time" || w == "nohup" || w == "exec" || w == "command" || is_assignment(w)) {
      continue;
    }
    p.name = w.substr(w.rfind('/') == std::string_view::npos ? 0 : w.rfind('/') + 1);
    break;
  }
  return p;
}

/// `set NAME VALUE` / `config [flags] NAME VALUE` with a secret NAME (not a `…helper`).
void config_set(std::string_view s, const command& c, std::size_t from, std::vector<span>& out) {
  const auto& w = c.words;
  for (std::size_t j = from; j < w.size(); ++j) {
    const std::string_view verb = text(s, content(s, w[j]));
    if (!iequals(verb, "set") && !iequals(verb, "config")) continue;
    std::size_t k = j + 1;
    while (k < w.size() && text(s, content(s, w[k])).starts_with("-")) ++k;
    if (k + 1 >= w.size()) return;
    const std::string_view name = text(s, content(s, w[k]));
    const span value = content(s, w[k + 1]);
    if (is_secret_name(name) && !name.ends_with("helper") && !text(s, value).starts_with("-")) record(s, value, out);
    j = k;
  }
}

/// The part of `v` after its first `%` (Samba's user%password).
void after_percent(std::string_view s, span v, std::vector<span>& out) {
  const auto pct = text(s, v).find('%');
  if (pct != std::string_view::npos) record(s, {v.begin + pct + 1, v.end}, out);
}

/// The flags whose value is a password for this program (spaced or glued): `-a` of redis-cli,
/// `-N`/`-P` of ssh-keygen, `-w` of LDAP tools or after a bind DN.
bool password_flag(std::string_view prog, char flag, bool bind_dn) {
  switch (flag) {
    case 'a': return prog == "redis-cli";
    case 'N': case 'P': return prog == "ssh-keygen";
    case 'w': return prog.starts_with("ldap") || bind_dn;
    default: return false;
  }
}

/// The credential flags of one command.
void flag_values(std::string_view s, const command& c, const program& p, std::vector<span>& out) {
  const auto& w = c.words;
  bool bind_dn = false;
  for (std::size_t j = p.at + 1; j < w.size(); ++j) {
    const span cs = content(s, w[j]);
    const std::string_view f = text(s, cs);
    if (f.size() < 2 || f[0] != '-') continue;
    const bool has_next = j + 1 < w.size() && !text(s, content(s, w[j + 1])).starts_with("-");
    const span next = has_next ? content(s, w[j + 1]) : span{};
    if (f == "-D" && has_next) bind_dn = text(s, next).find('=') != std::string_view::npos;
    if (f == "-U" || f == "--user") {
      if (has_next) after_percent(s, next, out);
    } else if (f.starts_with("--user=")) {
      after_percent(s, {cs.begin + 7, cs.end}, out);
    } else if (f.size() > 2 && f[1] == 'U') {
      after_percent(s, {cs.begin + 2, cs.end}, out);
    }
    if (f[1] == '-' || !password_flag(p.name, f[1], bind_dn)) continue;
    if (f.size() > 2) {
      record(s, {cs.begin + 2, cs.end}, out);  // glued: -NPASS, -wPASS
    } else if (has_next) {
      record(s, next, out);
      ++j;
    }
  }
}

/// Does this command read a password from its stdin (`sudo -S`, `passwd --stdin`, `chpasswd`,
/// `--password-stdin`)?
bool reads_password(std::string_view s, const command& c, const program& p) {
  if (p.sudo_stdin || p.name == "chpasswd") return true;
  for (const auto& w : c.words) {
    const std::string_view t = text(s, content(s, w));
    if (t == "--password-stdin" || (p.name == "passwd" && t == "--stdin")) return true;
  }
  return false;
}

/// The words of `echo`/`printf` (flags aside), when piped into a password reader.
void echoed_words(std::string_view s, const command& c, const program& p, std::vector<span>& out) {
  std::size_t j = p.at + 1;
  while (p.name == "echo" && j < c.words.size() && text(s, content(s, c.words[j])).starts_with("-")) ++j;
  for (; j < c.words.size(); ++j) record(s, content(s, c.words[j]), out);
}

}  // namespace

void find_command_shapes(std::string_view s, std::vector<span>& out) {
  command prev, cur;
  program prev_program;
  for (std::size_t i = 0; i < s.size();) {
    i = read_command(s, i, cur);
    if (cur.words.empty()) {
      prev.words.clear();
      continue;
    }
    const program p = program_of(s, cur);
    config_set(s, cur, p.at, out);
    flag_values(s, cur, p, out);
    const bool echo = prev_program.name == "echo" || prev_program.name == "printf";
    if (prev.sep == '|' && !prev.words.empty() && echo && reads_password(s, cur, p)) {
      echoed_words(s, prev, prev_program, out);
    }
    std::swap(prev, cur);
    prev_program = p;
  }
}

}  // namespace warden::secrets::detail
