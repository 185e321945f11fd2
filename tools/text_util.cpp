#include "tools/text_util.h"

namespace warden::tools {
namespace {
/// Length of the valid UTF-8 sequence at `s[i]`, 0 when invalid, -1 when cut short by the end.
int sequence_length(std::string_view s, std::size_t i) noexcept {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return 1;
  int len = 0;
  unsigned lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) len = 2;
  else if (c == 0xE0) { len = 3; lo = 0xA0; }
  else if (c >= 0xE1 && c <= 0xEC) len = 3;
  else if (c == 0xED) { len = 3; hi = 0x9F; }
  else if (c >= 0xEE && c <= 0xEF) len = 3;
  else if (c == 0xF0) { len = 4; lo = 0x90; }
  else if (c >= 0xF1 && c <= 0xF3) len = 4;
  else if (c == 0xF4) { len = 4; hi = 0x8F; }
  else return 0;
  for (int k = 1; k < len; ++k) {
    if (i + static_cast<std::size_t>(k) >= s.size()) return -1;
    const auto b = static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]);
    const unsigned l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xBF;
    if (b < l || b > h) return 0;
  }
  return len;
}
}  // namespace

std::string to_valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    const int n = sequence_length(s, i);
    if (n > 0) {
      out.append(s.substr(i, static_cast<std::size_t>(n)));
      i += static_cast<std::size_t>(n);
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

std::size_t incomplete_utf8_tail(std::string_view s) noexcept {
  const std::size_t start = s.size() > 3 ? s.size() - 3 : 0;
  for (std::size_t i = start; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0xC2 && c <= 0xF4 && sequence_length(s, i) == -1) return s.size() - i;
  }
  return 0;
}

std::size_t utf8_length(std::string_view s) noexcept {
  std::size_t n = 0;
  for (char c : s) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  }
  return n;
}

std::string_view utf8_prefix(std::string_view s, std::size_t max_chars) noexcept {
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
      if (n == max_chars) return s.substr(0, i);
      ++n;
    }
  }
  return s;
}

}  // namespace warden::tools
