#include "api/anthropic/json_prefix.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

namespace warden::api::anthropic {

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

bool json_object_prefix::feed(std::string_view text) {
  json_object_prefix saved = *this;
  for (char c : text) {
    if (!step(c)) {
      *this = std::move(saved);
      return false;
    }
  }
  return true;
}

void json_object_prefix::value_done() {
  expect_ = stack_.empty() ? expect::done : expect::comma_or_close;
}

bool json_object_prefix::finish_token() {
  const bool number = token_[0] == '-' || std::isdigit(static_cast<unsigned char>(token_[0]));
  const bool ok = number ? number_prefix(token_, true) : (literal_for(token_) && std::string_view(literal_for(token_)) == token_);
  token_.clear();
  if (ok) value_done();
  return ok;
}

bool json_object_prefix::in_token(char c) {
  const bool number = token_[0] == '-' || std::isdigit(static_cast<unsigned char>(token_[0]));
  std::string grown = token_ + c;
  // a number too large for a double (1e999) is valid JSON text that parsers refuse
  const bool finite = !number || !number_prefix(grown, true) || std::isfinite(std::strtod(grown.c_str(), nullptr));
  if (finite && (number ? number_prefix(grown, false) : literal_for(grown) != nullptr)) {
    token_ = std::move(grown);
    return true;
  }
  if (!finish_token()) return false;
  return outside(c);
}

bool json_object_prefix::in_string(char c) {
  const auto uc = static_cast<unsigned char>(c);
  if (escape_ == 1) {
    if (c == 'u') {
      escape_ = 2;
      code_ = 0;
      return true;
    }
    if (low_needed_ || std::string_view("\"\\/bfnrt").find(c) == std::string_view::npos) return false;
    escape_ = 0;
    return true;
  }
  if (escape_ >= 2) {
    const int h = hex(c);
    if (h < 0) return false;
    code_ = code_ * 16 + static_cast<unsigned>(h);
    const int read = escape_ - 1;  // digits read, this one included
    // Refuse a digit as soon as no completion is valid: the escape after a high surrogate must be
    // a low one (DC00–DFFF), and a low one may not stand alone.
    if (low_needed_ && ((read == 1 && code_ != 0xD) || (read == 2 && code_ < 0xDC))) return false;
    if (!low_needed_ && read == 2 && code_ >= 0xDC && code_ <= 0xDF) return false;
    if (++escape_ < 6) return true;
    escape_ = 0;
    const bool high = code_ >= 0xD800 && code_ <= 0xDBFF;
    const bool low = code_ >= 0xDC00 && code_ <= 0xDFFF;
    if (low_needed_) {
      if (!low) return false;
      low_needed_ = 0;
      return true;
    }
    if (low) return false;
    if (high) low_needed_ = 1;
    return true;
  }
  if (low_needed_ == 1) {
    if (c != '\\') return false;
    escape_ = 1;
    low_needed_ = 2;
    return true;
  }
  if (low_needed_ == 2 && escape_ == 0) return false;
  if (uc < 0x20) return false;
  if (c == '\\') {
    escape_ = 1;
    return true;
  }
  if (c == '"') {
    string_ = false;
    if (key_) expect_ = expect::colon;
    else value_done();
  }
  return true;
}

bool json_object_prefix::outside(char c) {
  if (is_ws(c)) return true;
  switch (expect_) {
    case expect::done: return false;
    case expect::start:
      if (c != '{') return false;
      stack_.push_back('{');
      expect_ = expect::key_or_close;
      return true;
    case expect::key_or_close:
    case expect::key:
      if (c == '}' && expect_ == expect::key_or_close) {
        stack_.pop_back();
        value_done();
        return true;
      }
      if (c != '"') return false;
      string_ = true;
      key_ = true;
      return true;
    case expect::colon:
      if (c != ':') return false;
      expect_ = expect::value;
      return true;
    case expect::value:
    case expect::value_or_close:
      if (c == ']' && expect_ == expect::value_or_close) {
        stack_.pop_back();
        value_done();
        return true;
      }
      if (c == '{' || c == '[') {
        stack_.push_back(c);
        expect_ = c == '{' ? expect::key_or_close : expect::value_or_close;
        return true;
      }
      if (c == '"') {
        string_ = true;
        key_ = false;
        return true;
      }
      if (c == '-' || std::isdigit(static_cast<unsigned char>(c)) || literal_for(std::string(1, c))) {
        token_ = std::string(1, c);
        return true;
      }
      return false;
    case expect::comma_or_close:
      if (c == ',') {
        expect_ = stack_.back() == '{' ? expect::key : expect::value;
        return true;
      }
      if ((c == '}' && stack_.back() == '{') || (c == ']' && stack_.back() == '[')) {
        stack_.pop_back();
        value_done();
        return true;
      }
      return false;
  }
  return false;
}

bool json_object_prefix::step(char c) {
  if (string_) return in_string(c);
  if (!token_.empty()) return in_token(c);
  return outside(c);
}

std::string json_object_prefix::closing() const {
  if (expect_ == expect::start) return "{}";
  std::string out;
  expect after = expect_;
  if (string_) {
    if (escape_ == 1) {
      out += low_needed_ ? "udc00" : "n";
    } else if (escape_ >= 2) {
      const auto read = static_cast<std::size_t>(escape_ - 2);
      if (low_needed_) {
        out += std::string("dc00").substr(read);
      } else {
        out += std::string(4 - read, '0');
        const unsigned full = code_ << (4 * (4 - read));
        if (full >= 0xD800 && full <= 0xDBFF) out += "\\udc00";
      }
    }
    if (low_needed_ == 1) out += "\\udc00";
    else if (low_needed_ == 2 && escape_ == 0) out += "udc00";
    out += '"';
    after = key_ ? expect::colon : (stack_.empty() ? expect::done : expect::comma_or_close);
  } else if (!token_.empty()) {
    const bool number = token_[0] == '-' || std::isdigit(static_cast<unsigned char>(token_[0]));
    if (number) {
      if (!number_prefix(token_, true)) out += '0';
    } else {
      out += std::string(literal_for(token_)).substr(token_.size());
    }
    after = expect::comma_or_close;
  }
  switch (after) {
    case expect::key: out += "\"_\":null"; break;
    case expect::colon: out += ":null"; break;
    case expect::value: out += "null"; break;
    case expect::start:
    case expect::key_or_close:
    case expect::value_or_close:
    case expect::comma_or_close:
    case expect::done: break;
  }
  for (auto it = stack_.rbegin(); it != stack_.rend(); ++it) out += *it == '{' ? '}' : ']';
  return out;
}

}  // namespace warden::api::anthropic
