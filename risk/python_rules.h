// python_rules — pieces of the python rules of the `auto` classifier shared by their source files
// (risk_python.cpp, python_sizes.cpp). Not for use outside the classifier.
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
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

/// Python 3.11's parser refuses deeper bracket nesting (Parser/tokenizer.c MAXLEVEL); code nested
/// deeper asks without further analysis, which keeps the rules linear in the code's length.
inline constexpr int k_max_python_nesting = 200;

/// The findings of one piece of Python, at most k_max_reasons distinct reasons of its own; past
/// them every reason becomes one "and more reasons not listed" of the same kind, so code made of
/// thousands of distinct findings stays cheap to judge and its card readable.
class python_findings {
 public:
  static constexpr std::size_t k_max_reasons = 16;
  explicit python_findings(findings& out) : out_(out), start_(out.reasons.size()) {}
  void add(std::string reason, reason_kind kind = reason_kind::hazard) {
    if (out_.reasons.size() - start_ < k_max_reasons) return out_.add(std::move(reason), kind);
    out_.add("and more reasons not listed", kind);
  }

 private:
  findings& out_;
  std::size_t start_;
};

/// Resource shapes in `t` (tokens with adjacent string literals folded): a constant expression of
/// number literals (and names assigned one) above k_max_python_size used as a size — an
/// argument of bytearray/bytes/range/repeat/ljust/factorial/…, or an operand of `*` whose other
/// side is not a number — and any constant above k_max_python_digits digits. Each is a hazard
/// ("allocates about 7 GiB (bytearray)").
void check_python_sizes(const std::vector<py_token>& t, python_findings& out);

}  // namespace warden::risk::risk_detail
