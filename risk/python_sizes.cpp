// Large literal sizes in Python code (risk/python_rules.h). Constants are kept as the base-10
// logarithm of their magnitude, so 10**10**10 is a number like any other; subtraction and signs
// are ignored (a size is judged by the largest magnitude it could have).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "risk/python_rules.h"

namespace warden::risk::risk_detail {

namespace {

using kind = py_token_kind;

struct constant {
  double log10 = -std::numeric_limits<double>::infinity();  ///< log10(|value|); -inf for 0
  bool is_float = false;                                    ///< a float cannot be a size
  bool negative = false;  ///< written with a leading minus: x ** -y is small (other signs: ignored)
};

double log_sum(double a, double b) {
  const double hi = std::max(a, b), lo = std::min(a, b);
  if (std::isinf(hi) && hi < 0) return hi;
  return hi + std::log10(1.0 + std::pow(10.0, lo - hi));
}

/// log10 of a hex/octal/binary literal's digits (after the 0x/0o/0b prefix).
std::optional<double> radix_log(std::string_view digits, int base) {
  std::size_t i = digits.find_first_not_of('0');
  if (i == std::string_view::npos) return -std::numeric_limits<double>::infinity();
  digits = digits.substr(i);
  double lead = 0;
  const std::size_t head = std::min<std::size_t>(digits.size(), 12);
  for (std::size_t k = 0; k < head; ++k) {
    const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(digits[k])));
    const int d = c >= 'a' ? c - 'a' + 10 : c - '0';
    if (d < 0 || d >= base) return std::nullopt;
    lead = lead * base + d;
  }
  return std::log10(lead) + static_cast<double>(digits.size() - head) * std::log10(static_cast<double>(base));
}

std::optional<constant> number(std::string_view text) {
  std::string s;
  for (const char c : text)
    if (c != '_') s += c;
  if (s.empty() || s.back() == 'j' || s.back() == 'J') return std::nullopt;  // complex
  if (s.size() > 2 && s[0] == '0' && std::isalpha(static_cast<unsigned char>(s[1]))) {
    const char p = static_cast<char>(std::tolower(static_cast<unsigned char>(s[1])));
    const int base = p == 'x' ? 16 : p == 'o' ? 8 : p == 'b' ? 2 : 0;
    if (base == 0) return std::nullopt;
    const auto l = radix_log(std::string_view(s).substr(2), base);
    if (!l) return std::nullopt;
    return constant{*l, false};
  }
  const bool is_float = s.find_first_of(".eE") != std::string::npos;
  const std::size_t mark = s.find_first_of("eE");
  const std::string mantissa = s.substr(0, mark);
  const double exponent = mark == std::string::npos ? 0 : std::strtod(s.c_str() + mark + 1, nullptr);
  const std::size_t dot = mantissa.find('.');
  const std::string whole = mantissa.substr(0, dot);
  const std::size_t lead = whole.find_first_not_of('0');
  if (lead == std::string::npos) {  // 0.x or 0: the size of a fraction is irrelevant
    const double v = std::strtod(mantissa.c_str(), nullptr);
    return constant{v == 0 ? -std::numeric_limits<double>::infinity() : std::log10(v) + exponent, is_float};
  }
  const std::string digits = whole.substr(lead);
  const double head = std::strtod(digits.substr(0, 15).c_str(), nullptr);
  const double extra = digits.size() > 15 ? static_cast<double>(digits.size() - 15) : 0;
  return constant{std::log10(head) + extra + exponent, is_float};
}

/// A recursive-descent reader of constant expressions over the token list. Each nested
/// bracket, sign and power counts towards k_max_depth; deeper is not a constant (the stack stays
/// small whatever the code).
class reader {
 public:
  static constexpr int k_max_depth = 64;

  reader(const std::vector<py_token>& t, const std::map<std::string, constant>& names) : t_(t), names_(names) {}

  /// The constant expression starting at i; `end` is the index after it. nullopt when none.
  std::optional<constant> parse(std::size_t i, std::size_t& end) {
    pos_ = i;
    const auto v = expr(0);
    end = pos_;
    return v;
  }

 private:
  bool op(std::size_t i, char c) const { return i < t_.size() && t_[i].kind == kind::op && t_[i].text.size() == 1 && t_[i].text[0] == c; }
  bool name(std::size_t i, std::string_view s) const { return i < t_.size() && t_[i].kind == kind::name && t_[i].text == s; }

  std::optional<constant> expr(int depth) {
    auto left = term(depth);
    while (left && (op(pos_, '+') || op(pos_, '-')) && !op(pos_ + 1, '=')) {
      const std::size_t save = pos_++;
      const auto right = term(depth);
      if (!right) {
        pos_ = save;
        break;
      }
      left = constant{log_sum(left->log10, right->log10), left->is_float || right->is_float};
    }
    return left;
  }

  /// The operator of a term at pos_ and its length in tokens; 0 when none.
  std::size_t term_op(char& which) const {
    const bool doubled = (op(pos_, '/') && op(pos_ + 1, '/')) || (op(pos_, '<') && op(pos_ + 1, '<')) || (op(pos_, '>') && op(pos_ + 1, '>'));
    const std::size_t n = doubled ? 2 : 1;
    if (op(pos_ + n, '=')) return 0;  // *=, //=, <<=: a statement, not an expression
    which = t_[pos_].kind == kind::op ? t_[pos_].text[0] : '\0';
    if (which == '*' && op(pos_ + 1, '*')) return 0;  // ** belongs to power()
    if (which == '*' || which == '/' || which == '%' || (doubled && (which == '<' || which == '>'))) return n;
    return 0;
  }

  std::optional<constant> term(int depth) {
    auto left = unary(depth);
    char which = '\0';
    std::size_t n = 0;
    while (left && pos_ < t_.size() && (n = term_op(which)) > 0) {
      const std::size_t save = pos_;
      pos_ += n;
      const auto right = unary(depth);
      if (!right) {
        pos_ = save;
        break;
      }
      double l = left->log10;
      if (which == '*') l += right->log10;
      const bool by_zero = std::isinf(right->log10) && right->log10 < 0;  // x / 0 raises
      if (which == '/' && !by_zero) l -= right->log10;
      if (which == '%' && !by_zero) l = std::min(l, right->log10);
      if (which == '<') l += std::pow(10.0, right->log10) * std::log10(2.0);
      if (which == '>') l -= std::pow(10.0, right->log10) * std::log10(2.0);
      left = constant{l, left->is_float || right->is_float || (which == '/' && n == 1)};
    }
    return left;
  }

  /// Signs are read in a loop (a run of 100000 minus signs is one step, not 100000 frames).
  std::optional<constant> unary(int depth) {
    if (depth > k_max_depth) return std::nullopt;
    const std::size_t save = pos_;
    bool negative = false;
    while (op(pos_, '-') || op(pos_, '+') || op(pos_, '~')) negative ^= op(pos_++, '-');
    auto v = power(depth);
    if (!v) pos_ = save;
    if (v && negative) v->negative = !v->negative;
    return v;
  }

  std::optional<constant> power(int depth) {
    auto base = atom(depth);
    if (!base || !op(pos_, '*') || !op(pos_ + 1, '*') || op(pos_ + 2, '=')) return base;
    const std::size_t save = pos_;
    pos_ += 2;
    const auto exponent = unary(depth + 1);
    if (!exponent) {
      pos_ = save;
      return base;
    }
    const double magnitude = base->log10 * std::pow(10.0, exponent->log10);
    return constant{exponent->negative ? -magnitude : magnitude, base->is_float || exponent->is_float || exponent->negative};
  }

  std::optional<constant> atom(int depth) {
    if (pos_ >= t_.size() || depth > k_max_depth) return std::nullopt;
    const py_token& tok = t_[pos_];
    if (tok.kind == kind::number) {
      const auto v = number(tok.text);
      if (v) ++pos_;
      return v;
    }
    const bool int_call = name(pos_, "int") && op(pos_ + 1, '(');
    if (op(pos_, '(') || int_call) {
      const std::size_t save = pos_;
      pos_ += int_call ? 2 : 1;
      auto v = expr(depth + 1);
      if (!v || !op(pos_, ')')) {
        pos_ = save;
        return std::nullopt;
      }
      ++pos_;
      if (int_call) v->is_float = false;
      return v;
    }
    if (tok.kind == kind::name && !(pos_ > 0 && op(pos_ - 1, '.'))) {
      const auto it = names_.find(tok.text);
      if (it != names_.end() && !op(pos_ + 1, '(') && !op(pos_ + 1, '.') && !op(pos_ + 1, '[')) {
        ++pos_;
        return it->second;
      }
    }
    return std::nullopt;
  }

  const std::vector<py_token>& t_;
  const std::map<std::string, constant>& names_;
  std::size_t pos_ = 0;
};

/// A magnitude in words: "7 GiB", "300 MiB" (bytes) or "10^12", "10^(10^10)".
std::string about(double log10v, bool bytes) {
  char buf[64];
  if (!std::isfinite(log10v)) return bytes ? "more than any memory" : "10^(10^308) or more";
  const double mib = log10v - 20 * std::log10(2.0);  // log10(v / 2^20)
  if (bytes && mib < 10 * std::log10(2.0)) std::snprintf(buf, sizeof buf, "%.0f MiB", std::pow(10.0, mib));
  else if (bytes && log10v < 15) std::snprintf(buf, sizeof buf, "%.0f GiB", std::pow(10.0, mib - 10 * std::log10(2.0)));
  else if (log10v < 1e15) std::snprintf(buf, sizeof buf, "10^%.0f", std::floor(log10v));
  else std::snprintf(buf, sizeof buf, "10^(10^%.0f)", std::floor(std::log10(log10v)));
  return buf;
}

enum class size_use { allocates, counts, computes };

/// What a call of `callee` does with a size argument; nullopt when it takes no size.
std::optional<size_use> size_callee(std::string_view callee) {
  static constexpr std::string_view allocators[] = {"bytearray", "bytes", "randbytes", "token_bytes", "token_hex", "token_urlsafe",
                                                    "urandom", "zfill", "ljust", "rjust", "center", "expandtabs", "getrandbits"};
  static constexpr std::string_view counters[] = {"range", "repeat"};
  static constexpr std::string_view computers[] = {"factorial", "comb", "perm"};
  const auto in = [&](const auto& list) { return std::find(std::begin(list), std::end(list), callee) != std::end(list); };
  if (in(allocators)) return size_use::allocates;
  if (in(counters)) return size_use::counts;
  if (in(computers)) return size_use::computes;
  return std::nullopt;
}

class sizes {
 public:
  sizes(const std::vector<py_token>& t, python_findings& out) : t_(t), out_(out), read_(t, big_names_) {}

  void run() {
    collect_names();
    spans();
    calls();
  }

 private:
  bool op(std::size_t i, char c) const { return i < t_.size() && t_[i].kind == kind::op && t_[i].text.size() == 1 && t_[i].text[0] == c; }
  bool single_star(std::size_t i) const { return op(i, '*') && !op(i + 1, '*') && !op(i + 1, '=') && !(i > 0 && op(i - 1, '*')); }
  static bool big(const constant& c) { return !c.is_float && c.log10 > std::log10(k_max_python_size); }

  /// NAME = <constant> ; — later uses of NAME count as that constant.
  void collect_names() {
    for (std::size_t i = 0; i + 2 < t_.size(); ++i) {
      const bool start = i == 0 || op(i - 1, ';') || op(i - 1, ':');
      if (!start || t_[i].kind != kind::name || !op(i + 1, '=') || op(i + 2, '=')) continue;
      std::size_t end = 0;
      const auto v = read_.parse(i + 2, end);
      if (v && big(*v) && (end == t_.size() || op(end, ';'))) big_names_[t_[i].text] = *v;
    }
  }

  /// Every maximal constant expression: huge on its own, or a size beside a `*`.
  void spans() {
    for (std::size_t i = 0; i < t_.size();) {
      std::size_t end = i;
      const auto v = read_.parse(i, end);
      if (!v || end == i) {
        ++i;
        continue;
      }
      if (v->log10 > k_max_python_digits) out_.add("computes a number of about " + about(std::log10(v->log10), false) + " digits");
      const bool beside_star = (i > 0 && single_star(i - 1)) || single_star(end);
      if (beside_star && big(*v))
        out_.add("allocates at least " + about(v->log10, true) + " (a sequence repeated about " + about(v->log10, false) + " times)");
      i = end;
    }
  }

  /// Size arguments of bytearray(…), range(…), " ".ljust(…), math.factorial(…), ….
  void calls() {
    for (std::size_t i = 0; i + 1 < t_.size(); ++i) {
      if (t_[i].kind != kind::name || !op(i + 1, '(')) continue;
      const auto use = size_callee(t_[i].text);
      const bool builtin_pow = t_[i].text == "pow" && !(i > 0 && op(i - 1, '.'));
      if (!use && !builtin_pow) continue;
      const auto args = arguments(i + 1);
      if (builtin_pow && args.size() == 2) power_call(args[0], args[1]);
      if (!use) continue;
      for (const auto& [first, last] : args) argument(t_[i].text, *use, first, last);
    }
  }

  /// Top-level argument token ranges [first, last) of the call whose '(' is at `open`.
  std::vector<std::pair<std::size_t, std::size_t>> arguments(std::size_t open) const {
    std::vector<std::pair<std::size_t, std::size_t>> out;
    int depth = 0;
    std::size_t start = open + 1;
    for (std::size_t j = open + 1; j < t_.size(); ++j) {
      const bool opener = op(j, '(') || op(j, '[') || op(j, '{');
      const bool close = op(j, ')') || op(j, ']') || op(j, '}');
      if (opener) ++depth;
      if ((close && depth == 0) || (op(j, ',') && depth == 0)) {
        out.emplace_back(start, j);
        start = j + 1;
        if (close) break;
      } else if (close) {
        --depth;
      }
    }
    return out;
  }

  /// pow(base, exp) with two constants is base ** exp (three arguments: modular, small).
  void power_call(std::pair<std::size_t, std::size_t> base, std::pair<std::size_t, std::size_t> exponent) {
    std::size_t end_b = 0, end_e = 0;
    const auto b = read_.parse(base.first, end_b);
    const auto e = read_.parse(exponent.first, end_e);
    if (!b || !e || end_b != base.second || end_e != exponent.second || e->negative) return;
    const double digits = b->log10 * std::pow(10.0, e->log10);
    if (digits > k_max_python_digits) out_.add("computes a number of about " + about(std::log10(digits), false) + " digits");
  }

  void argument(const std::string& callee, size_use use, std::size_t first, std::size_t last) {
    if (first + 1 < last && t_[first].kind == kind::name && op(first + 1, '=')) first += 2;  // keyword
    std::size_t end = 0;
    const auto v = first < last ? read_.parse(first, end) : std::nullopt;
    if (!v || end != last || !big(*v)) return;
    switch (use) {
      case size_use::allocates: return out_.add("allocates about " + about(v->log10, true) + " (" + callee + ")");
      case size_use::counts: return out_.add("counts to about " + about(v->log10, false) + " (" + callee + ")");
      case size_use::computes: return out_.add("computes " + callee + " of about " + about(v->log10, false));
    }
  }

  const std::vector<py_token>& t_;
  python_findings& out_;
  std::map<std::string, constant> big_names_;
  reader read_;
};

}  // namespace

void check_python_sizes(const std::vector<py_token>& t, python_findings& out) { sizes(t, out).run(); }

}  // namespace warden::risk::risk_detail
