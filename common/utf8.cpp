#include "common/utf8.h"

namespace warden {

utf8_sequence decode_utf8(std::string_view s, std::size_t at) noexcept {
  using st = utf8_sequence::status;
  const auto lead = static_cast<unsigned char>(s[at]);
  if (lead < 0x80) return {st::valid, 1, lead};
  // Unicode §3.9 Table 3-7: the lead byte fixes the length and the range of the second byte.
  std::size_t len = 0;
  unsigned lo = 0x80, hi = 0xBF;
  char32_t cp = 0;
  if (lead >= 0xC2 && lead <= 0xDF) { len = 2; cp = lead & 0x1Fu; }
  else if (lead >= 0xE0 && lead <= 0xEF) {
    len = 3;
    cp = lead & 0x0Fu;
    if (lead == 0xE0) lo = 0xA0;        // overlong below U+0800
    else if (lead == 0xED) hi = 0x9F;   // surrogates U+D800..U+DFFF
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    len = 4;
    cp = lead & 0x07u;
    if (lead == 0xF0) lo = 0x90;        // overlong below U+10000
    else if (lead == 0xF4) hi = 0x8F;   // above U+10FFFF
  } else {
    return {st::invalid, 1, 0};         // continuation byte, C0, C1, F5..FF
  }
  for (std::size_t k = 1; k < len; ++k) {
    if (at + k >= s.size()) return {st::truncated, k, 0};
    const auto b = static_cast<unsigned char>(s[at + k]);
    if (b < (k == 1 ? lo : 0x80u) || b > (k == 1 ? hi : 0xBFu)) return {st::invalid, k, 0};
    cp = (cp << 6) | (b & 0x3Fu);
  }
  return {st::valid, len, cp};
}

bool is_valid_utf8(std::string_view s) noexcept {
  for (std::size_t i = 0; i < s.size();) {
    const utf8_sequence q = decode_utf8(s, i);
    if (q.state != utf8_sequence::status::valid) return false;
    i += q.length;
  }
  return true;
}

std::string to_valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const utf8_sequence q = decode_utf8(s, i);
    if (q.state == utf8_sequence::status::valid) out.append(s.substr(i, q.length));
    else out += "\xEF\xBF\xBD";
    i += q.length;
  }
  return out;
}

std::size_t incomplete_utf8_tail(std::string_view s) noexcept {
  // A cut-short sequence is at most 3 bytes, so it starts in the last 3.
  for (std::size_t i = s.size() > 3 ? s.size() - 3 : 0; i < s.size(); ++i) {
    if (decode_utf8(s, i).state == utf8_sequence::status::truncated) return s.size() - i;
  }
  return 0;
}

std::size_t utf8_length(std::string_view s) noexcept {
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.size(); ++n) i += decode_utf8(s, i).length;
  return n;
}

std::string_view utf8_prefix(std::string_view s, std::size_t max_chars) noexcept {
  std::size_t i = 0;
  for (std::size_t n = 0; n < max_chars && i < s.size(); ++n) i += decode_utf8(s, i).length;
  return s.substr(0, i);
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | ((cp >> 18) & 0x07));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace warden
