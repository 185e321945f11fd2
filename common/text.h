// text — small ASCII text helpers shared across modules (lower-casing, trimming).
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace warden {

/// `s` with A–Z turned to a–z; every other byte (UTF-8 included) unchanged.
inline std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

/// `s` without leading and trailing ASCII whitespace (space, \t, \n, \r, \f, \v).
inline std::string_view trim(std::string_view s) {
  constexpr std::string_view ws = " \t\n\r\f\v";
  const auto b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

/// Whether `s` starts with "http://" or "https://" (lower case, as URLs in flags are written).
inline bool has_http_scheme(std::string_view s) { return s.starts_with("http://") || s.starts_with("https://"); }

}  // namespace warden
