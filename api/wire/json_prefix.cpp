#include "api/wire/json_prefix.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

namespace warden::api::wire {

namespace {

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/// A number token that can still grow into a valid number: -?(0|[1-9]d*)(.d+)?([eE][+-]?d+)?
bool number_prefix(std::string_view t, bool whole) {
  std::size_t i = 0;
  if (i < t.size() && t[i] == '-') ++i;
  if (i == t.size()) return !whole;
  if (t[i] == '0') ++i;
  else if (std::isdigit(static_cast<unsigned char>(t[i]))) {
    while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) ++i;
  } else {
    return false;
  }
  if (i < t.size() && t[i] == '.') {
    ++i;
    if (i == t.size()) return !whole;
    if (!std::isdigit(static_cast<unsigned char>(t[i]))) return false;
    while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) ++i;
  }
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
    if (i == t.size()) return !whole;
    if (!std::isdigit(static_cast<unsigned char>(t[i]))) return false;
    while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) ++i;
  }
  return i == t.size();
}

const char* literal_for(std::string_view t) {
  for (const char* lit : {"true", "false", "null"}) {
    if (std::string_view(lit).substr(0, t.size()) == t) return lit;
  }
  return nullptr;
}

int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::size_t json_object_prefix::feed(std::string_view text) {
  std::size_t n = 0;
  for (char c : text) {
    if (over_) break;
    state before = s_;
    if (!step(c)) {
      s_ = std::move(before);
      over_ = true;
      break;
    }
    ++n;
    ++fed_;
    const bool blank = !s_.string && (c == ' ' || c == '\t' || c == '\n' || c == '\r');
    if (!blank && safe()) {  // whitespace between tokens never needs sending
      safe_ = s_;
      safe_length_ = fed_;
    }
  }
  return n;
}

bool json_object_prefix::safe() const {
  if (s_.string) return !s_.key && s_.escape == 0 && s_.low_needed == 0;
  if (!s_.token.empty()) return false;
  switch (s_.want) {
    case expect::key_or_close:
    case expect::value_or_close:
    case expect::comma_or_close:
    case expect::done: return true;
    case expect::start:  // whitespace before the object: nothing worth sending yet
    case expect::key:
    case expect::colon:
    case expect::value: return false;
  }
  return false;
}

void json_object_prefix::value_done() {
  s_.want = s_.stack.empty() ? expect::done : expect::comma_or_close;
}

bool json_object_prefix::finish_token() {
  const bool number = s_.token[0] == '-' || std::isdigit(static_cast<unsigned char>(s_.token[0]));
  const bool ok = number ? number_prefix(s_.token, true) : (literal_for(s_.token) && std::string_view(literal_for(s_.token)) == s_.token);
  s_.token.clear();
  if (!ok) return false;
  value_done();
  // The byte being read ends the token but is not part of it: the value before it is a safe
  // point even if that byte (or what follows) is refused.
  safe_ = s_;
  safe_length_ = fed_;
  return true;
}

bool json_object_prefix::in_token(char c) {
  const bool number = s_.token[0] == '-' || std::isdigit(static_cast<unsigned char>(s_.token[0]));
  std::string grown = s_.token + c;
  // a number too large for a double (1e999) is valid JSON text that parsers refuse
  const bool finite = !number || !number_prefix(grown, true) || std::isfinite(std::strtod(grown.c_str(), nullptr));
  if (finite && (number ? number_prefix(grown, false) : literal_for(grown) != nullptr)) {
    s_.token = std::move(grown);
    return true;
  }
  if (!finish_token()) return false;
  return outside(c);
}

bool json_object_prefix::in_string(char c) {
  const auto uc = static_cast<unsigned char>(c);
  if (s_.escape == 1) {
    if (c == 'u') {
      s_.escape = 2;
      s_.code = 0;
      return true;
    }
    if (s_.low_needed || std::string_view("\"\\/bfnrt").find(c) == std::string_view::npos) return false;
    s_.escape = 0;
    return true;
  }
  if (s_.escape >= 2) {
    const int h = hex(c);
    if (h < 0) return false;
    s_.code = s_.code * 16 + static_cast<unsigned>(h);
    const int read = s_.escape - 1;  // digits read, this one included
    // Refuse a digit as soon as no completion is valid: the escape after a high surrogate must be
    // a low one (DC00–DFFF), and a low one may not stand alone.
    if (s_.low_needed && ((read == 1 && s_.code != 0xD) || (read == 2 && s_.code < 0xDC))) return false;
    if (!s_.low_needed && read == 2 && s_.code >= 0xDC && s_.code <= 0xDF) return false;
    if (++s_.escape < 6) return true;
    s_.escape = 0;
    const bool high = s_.code >= 0xD800 && s_.code <= 0xDBFF;
    const bool low = s_.code >= 0xDC00 && s_.code <= 0xDFFF;
    if (s_.low_needed) {
      if (!low) return false;
      s_.low_needed = 0;
      return true;
    }
    if (low) return false;
    if (high) s_.low_needed = 1;
    return true;
  }
  if (s_.low_needed == 1) {
    if (c != '\\') return false;
    s_.escape = 1;
    s_.low_needed = 2;
    return true;
  }
  if (s_.low_needed == 2 && s_.escape == 0) return false;
  if (uc < 0x20) return false;
  if (c == '\\') {
    s_.escape = 1;
    return true;
  }
  if (c == '"') {
    s_.string = false;
    if (s_.key) s_.want = expect::colon;
    else value_done();
  }
  return true;
}

bool json_object_prefix::outside(char c) {
  if (is_ws(c)) return true;
  switch (s_.want) {
    case expect::done: return false;
    case expect::start:
      if (c != '{') return false;
      s_.stack.push_back('{');
      s_.want = expect::key_or_close;
      return true;
    case expect::key_or_close:
    case expect::key:
      if (c == '}' && s_.want == expect::key_or_close) {
        s_.stack.pop_back();
        value_done();
        return true;
      }
      if (c != '"') return false;
      s_.string = true;
      s_.key = true;
      return true;
    case expect::colon:
      if (c != ':') return false;
      s_.want = expect::value;
      return true;
    case expect::value:
    case expect::value_or_close:
      if (c == ']' && s_.want == expect::value_or_close) {
        s_.stack.pop_back();
        value_done();
        return true;
      }
      if (c == '{' || c == '[') {
        if (s_.stack.size() >= k_max_depth) return false;
        s_.stack.push_back(c);
        s_.want = c == '{' ? expect::key_or_close : expect::value_or_close;
        return true;
      }
      if (c == '"') {
        s_.string = true;
        s_.key = false;
        return true;
      }
      if (c == '-' || std::isdigit(static_cast<unsigned char>(c)) || literal_for(std::string(1, c))) {
        s_.token = std::string(1, c);
        return true;
      }
      return false;
    case expect::comma_or_close:
      if (c == ',') {
        s_.want = s_.stack.back() == '{' ? expect::key : expect::value;
        return true;
      }
      if ((c == '}' && s_.stack.back() == '{') || (c == ']' && s_.stack.back() == '[')) {
        s_.stack.pop_back();
        value_done();
        return true;
      }
      return false;
  }
  return false;
}

bool json_object_prefix::step(char c) {
  if (s_.string) return in_string(c);
  if (!s_.token.empty()) return in_token(c);
  return outside(c);
}

std::string json_object_prefix::closing() const {
  if (safe_.stack.empty() && safe_.want != expect::done) return "{}";
  std::string out;
  if (safe_.string) out += '"';  // a cut-off string value (safe points are never inside a key or an escape)
  for (auto it = safe_.stack.rbegin(); it != safe_.stack.rend(); ++it) out += *it == '{' ? '}' : ']';
  return out;
}

}  // namespace warden::api::wire
