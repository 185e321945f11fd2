#include "risk/shell_words.h"

#include "common/utf8.h"

#include <algorithm>
#include <cstdint>

namespace warden::risk {

namespace {

constexpr std::size_t max_input = 64 * 1024;
constexpr int max_depth = 32;
constexpr char run_time = '\0';  // stands for a part of a word known only at run time

bool is_blank(char c) { return c == ' ' || c == '\t'; }  // bash: \r is a word character
bool is_meta(char c) {
  return is_blank(c) || c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' || c == ')' ||
         c == '<' || c == '>';
}
bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

struct word {
  std::string value;
  bool quoted = false;    ///< some part was quoted or escaped
  bool dynamic = false;   ///< some part is known only at run time
  bool consumed = false;  ///< any input was read
  bool plain(std::string_view s) const { return !quoted && !dynamic && value == s; }
};

enum class sep { seq, pipe, background, end };

class parser {
 public:
  parser(std::string_view s, std::size_t pos, shell_parse& out, int depth, bool nested)
      : s_(s), i_(pos), out_(out), depth_(depth), nested_(nested) {}

  /// Parses commands until the end of the text or, with closer ')', its matching ')'.
  void parse_list(char closer);
  std::size_t pos() const { return i_; }

 private:
  bool fail(std::string why) {
    if (out_.ok) {
      out_.ok = false;
      out_.why = std::move(why);
    }
    return false;
  }
  char at(std::size_t k) const { return k < s_.size() ? s_[k] : '\0'; }
  bool has(std::string_view op) const { return s_.substr(i_, op.size()) == op; }
  bool any_pipe() const { return std::find(pipes_.begin(), pipes_.end(), true) != pipes_.end(); }

  bool step(char closer);  // one token; false when the list ended
  void finish(sep how);
  void push_open(char kind);
  bool close_paren(char closer);
  void open_paren();
  void handle_word(word w);
  bool keyword(const word& w);
  void read_test();
  void redirect();
  word read_target();
  word read_word();
  word read_procsub();
  void read_backslash(word& w);
  void read_squote(word& w);
  void read_dquote(word& w);
  void read_dollar(word& w, bool in_dquote);
  void read_ansi(word& w);
  bool read_ansi_escape(std::string& out, std::size_t& j);
  void read_brace_param(word& w);
  void read_backtick(word& w);
  void read_subst(word& w);
  void scan_arith();
  void skip_blanks();
  void sub_parse(std::string_view text);
  void mark_dynamic(word& w) {
    w.value += run_time;
    w.dynamic = true;
  }

  std::string_view s_;
  std::size_t i_;
  shell_parse& out_;
  int depth_;
  bool nested_;
  std::vector<char> open_;   ///< open '(' subshells and '{' groups
  std::vector<bool> pipes_;  ///< per open group: whether the group reads a pipe
  shell_command cur_;
  bool cur_in_ = false;      ///< the command being built reads a pipe
  bool skip_words_ = false;  ///< after for/select/function: words until a separator are not a command
  bool loop_words_ = false;  ///< the skipped words are a for/select loop's (recorded in out_.loops)
};

void parser::sub_parse(std::string_view text) {
  if (depth_ + 1 > max_depth) {
    fail("nesting is deeper than 32 levels");
    return;
  }
  parser sub(text, 0, out_, depth_ + 1, true);
  sub.parse_list('\0');
}

void parser::parse_list(char closer) {
  while (out_.ok && step(closer)) {
  }
}

bool parser::step(char closer) {
  skip_blanks();
  if (i_ >= s_.size()) {
    finish(sep::end);
    if (closer == ')') return fail("unbalanced parenthesis: $( or <( is not closed");
    if (!open_.empty()) return fail(open_.back() == '{' ? "unbalanced brace: { is not closed" : "unbalanced parenthesis: ( is not closed");
    return false;
  }
  const char c = s_[i_];
  if (c == '#') {
    while (i_ < s_.size() && s_[i_] != '\n') ++i_;
  } else if (c == '\n' || c == ';') {
    if (has(";;")) return fail("case statements are not supported");
    finish(sep::seq);
    ++i_;
  } else if (c == '&') {
    if (at(i_ + 1) == '>') return redirect(), true;
    const bool and_op = at(i_ + 1) == '&';
    finish(and_op ? sep::seq : sep::background);
    i_ += and_op ? 2 : 1;
  } else if (c == '|') {
    const bool or_op = at(i_ + 1) == '|';
    finish(or_op ? sep::seq : sep::pipe);
    i_ += (or_op || at(i_ + 1) == '&') ? 2 : 1;
  } else if (c == '(') {
    open_paren();
  } else if (c == ')') {
    return close_paren(closer);
  } else if ((c == '<' || c == '>') && at(i_ + 1) == '(') {
    handle_word(read_procsub());
  } else if (c == '<' || c == '>') {
    redirect();
  } else {
    handle_word(read_word());
  }
  return true;
}

void parser::skip_blanks() {
  while (i_ < s_.size()) {
    if (is_blank(s_[i_])) ++i_;
    else if (s_[i_] == '\\' && at(i_ + 1) == '\n') i_ += 2;
    else break;
  }
}

void parser::finish(sep how) {
  const bool has_any = !cur_.argv.empty() || !cur_.redirects.empty() || cur_.here_string;
  if (has_any) {
    cur_.nested = nested_ || !open_.empty();
    cur_.stdin_from_pipe = cur_in_ || any_pipe();
    if (how == sep::background) cur_.background = true;
    const auto payload = shell_c_payload(effective_argv(cur_.argv));
    out_.commands.push_back(std::move(cur_));
    if (payload && payload->find(run_time) == std::string::npos) {
      const std::string text = *payload;  // the sub-parser views it
      sub_parse(text);
    }
  }
  cur_ = shell_command{};
  cur_in_ = how == sep::pipe;
  skip_words_ = false;
  loop_words_ = false;
}

void parser::push_open(char kind) {
  open_.push_back(kind);
  pipes_.push_back(cur_in_);
  cur_in_ = false;
}

bool parser::close_paren(char closer) {
  finish(sep::seq);
  if (!open_.empty()) {
    if (open_.back() != '(') return fail("unbalanced parenthesis: ) closes a { group");
    open_.pop_back();
    pipes_.pop_back();
    ++i_;
    return true;
  }
  if (closer == ')') {
    ++i_;
    return false;
  }
  return fail("unbalanced parenthesis: ) without (");
}

void parser::open_paren() {
  std::size_t j = i_ + 1;
  while (j < s_.size() && is_blank(s_[j])) ++j;
  const bool empty_pair = at(j) == ')';
  if (at(i_ + 1) == '(' && cur_.argv.empty()) {  // (( arithmetic )), also for (( … ))
    i_ += 2;
    scan_arith();
    return;
  }
  if (skip_words_ || cur_.argv.size() == 1) {
    if (empty_pair) {  // a function definition: name ( )
      i_ = j + 1;
      cur_ = shell_command{};
      skip_words_ = false;
      loop_words_ = false;
      out_.defines_function = true;
      return;
    }
  }
  if (!cur_.argv.empty() && is_assignment_word(cur_.argv.back()) && cur_.argv.back().back() == '=') {
    fail("array assignments are not supported");
  } else if (!cur_.argv.empty() || skip_words_) {
    fail("unexpected ( after a word");
  } else {
    ++i_;
    push_open('(');
  }
}

void parser::handle_word(word w) {
  if (!out_.ok || !w.consumed) return;
  const bool fd_number = !w.quoted && !w.dynamic && !w.value.empty() &&
                         std::all_of(w.value.begin(), w.value.end(), is_digit);
  if (fd_number && (at(i_) == '<' || at(i_) == '>')) return redirect();
  if (skip_words_) {
    if (w.plain("do") || w.plain("{")) {
      skip_words_ = false;
      loop_words_ = false;
      keyword(w);
    } else if (loop_words_) {
      out_.loops.back().words.push_back(std::move(w.value));
    }
    return;
  }
  if (cur_.argv.empty() && keyword(w)) return;
  if (w.dynamic) cur_.dynamic = true;
  cur_.argv.push_back(std::move(w.value));
}

bool parser::keyword(const word& w) {
  if (w.quoted || w.dynamic) return false;
  const std::string& v = w.value;
  if (v == "{") {
    push_open('{');
    return true;
  }
  if (v == "}") {
    if (open_.empty() || open_.back() != '{') return fail("unbalanced brace: } without {"), true;
    open_.pop_back();
    pipes_.pop_back();
    cur_in_ = false;
    return true;
  }
  if (v == "while" || v == "until") out_.loops.push_back(shell_loop{v, {}});
  if (v == "coproc") cur_.background = true;
  if (v == "!" || v == "if" || v == "then" || v == "else" || v == "elif" || v == "fi" || v == "do" ||
      v == "done" || v == "while" || v == "until" || v == "coproc")
    return true;
  if (v == "for" || v == "select" || v == "function") {
    skip_words_ = true;
    loop_words_ = v != "function";
    if (loop_words_) out_.loops.push_back(shell_loop{v, {}});
    else out_.defines_function = true;
    return true;
  }
  if (v == "case" || v == "esac") return fail("case statements are not supported"), true;
  if (v == "[[") {
    cur_.argv.push_back(v);
    read_test();
    return true;
  }
  return false;
}

void parser::read_test() {
  while (out_.ok) {
    while (i_ < s_.size() && (is_blank(s_[i_]) || s_[i_] == '\n')) ++i_;
    if (i_ >= s_.size()) {
      fail("unbalanced [[: no ]]");
      return;
    }
    const char c = s_[i_];
    if (c == '&' || c == '|' || c == '<' || c == '>' || c == '(' || c == ')' || c == ';') {
      std::size_t k = i_ + 1;
      if ((c == '&' || c == '|') && at(k) == c) ++k;
      cur_.argv.emplace_back(s_.substr(i_, k - i_));
      i_ = k;
      continue;
    }
    word w = read_word();
    if (w.dynamic) cur_.dynamic = true;
    const bool end = w.plain("]]");
    cur_.argv.push_back(std::move(w.value));
    if (end) return;
  }
}

void parser::redirect() {
  bool write = false, dup = false, here = false;
  if (has("&>>")) i_ += 3, write = true;
  else if (has("&>")) i_ += 2, write = true;
  else if (has("<<<")) i_ += 3, here = true;
  else if (has("<<")) return void(fail("here-documents are not supported"));
  else if (has("<>")) i_ += 2, write = true;
  else if (has("<&")) i_ += 2, dup = true;
  else if (has("<")) i_ += 1;
  else if (has(">>")) i_ += 2, write = true;
  else if (has(">|")) i_ += 2, write = true;
  else if (has(">&")) i_ += 2, write = true, dup = true;
  else i_ += 1, write = true;
  skip_blanks();
  word w = read_target();
  if (!out_.ok) return;
  if (!w.consumed) return void(fail("a redirection has no target"));
  if (w.dynamic) cur_.dynamic = true;
  if (here) {
    cur_.here_string = true;
    return;
  }
  const bool fd = !w.dynamic && !w.value.empty() &&
                  (w.value == "-" || std::all_of(w.value.begin(), w.value.end() - (w.value.back() == '-'), is_digit));
  if (dup && fd) return;
  cur_.redirects.push_back(w.dynamic ? std::string() : std::move(w.value));
  cur_.redirect_writes.push_back(write);
}

word parser::read_target() {
  if ((at(i_) == '<' || at(i_) == '>') && at(i_ + 1) == '(') return read_procsub();
  return read_word();
}

word parser::read_procsub() {
  word w;
  w.consumed = true;
  i_ += 2;
  if (depth_ + 1 > max_depth) {
    fail("nesting is deeper than 32 levels");
    return w;
  }
  parser sub(s_, i_, out_, depth_ + 1, true);
  sub.parse_list(')');
  i_ = sub.pos();
  mark_dynamic(w);
  return w;
}

word parser::read_word() {
  word w;
  const std::size_t start = i_;
  while (i_ < s_.size() && out_.ok && !is_meta(s_[i_])) {
    switch (s_[i_]) {
      case '\\': read_backslash(w); break;
      case '\'': read_squote(w); break;
      case '"': read_dquote(w); break;
      case '$': read_dollar(w, false); break;
      case '`': read_backtick(w); break;
      default: w.value += s_[i_++]; break;
    }
  }
  w.consumed = i_ > start;
  return w;
}

void parser::read_backslash(word& w) {
  if (i_ + 1 >= s_.size()) {
    w.value += '\\';
    ++i_;
    return;
  }
  if (s_[i_ + 1] != '\n') {
    w.value += s_[i_ + 1];
    w.quoted = true;
  }
  i_ += 2;
}

void parser::read_squote(word& w) {
  const std::size_t end = s_.find('\'', i_ + 1);
  if (end == std::string_view::npos) return void(fail("unbalanced single quote"));
  w.value.append(s_.substr(i_ + 1, end - i_ - 1));
  w.quoted = true;
  i_ = end + 1;
}

void parser::read_dquote(word& w) {
  ++i_;
  w.quoted = true;
  while (out_.ok) {
    if (i_ >= s_.size()) return void(fail("unbalanced double quote"));
    const char c = s_[i_];
    if (c == '"') {
      ++i_;
      return;
    }
    if (c == '\\') {
      const char n = at(i_ + 1);
      if (n == '$' || n == '`' || n == '"' || n == '\\') w.value += n;
      else if (n != '\n') w.value += '\\', w.value += n;
      i_ += 2;
    } else if (c == '$') {
      read_dollar(w, true);
    } else if (c == '`') {
      read_backtick(w);
    } else {
      w.value += c;
      ++i_;
    }
  }
}

void parser::read_dollar(word& w, bool in_dquote) {
  const char n = at(i_ + 1);
  if (!in_dquote && n == '\'') return read_ansi(w);
  if (!in_dquote && n == '"') {
    ++i_;
    return read_dquote(w);
  }
  if (n == '(' && at(i_ + 2) == '(') {
    i_ += 3;
    scan_arith();
    return mark_dynamic(w);
  }
  if (n == '(') return read_subst(w);
  if (n == '{') return read_brace_param(w);
  if (is_name_start(n)) {
    i_ += 1;
    while (i_ < s_.size() && is_name_char(s_[i_])) ++i_;
    return mark_dynamic(w);
  }
  if (is_digit(n) || (n != '\0' && std::string_view("@*#?$!-").find(n) != std::string_view::npos)) {
    i_ += 2;
    return mark_dynamic(w);
  }
  w.value += '$';
  ++i_;
}

void parser::read_subst(word& w) {
  i_ += 2;
  if (depth_ + 1 > max_depth) return void(fail("nesting is deeper than 32 levels"));
  parser sub(s_, i_, out_, depth_ + 1, true);
  sub.parse_list(')');
  i_ = sub.pos();
  mark_dynamic(w);
}

void parser::read_ansi(word& w) {
  std::size_t j = i_ + 2;
  std::string text;
  bool truncated = false;  // bash ends the string at a NUL escape
  while (true) {
    if (j >= s_.size()) return void(fail("unbalanced $' quote"));
    const char c = s_[j];
    if (c == '\'') break;
    if (c == '\\' && j + 1 < s_.size()) {
      std::string one;
      if (!read_ansi_escape(one, j)) truncated = true;
      if (!truncated) text += one;
      continue;
    }
    if (!truncated) text += c;
    ++j;
  }
  w.value += text;
  w.quoted = true;
  i_ = j + 1;
}

/// Decodes the escape at s_[j] ('\\'); advances j. False when it decodes to NUL.
bool parser::read_ansi_escape(std::string& out, std::size_t& j) {
  const char e = s_[j + 1];
  j += 2;
  std::uint32_t v = 0;
  int digits = 0;
  switch (e) {
    case 'a': out += '\a'; return true;
    case 'b': out += '\b'; return true;
    case 'e': case 'E': out += '\x1b'; return true;
    case 'f': out += '\f'; return true;
    case 'n': out += '\n'; return true;
    case 'r': out += '\r'; return true;
    case 't': out += '\t'; return true;
    case 'v': out += '\v'; return true;
    case '\\': case '\'': case '"': case '?': out += e; return true;
    case 'c':
      if (j >= s_.size()) return true;
      v = static_cast<std::uint32_t>(s_[j++]) & 0x1Fu;
      break;
    case 'x': case 'u': case 'U': {
      const int max = e == 'x' ? 2 : (e == 'u' ? 4 : 8);
      while (digits < max && hex_value(at(j)) >= 0) v = v * 16 + static_cast<std::uint32_t>(hex_value(s_[j++])), ++digits;
      if (digits == 0) {
        out += '\\';
        out += e;
        return true;
      }
      if (e != 'x') {
        if (v == 0) return false;
        append_utf8(out, v);
        return true;
      }
      break;
    }
    default:
      if (e >= '0' && e <= '7') {
        v = static_cast<std::uint32_t>(e - '0');
        while (digits < 2 && at(j) >= '0' && at(j) <= '7') v = v * 8 + static_cast<std::uint32_t>(s_[j++] - '0'), ++digits;
        break;
      }
      out += '\\';
      out += e;
      return true;
  }
  v &= 0xFFu;
  if (v == 0) return false;
  out += static_cast<char>(v);
  return true;
}

void parser::read_brace_param(word& w) {
  std::size_t j = i_ + 2;
  int depth = 1;
  while (depth > 0) {
    if (j >= s_.size()) return void(fail("unbalanced ${"));
    const char c = s_[j];
    if ((c == '$' && at(j + 1) == '(') || c == '`')
      return void(fail("command substitution inside ${...} is not supported"));
    if (c == '\\') j += 2;
    else if (c == '\'') {
      const std::size_t end = s_.find('\'', j + 1);
      if (end == std::string_view::npos) return void(fail("unbalanced single quote"));
      j = end + 1;
    } else {
      if (c == '{') ++depth;
      if (c == '}') --depth;
      ++j;
    }
  }
  i_ = j;
  mark_dynamic(w);
}

void parser::read_backtick(word& w) {
  std::size_t j = i_ + 1;
  std::string inner;
  while (true) {
    if (j >= s_.size()) return void(fail("unbalanced backtick"));
    const char c = s_[j];
    if (c == '`') break;
    if (c == '\\' && (at(j + 1) == '`' || at(j + 1) == '\\' || at(j + 1) == '$')) {
      inner += s_[j + 1];
      j += 2;
      continue;
    }
    inner += c;
    ++j;
  }
  i_ = j + 1;
  sub_parse(inner);
  mark_dynamic(w);
}

void parser::scan_arith() {
  int depth = 0;
  while (out_.ok) {
    if (i_ >= s_.size()) return void(fail("unbalanced (( arithmetic"));
    const char c = s_[i_];
    if ((c == '$' && at(i_ + 1) == '(' && at(i_ + 2) != '(') || c == '`')
      return void(fail("command substitution inside arithmetic is not supported"));
    if (c == '(') ++depth;
    if (c == ')') {
      if (depth == 0) {
        if (at(i_ + 1) != ')') return void(fail("cannot parse (( arithmetic"));
        i_ += 2;
        return;
      }
      --depth;
    }
    ++i_;
  }
}

// ---- wrappers ------------------------------------------------------------------------------

struct wrapper_spec {
  std::string_view name;
  std::string_view short_with_arg;            ///< option letters that take an argument
  std::vector<std::string_view> long_with_arg;  ///< --options that take the next word
  int positional = 0;                          ///< words between the options and the program
};

const std::vector<wrapper_spec>& wrapper_specs() {
  static const std::vector<wrapper_spec> specs = {
      {"sudo", "ugCDhprtUTR", {"--user", "--group", "--close-from", "--chdir", "--host", "--prompt", "--role", "--type", "--other-user", "--command-timeout", "--chroot"}, 0},
      {"doas", "uC", {}, 0},
      {"nice", "n", {"--adjustment"}, 0},
      {"nohup", "", {}, 0},
      {"timeout", "sk", {"--signal", "--kill-after"}, 1},
      {"time", "fo", {"--format", "--output"}, 0},
      {"command", "", {}, 0},
      {"exec", "a", {}, 0},
      {"builtin", "", {}, 0},
      {"xargs", "adEILnPs", {"--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars", "--max-lines", "--process-slot-var"}, 0},
      {"stdbuf", "ioe", {"--input", "--output", "--error"}, 0},
      {"ionice", "cnp", {"--class", "--classdata", "--pid", "--pgid", "--uid"}, 0},
      {"chronic", "", {}, 0},
      {"setsid", "", {}, 0},
  };
  return specs;
}

/// Index of the first word after the options of a wrapper whose options start at `i`.
std::size_t skip_options(const std::vector<std::string>& v, std::size_t i, const wrapper_spec& w) {
  while (i < v.size()) {
    const std::string& a = v[i];
    if (a == "--") return i + 1;
    if (a.size() < 2 || a[0] != '-') break;
    if (a.starts_with("--")) {
      const bool takes = a.find('=') == std::string::npos &&
                         std::find(w.long_with_arg.begin(), w.long_with_arg.end(), a) != w.long_with_arg.end();
      i += takes ? 2 : 1;
      continue;
    }
    std::size_t step = 1;
    for (std::size_t k = 1; k < a.size(); ++k) {
      if (w.short_with_arg.find(a[k]) == std::string_view::npos) continue;
      if (k + 1 == a.size()) step = 2;
      break;
    }
    i += step;
  }
  return i;
}

std::vector<std::string> split_blanks(std::string_view s) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (is_blank(s[i]) || s[i] == '\n')) ++i;
    const std::size_t start = i;
    while (i < s.size() && !is_blank(s[i]) && s[i] != '\n') ++i;
    if (i > start) out.emplace_back(s.substr(start, i - start));
  }
  return out;
}

/// env's options and NAME=value words; `-S string` is split into words in place.
std::size_t skip_env(std::vector<std::string>& v, std::size_t i) {
  while (i < v.size()) {
    const std::string a = v[i];
    if (a == "--") return i + 1;
    if (is_assignment_word(a) || a == "-" || a == "-i" || a == "-0" || a == "-v" || a == "--ignore-environment" ||
        a == "--null" || a == "--debug" || a.starts_with("--unset=") || a.starts_with("--chdir=")) {
      ++i;
    } else if (a == "-u" || a == "-C" || a == "--unset" || a == "--chdir") {
      i += 2;
    } else if (a.starts_with("-u") || a.starts_with("-C")) {
      ++i;
    } else if (a == "-S" || a == "--split-string" || a.starts_with("-S") || a.starts_with("--split-string=")) {
      const bool attached = a != "-S" && a != "--split-string";
      const std::size_t eq = a.find('=');
      const std::string text = attached ? a.substr(a.starts_with("-S") ? 2 : eq + 1) : (i + 1 < v.size() ? v[i + 1] : "");
      const std::size_t after = std::min(v.size(), i + (attached ? 1 : 2));
      std::vector<std::string> spliced = split_blanks(text);
      spliced.insert(spliced.end(), v.begin() + static_cast<std::ptrdiff_t>(after), v.end());
      v.erase(v.begin() + static_cast<std::ptrdiff_t>(i), v.end());
      v.insert(v.end(), spliced.begin(), spliced.end());
    } else {
      break;
    }
  }
  return i;
}

bool prints_only(const std::vector<std::string>& v, std::size_t i) {  // command -v / -V
  for (; i < v.size() && v[i].size() > 1 && v[i][0] == '-'; ++i)
    if (v[i].find_first_of("vV") != std::string::npos) return true;
  return false;
}

}  // namespace

shell_parse parse_shell(std::string_view command) {
  shell_parse out;
  if (command.size() > max_input) {
    out.ok = false;
    out.why = "the command is longer than 64 KiB";
    return out;
  }
  if (command.find('\0') != std::string_view::npos) {
    out.ok = false;
    out.why = "the command contains a NUL byte";
    return out;
  }
  parser p(command, 0, out, 0, false);
  p.parse_list('\0');
  return out;
}

std::string_view program_name(std::string_view word) noexcept {
  const std::size_t slash = word.rfind('/');
  return slash == std::string_view::npos ? word : word.substr(slash + 1);
}

bool is_assignment_word(std::string_view word) noexcept {
  if (word.empty() || !is_name_start(word[0])) return false;
  std::size_t i = 1;
  while (i < word.size() && is_name_char(word[i])) ++i;
  if (i < word.size() && word[i] == '[') {  // the subscript may hold brackets itself: a[b[1]]=x
    int depth = 0;
    for (; i < word.size(); ++i) {
      if (word[i] == '[') ++depth;
      if (word[i] == ']' && --depth == 0) break;
    }
    if (i >= word.size()) return false;
    ++i;
  }
  if (i < word.size() && word[i] == '+') ++i;
  return i < word.size() && word[i] == '=';
}

std::vector<std::string> effective_argv(const std::vector<std::string>& argv, std::vector<std::string>* wrappers) {
  std::vector<std::string> v = argv;
  std::size_t i = 0;
  for (int guard = 0; guard < 64; ++guard) {
    while (i < v.size() && is_assignment_word(v[i])) ++i;
    if (i >= v.size()) break;
    const std::string_view name = program_name(v[i]);
    if (name == "env") {
      if (wrappers) wrappers->emplace_back(name);
      i = skip_env(v, i + 1);
      continue;
    }
    const auto& specs = wrapper_specs();
    const auto spec = std::find_if(specs.begin(), specs.end(), [&](const wrapper_spec& w) { return w.name == name; });
    if (spec == specs.end()) break;
    if (name == "command" && prints_only(v, i + 1)) break;
    if (wrappers) wrappers->emplace_back(name);
    i = skip_options(v, i + 1, *spec) + static_cast<std::size_t>(spec->positional);
  }
  std::vector<std::string> out;
  if (i < v.size()) out.assign(v.begin() + static_cast<std::ptrdiff_t>(i), v.end());
  if (!out.empty()) out[0] = std::string(program_name(out[0]));
  return out;
}

std::optional<std::string> shell_c_payload(const std::vector<std::string>& eff) {
  if (eff.empty()) return std::nullopt;
  std::size_t i = 0;
  std::string_view name = program_name(eff[0]);
  if (name == "busybox" && eff.size() > 1) name = program_name(eff[i = 1]);
  static const std::vector<std::string_view> shells = {"sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "rbash"};
  if (std::find(shells.begin(), shells.end(), name) == shells.end()) return std::nullopt;
  bool dash_c = false;
  std::size_t j = i + 1;
  for (; j < eff.size(); ++j) {
    const std::string& a = eff[j];
    if (a == "--" || a == "-") {
      ++j;
      break;
    }
    if (a.size() < 2 || (a[0] != '-' && a[0] != '+')) break;
    if (a.starts_with("--")) {
      if (a == "--rcfile" || a == "--init-file") ++j;
      continue;
    }
    for (std::size_t k = 1; k < a.size(); ++k) {
      if (a[k] == 'c' && a[0] == '-') dash_c = true;
      if (a[k] == 'o' || a[k] == 'O') ++j;
    }
  }
  if (!dash_c || j >= eff.size()) return std::nullopt;
  return eff[j];
}

}  // namespace warden::risk
