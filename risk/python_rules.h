// python_rules — pieces of the python rules of the `auto` classifier shared by their source files
// (risk_python.cpp, python_sizes.cpp). Not for use outside the classifier.
// Thread-safety: pure functions.
#pragma once

#include <vector>

#include "risk/python_tokens.h"
#include "risk/risk_detail.h"

namespace warden::risk::risk_detail {

/// Sizes above this many items (bytes, characters, list elements, loop counts) ask: a large
/// literal size is a resource flood (issue 22: `bytearray(7*2**30)`, `'x' * 10**10`,
/// `[0]*10**9`, `range(10**12)`), while everyday sizes stay far below it.
inline constexpr double k_max_python_size = 1e8;

/// A constant that needs more digits than this to write down asks (`10**10**10`): computing it
/// takes minutes and gigabytes.
inline constexpr double k_max_python_digits = 1e7;

/// Resource shapes in `t` (tokens with adjacent string literals folded): a constant expression of
/// number literals (and names assigned one) above k_max_python_size used as a size — an
/// argument of bytearray/bytes/range/repeat/ljust/factorial/…, or an operand of `*` whose other
/// side is not a number — and any constant above k_max_python_digits digits. Each is a hazard
/// ("allocates about 7 GiB (bytearray)").
void check_python_sizes(const std::vector<py_token>& t, findings& out);

}  // namespace warden::risk::risk_detail
