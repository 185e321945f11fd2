// What every harness of fuzz/ shares: the input as text, an invariant check that stops the run
// with a message (libFuzzer then writes the input as a reproducer), and a deterministic way to cut
// one input into pieces, for the streaming parsers whose result must not depend on how the bytes
// arrive.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

namespace warden::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// Stops the run when an invariant does not hold: prints `what` and aborts (a crash to libFuzzer).
inline void check(bool holds, const char* what) {
  if (holds) return;
  std::fprintf(stderr, "fuzz invariant broken: %s\n", what);
  std::abort();
}

/// `text` cut into pieces of 1..17 bytes, the sizes drawn from `seed` (any split: the parsers
/// must not care where a read ends).
inline std::vector<std::string_view> pieces(std::string_view text, std::uint8_t seed) {
  std::vector<std::string_view> out;
  std::uint32_t state = seed * 2654435761u + 1u;
  while (!text.empty()) {
    state = state * 1103515245u + 12345u;
    const std::size_t n = 1 + (state >> 16) % 17;
    out.push_back(text.substr(0, n));
    text.remove_prefix(out.back().size());
  }
  return out;
}

}  // namespace warden::fuzz
