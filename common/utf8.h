// UTF-8 — validation, repair, counting and cutting, all on one decoder (`decode_utf8`).
//
// Well-formed UTF-8 is Unicode 15 §3.9 Table 3-7 (= RFC 3629 §4): no overlong forms, no
// surrogates (U+D800..U+DFFF), nothing above U+10FFFF, no stray continuation bytes, and the
// lead bytes C0, C1, F5..FF never appear.
//
// Repair replaces each *maximal subpart* of an ill-formed sequence with one U+FFFD (Unicode §3.9
// "U+FFFD Substitution of Maximal Subparts"; the WHATWG Encoding Standard and Python's
// errors="replace" do the same): "\xE2\x82" followed by "a" is one U+FFFD then "a", while a
// surrogate "\xED\xA0\x80" is three (A0 can never follow ED, so each byte is its own subpart).
//
// Counting and cutting work in code points; on ill-formed input they count each maximal subpart
// as one (the U+FFFD that `to_valid_utf8` would put there) and never cut inside a well-formed
// sequence, so utf8_length(s) == utf8_length(to_valid_utf8(s)) for every s.
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace warden {

/// One step of the decoder at a byte offset.
struct utf8_sequence {
  enum class status : std::uint8_t {
    valid,      ///< a well-formed sequence of `length` (1..4) bytes encoding `code_point`
    invalid,    ///< ill-formed: a maximal subpart of `length` (1..3) bytes, to replace by U+FFFD
    truncated,  ///< a well-formed prefix of `length` (1..3) bytes that the end of the text cuts
  };
  status state;
  std::size_t length;
  char32_t code_point;  ///< 0 unless valid
};

/// Appends code point `cp` (≤ U+10FFFF) to `out` as UTF-8 (1 to 4 bytes). It does not check
/// for surrogates: callers that may have one map it first.
void append_utf8(std::string& out, std::uint32_t cp);

/// Decodes the sequence starting at `bytes[at]` (`at` < bytes.size()).
utf8_sequence decode_utf8(std::string_view bytes, std::size_t at) noexcept;

/// True when `bytes` is well-formed UTF-8 (no overlongs, no surrogates, max U+10FFFF, nothing
/// cut short at the end).
bool is_valid_utf8(std::string_view bytes) noexcept;

/// `bytes` with every maximal subpart of an ill-formed sequence (a truncated tail included)
/// replaced by U+FFFD (EF BF BD); well-formed text comes back unchanged.
std::string to_valid_utf8(std::string_view bytes);

/// Number of bytes at the end of `bytes` that form an incomplete but so far well-formed
/// sequence, 0..3: streamed output holds them back until the next piece arrives.
std::size_t incomplete_utf8_tail(std::string_view bytes) noexcept;

/// Code points in `text` (each maximal ill-formed subpart counts as one).
std::size_t utf8_length(std::string_view text) noexcept;

/// The first `max_chars` code points of `text` (counted as by utf8_length); never ends inside a
/// well-formed sequence.
std::string_view utf8_prefix(std::string_view text, std::size_t max_chars) noexcept;

}  // namespace warden
