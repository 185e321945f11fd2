// Text helpers for tool output: UTF-8 repair, character counting and capping.
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace warden::tools {

/// `bytes` with every invalid UTF-8 sequence replaced by U+FFFD.
std::string to_valid_utf8(std::string_view bytes);

/// Number of bytes at the end of `bytes` that form an incomplete (but so far valid) UTF-8
/// sequence, 0..3: live output holds them back until the next piece arrives.
std::size_t incomplete_utf8_tail(std::string_view bytes) noexcept;

/// Code points in valid UTF-8 text.
std::size_t utf8_length(std::string_view text) noexcept;

/// The first `max_chars` code points of valid UTF-8 text.
std::string_view utf8_prefix(std::string_view text, std::size_t max_chars) noexcept;

}  // namespace warden::tools
