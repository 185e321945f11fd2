#include "risk/python_tokens.h"

#include <algorithm>
#include <cctype>

namespace warden::risk {

namespace {

constexpr std::size_t max_code = 256 * 1024;
constexpr int max_depth = 16;

bool ident_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_' || static_cast<unsigned char>(c) >= 0x80;
}
bool ident_char(char c) { return ident_start(c) || std::isdigit(static_cast<unsigned char>(c)) != 0; }

bool string_prefix(std::string_view p) {
  if (p.empty() || p.size() > 2) return false;
  std::string l;
  for (const char c : p) l += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const std::string_view ok : {"r", "b", "u", "f", "t", "rb", "br", "fr", "rf", "tr", "rt"})
    if (l == ok) return true;
  return false;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class lexer {
 public:
  lexer(std::string_view s, py_lex_result& out, int depth) : s_(s), out_(out), depth_(depth) {}
  void run();

 private:
  bool fail(std::string why) {
    if (out_.ok) {
      out_.ok = false;
      out_.why = std::move(why);
    }
    return false;
  }
  char at(std::size_t k) const { return k < s_.size() ? s_[k] : '\0'; }
  void push(py_token_kind kind, std::string text, bool literal = true) {
    out_.tokens.push_back(py_token{kind, std::move(text), literal});
  }
  void step();
  void read_name();
  void read_number();
  void read_string(std::string_view prefix);
  void decode_escape(std::string& value, std::size_t& j, bool raw);
  std::size_t field_end(std::size_t j) const;
  std::size_t skip_nested_string(std::size_t j) const;

  std::string_view s_;
  py_lex_result& out_;
  int depth_;
  std::size_t i_ = 0;
  int brackets_ = 0;
};

void lexer::run() {
  while (out_.ok && i_ < s_.size()) step();
}

void lexer::step() {
  const char c = s_[i_];
  if (c == ' ' || c == '\t' || c == '\f') {
    ++i_;
  } else if (c == '\n' || c == '\r') {  // a lone \r ends a line too, like \r\n
    if (brackets_ == 0) push(py_token_kind::op, ";");
    i_ += (c == '\r' && at(i_ + 1) == '\n') ? 2 : 1;
  } else if (c == '#') {
    while (i_ < s_.size() && s_[i_] != '\n' && s_[i_] != '\r') ++i_;
  } else if (c == '\\') {
    if (at(i_ + 1) == '\n' || (at(i_ + 1) == '\r' && at(i_ + 2) != '\n')) i_ += 2;
    else if (at(i_ + 1) == '\r' && at(i_ + 2) == '\n') i_ += 3;
    else fail("a stray backslash");
  } else if (ident_start(c)) {
    read_name();
  } else if (c == '"' || c == '\'') {
    read_string("");
  } else if (std::isdigit(static_cast<unsigned char>(c)) || (c == '.' && std::isdigit(static_cast<unsigned char>(at(i_ + 1))))) {
    read_number();
  } else {
    if (c == '(' || c == '[' || c == '{') ++brackets_;
    if ((c == ')' || c == ']' || c == '}') && brackets_ > 0) --brackets_;
    push(py_token_kind::op, std::string(1, c));
    ++i_;
  }
}

void lexer::read_name() {
  const std::size_t start = i_;
  while (i_ < s_.size() && ident_char(s_[i_])) ++i_;
  const std::string_view name = s_.substr(start, i_ - start);
  if ((at(i_) == '"' || at(i_) == '\'') && string_prefix(name)) return read_string(name);
  push(py_token_kind::name, std::string(name));
}

void lexer::read_number() {
  const std::size_t start = i_;
  while (i_ < s_.size()) {
    const char c = s_[i_];
    const bool sign = (c == '+' || c == '-') && (s_[i_ - 1] == 'e' || s_[i_ - 1] == 'E') &&
                      !(s_.substr(start, 2) == "0x" || s_.substr(start, 2) == "0X");
    if (!ident_char(c) && c != '.' && !sign) break;
    ++i_;
  }
  push(py_token_kind::number, std::string(s_.substr(start, i_ - start)));
}

void lexer::decode_escape(std::string& value, std::size_t& j, bool raw) {
  const char e = s_[j + 1];
  j += 2;
  if (raw) {
    value += '\\';
    value += e;
    return;
  }
  switch (e) {
    case '\n': return;
    case 'n': value += '\n'; return;
    case 't': value += '\t'; return;
    case 'r': value += '\r'; return;
    case '0': value += '\0'; return;
    case '\\': case '\'': case '"': value += e; return;
    case 'x':
      if (hex_value(at(j)) >= 0 && hex_value(at(j + 1)) >= 0) {
        value += static_cast<char>(hex_value(s_[j]) * 16 + hex_value(s_[j + 1]));
        j += 2;
        return;
      }
      break;
    default: break;
  }
  value += '\\';
  value += e;
}

/// Index just past a string literal nested in an f-string field that starts at j.
std::size_t lexer::skip_nested_string(std::size_t j) const {
  const char q = s_[j];
  const bool triple = at(j + 1) == q && at(j + 2) == q;
  j += triple ? 3 : 1;
  while (j < s_.size()) {
    if (s_[j] == '\\') {
      j += 2;
      continue;
    }
    if (s_[j] == q && (!triple || (at(j + 1) == q && at(j + 2) == q))) return j + (triple ? 3 : 1);
    ++j;
  }
  return std::string_view::npos;
}

/// Index of the '}' closing the f-string field whose text starts at j; npos when none.
std::size_t lexer::field_end(std::size_t j) const {
  int depth = 0;
  while (j < s_.size()) {
    const char c = s_[j];
    if (c == '"' || c == '\'') {
      j = skip_nested_string(j);
      if (j == std::string_view::npos) return j;
      continue;
    }
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') {
      if (c == '}' && depth == 0) return j;
      --depth;
    }
    ++j;
  }
  return std::string_view::npos;
}

void lexer::read_string(std::string_view prefix) {
  const bool raw = prefix.find_first_of("rR") != std::string_view::npos;
  const bool fstr = prefix.find_first_of("fFtT") != std::string_view::npos;
  const char q = s_[i_];
  const bool triple = at(i_ + 1) == q && at(i_ + 2) == q;
  std::size_t j = i_ + (triple ? 3 : 1);
  std::string value;
  std::vector<py_token> fields;
  while (out_.ok) {
    if (j >= s_.size()) return void(fail("an unterminated string"));
    const char c = s_[j];
    if (c == '\\') {
      if (j + 1 >= s_.size()) return void(fail("an unterminated string"));
      decode_escape(value, j, raw);
    } else if ((c == '\n' || c == '\r') && !triple) {
      return void(fail("an unterminated string"));
    } else if (c == q && (!triple || (at(j + 1) == q && at(j + 2) == q))) {
      j += triple ? 3 : 1;
      break;
    } else if (fstr && (c == '{' || c == '}') && at(j + 1) == c) {
      value += c;
      j += 2;
    } else if (fstr && c == '{') {
      const std::size_t end = field_end(j + 1);
      if (end == std::string_view::npos) return void(fail("an f-string field that is not closed"));
      if (depth_ + 1 > max_depth) return void(fail("f-strings nested too deeply"));
      py_lex_result sub;
      lexer(s_.substr(j + 1, end - j - 1), sub, depth_ + 1).run();
      if (!sub.ok) return void(fail(sub.why));
      fields.push_back(py_token{py_token_kind::op, "(", true});
      fields.insert(fields.end(), sub.tokens.begin(), sub.tokens.end());
      fields.push_back(py_token{py_token_kind::op, ")", true});
      j = end + 1;
    } else {
      value += c;
      ++j;
    }
  }
  const bool literal = fields.empty();
  push(py_token_kind::string, std::move(value), literal);
  out_.tokens.insert(out_.tokens.end(), fields.begin(), fields.end());
  i_ = j;
}

}  // namespace

py_lex_result lex_python(std::string_view code) {
  py_lex_result out;
  if (code.size() > max_code) {
    out.ok = false;
    out.why = "the code is longer than 256 KiB";
    return out;
  }
  lexer(code, out, 0).run();
  return out;
}

}  // namespace warden::risk
