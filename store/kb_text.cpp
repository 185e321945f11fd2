#include "store/kb_text.h"

#include <algorithm>

namespace warden::store {
namespace {

constexpr std::string_view k_ideographic_full_stop = "\xE3\x80\x82";  // 。 U+3002

bool is_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
bool is_continuation(char c) noexcept { return (static_cast<unsigned char>(c) & 0xC0U) == 0x80U; }
bool is_sentence_end(char c) noexcept { return c == '.' || c == '!' || c == '?'; }

/// The last c in [lo, hi] right after a blank line ("\n\n" or "\n\r\n"); 0 when none.
std::size_t paragraph_cut(std::string_view t, std::size_t lo, std::size_t hi) noexcept {
  for (std::size_t c = hi; c >= lo && c >= 2; --c) {
    if (t[c - 1] != '\n') continue;
    if (t[c - 2] == '\n' || (t[c - 2] == '\r' && c >= 3 && t[c - 3] == '\n')) return c;
  }
  return 0;
}

/// The last c in [lo, hi] right after a sentence end followed by whitespace (or after 。); 0 when none.
std::size_t sentence_cut(std::string_view t, std::size_t lo, std::size_t hi) noexcept {
  for (std::size_t c = hi; c >= lo && c >= 1; --c) {
    if (is_space(t[c]) && is_sentence_end(t[c - 1])) return c;
    if (c >= 3 && t.substr(c - 3, 3) == k_ideographic_full_stop) return c;
  }
  return 0;
}

/// The last c in [lo, hi] at whitespace; 0 when none.
std::size_t space_cut(std::string_view t, std::size_t lo, std::size_t hi) noexcept {
  for (std::size_t c = hi; c >= lo && c >= 1; --c) {
    if (is_space(t[c])) return c;
  }
  return 0;
}

/// Where the chunk starting at `pos` ends, pos < cut; pos + chunk < t.size() (searches only the
/// window's last fifth, so the cost is bounded by the chunk size).
std::size_t find_cut(std::string_view t, std::size_t pos, std::size_t chunk) noexcept {
  const std::size_t hi = pos + chunk;  // < t.size(): t[hi] exists
  const std::size_t lo = std::max(pos + 1, hi - chunk / 5);
  for (auto* finder : {paragraph_cut, sentence_cut, space_cut}) {
    const std::size_t c = finder(t, lo, hi);
    if (c > pos) return c;
  }
  std::size_t cut = hi;  // a hard cut, on a UTF-8 boundary
  while (cut > pos && is_continuation(t[cut])) --cut;
  if (cut == pos) {  // the window is inside one long sequence (tiny chunk sizes): go past it
    cut = hi;
    while (cut < t.size() && is_continuation(t[cut])) ++cut;
  }
  return cut;
}

/// Where the chunk after [pos, cut) starts: about `overlap` bytes before cut, at the start of a
/// word when one begins in the overlap, else on a UTF-8 boundary; always after pos.
std::size_t next_start(std::string_view t, std::size_t pos, std::size_t cut, std::size_t overlap) noexcept {
  std::size_t start = cut > pos + overlap ? cut - overlap : pos + 1;
  for (std::size_t s = start; s < cut; ++s) {
    if (s > 0 && is_space(t[s - 1]) && !is_space(t[s])) return s;
  }
  while (start < cut && is_continuation(t[start])) ++start;
  return start;
}

std::string_view trim_end(std::string_view s) noexcept {
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

std::vector<std::string> chunk_text(std::string_view text, std::size_t chunk_chars, std::size_t overlap_chars) {
  const std::size_t chunk = std::max<std::size_t>(chunk_chars, 1);
  const std::size_t overlap = std::min(overlap_chars, chunk / 2);
  const std::size_t n = text.size();
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (true) {
    while (pos < n && is_space(text[pos])) ++pos;
    if (pos >= n) break;
    if (n - pos <= chunk) {
      out.emplace_back(trim_end(text.substr(pos)));
      break;
    }
    const std::size_t cut = find_cut(text, pos, chunk);
    out.emplace_back(trim_end(text.substr(pos, cut - pos)));
    if (cut >= n) break;
    pos = next_start(text, pos, cut, overlap);
  }
  return out;
}

}  // namespace warden::store
