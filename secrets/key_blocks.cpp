// Private key blocks of secrets/find_secrets.h: the material between BEGIN and END markers, or,
// without a proper END, a bounded block (the rest of the quoted string the marker is in, or
// the key lines after it), so a marker can never hide the command around it.
//
// Linear: markers are visited in order; the next END marker, the first line that is not key
// material and the closing quote of the current quoted string are cached positions that only
// move forward; the key-line scan stops at its first non-key byte and at
// k_max_key_block_bytes, and what it covers is skipped.
#include <string_view>
#include <vector>

#include "secrets/find_secrets.h"
#include "secrets/redact.h"
#include "secrets/scan_text.h"
#include "secrets/secret_detect.h"

namespace warden::secrets::detail {
namespace {

constexpr std::string_view k_end_marker = "-----END";
constexpr std::size_t npos = std::string_view::npos;
/// A key line of an unterminated block is at least this long, or ends in `=` (PEM lines are 64
/// or 70 characters; a shorter one-word line is more likely a command than key material).
constexpr std::size_t k_min_key_line = 40;

/// A byte a PEM header's value may hold (`4,ENCRYPTED`, `AES-128-CBC,3F17…`, `"rsa-key"`):
/// nothing that could join or redirect a shell command.
constexpr bool header_value_char(char c) {
  switch (c) {
    case ';': case '&': case '|': case '$': case '`': case '(': case ')': case '<': case '>': case '\\':
    case '\'': case '\n': return false;
    default: return true;
  }
}

/// The line from `b` on, if it is key material — blank-separated words of base64 characters, or
/// a PEM header `Name: value` — read up to the byte that decides: where the line ends (its
/// line break or the text's end), or npos when it is not key material.
std::size_t key_material_line_end(std::string_view s, std::size_t b) {
  std::size_t i = b;
  while (i < s.size() && (is_blank(s[i]) || s[i] == '\r')) ++i;
  const std::size_t start = i;
  bool name = true;  // letters, digits and dashes so far: it may be a header's name
  for (; i < s.size() && s[i] != '\n'; ++i) {
    const char c = s[i];
    if (is_b64(c) || is_blank(c) || c == '\r') {
      name = name && is_alnum(c);
    } else if (c == '-' && name) {
      continue;
    } else if (c == ':' && name && i > start) {
      for (++i; i < s.size() && s[i] != '\n'; ++i) {
        if (!header_value_char(s[i])) return npos;
      }
      return i;
    } else {
      return npos;
    }
  }
  return i;
}

/// The shell quote state from the start of the text, advanced forward only: ' and " open and
/// close, a backslash escapes the next byte outside single quotes.
class quote_state {
 public:
  /// The quote open at `target` (0 when none).
  char at(std::string_view s, std::size_t target) {
    while (pos_ < target && pos_ < s.size()) {
      const char c = s[pos_];
      if (c == '\\' && quote_ != '\'') {
        pos_ += 2;
        continue;
      }
      if (quote_ == 0 && (c == '\'' || c == '"')) {
        quote_ = c;
        open_ = pos_;
      } else if (c == quote_) {
        quote_ = 0;
      }
      ++pos_;
    }
    return quote_;
  }
  std::size_t open() const { return open_; }

 private:
  std::size_t pos_ = 0, open_ = 0;
  char quote_ = 0;
};

/// Cached forward searches of one text.
struct block_finder {
  std::string_view s;
  quote_state quotes;
  std::size_t end_at = npos, end_from = 0;  ///< the next END marker at or after end_from
  bool end_known = false;
  std::size_t bad_at = 0;                   ///< where the first line that is not key material starts
  bool bad_known = false;
  std::size_t close_open = npos, close_at = npos, close_from = 0;  ///< the closing quote of a quoted string

  std::size_t next_end(std::size_t from) {
    if (!end_known || (end_at != npos && end_at < from)) {
      end_at = s.find(k_end_marker, from);
      end_known = true;
    }
    return end_at;
  }

  /// Where the first line from `from` on that is not key material starts (the piece of the
  /// line `from` is in counts from `from`); the text's end when all is.
  std::size_t next_bad(std::size_t from) {
    if (!bad_known || bad_at < from) {
      std::size_t b = from;
      while (b < s.size()) {
        const std::size_t e = key_material_line_end(s, b);
        if (e == npos) break;
        b = e + 1;
      }
      bad_at = std::min(b, s.size());
      bad_known = true;
    }
    return bad_at;
  }

  /// The closing quote of the string opened at `open` (quote `q`), searched at most up to
  /// `limit`; npos when it does not close before.
  std::size_t closing_quote(char q, std::size_t open, std::size_t from, std::size_t limit) {
    if (close_open != open) {
      close_open = open;
      close_at = npos;
      close_from = from;
    }
    if (close_at != npos) return close_at < limit ? close_at : npos;
    std::size_t i = std::max(close_from, from);
    for (; i < limit && i < s.size(); ++i) {
      if (s[i] == '\\' && q == '"') {
        ++i;
      } else if (s[i] == q) {
        close_at = i;
        return i;
      }
    }
    close_from = i;
    return npos;
  }

  /// Where the key lines after `from` end (rule 3), at most at `limit`.
  std::size_t key_lines_end(std::size_t from, std::size_t limit) const {
    std::size_t end = from, pos = from;
    for (bool first = true; pos < limit; first = false) {
      std::size_t i = pos, body = 0;
      char last = 0;
      while (i < limit && s[i] != '\n' && (is_b64(s[i]) || is_blank(s[i]) || s[i] == '\r')) {
        if (is_b64(s[i])) {
          ++body;
          last = s[i];
        }
        ++i;
      }
      const bool line_done = i >= limit || s[i] == '\n';
      if (!line_done) break;  // a byte that is not key material: the line is kept
      if (body == 0 && !first) break;
      if (body > 0 && body < k_min_key_line && last != '=') break;
      if (body > 0) end = i;
      pos = i + 1;
    }
    return end;
  }

  /// The block after the marker ending at `e` that starts at `m`: where it ends.
  std::size_t block_end(std::size_t m, std::size_t e) {
    const std::size_t end = next_end(e);
    if (end != npos && end - e <= k_max_key_material_bytes && next_bad(e) >= end) return end;
    const std::size_t limit = std::min(s.size(), e + k_max_key_block_bytes);
    if (const char q = quotes.at(s, m); q != 0) {
      if (const std::size_t close = closing_quote(q, quotes.open(), e, limit); close != npos) return close;
    }
    return key_lines_end(e, limit);
  }
};

}  // namespace

void find_key_blocks(std::string_view s, std::vector<span>& out) {
  block_finder f{s, {}};
  std::size_t from = 0;
  while (const auto m = find_private_key_block(s, from)) {
    const std::size_t e = m->second;
    if (s.substr(e).starts_with(k_redacted)) {  // redacted before
      out.push_back({e, e});
      from = e + k_redacted.size();
      continue;
    }
    const std::size_t end = f.block_end(m->first, e);
    out.push_back({e, end});  // an empty span still marks a key (the scrubber counts it)
    from = std::max(end, e);
  }
}

}  // namespace warden::secrets::detail
