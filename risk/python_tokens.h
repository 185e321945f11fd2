// python_tokens — a small Python tokenizer for the `auto` classifier's python rules
// (risk/risk.h; reference ../shared/reference/unsloth-studio.md §3.6 says Studio checks the
// AST; warden has no Python parser, so the rules look at tokens instead, which is enough to
// never mistake text inside a string literal or a comment for code).
//
// Shapes:
//   name    identifiers and keywords (non-ASCII bytes are kept; the caller decides)
//   number  numeric literals, as written
//   string  one literal with any r/b/u/f/t prefix; `text` is its value (escapes decoded unless
//           raw). An f-string's `text` holds its literal parts only and `literal` is false; the
//           tokens of each replacement field follow it, wrapped in "(" … ")" op tokens, so code
//           inside f"{…}" is seen like any other code.
//   op      one punctuation byte; a newline outside brackets is emitted as ";" (a statement
//           boundary), comments and line continuations are dropped.
// Errors: ok=false with `why` for an unterminated string, a stray backslash, an f-string
// replacement field that is not closed, nesting deeper than 16 f-strings, or input over 256 KiB.
// Thread-safety: pure function.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace warden::risk {

enum class py_token_kind { name, number, string, op };

struct py_token {
  py_token_kind kind = py_token_kind::op;
  std::string text;
  bool literal = true;  ///< string: its whole value is known (not an f-string with fields)
};

struct py_lex_result {
  bool ok = true;
  std::string why;
  std::vector<py_token> tokens;
};

py_lex_result lex_python(std::string_view code);

}  // namespace warden::risk
