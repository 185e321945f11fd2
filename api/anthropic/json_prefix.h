// json_prefix — checks, as tool-call arguments stream in, that the text so far can still become
// one JSON object, and says how to close it. The Anthropic stream sends a call's arguments as
// input_json_delta fragments the client concatenates and parses; a model can write arguments
// that are not a JSON object (an array, a cut-off or malformed text, a lone surrogate escape).
// stream_render.h forwards a fragment only while the text stays a valid prefix, and ends the
// block with closing(), so what a client reassembles always parses, to the same object the
// non-streaming answer holds.
// Rules: RFC 8259 syntax; the top level must be an object; numbers must fit a double; \u escapes must pair surrogates (a
// high surrogate followed by \u + a low one); raw control characters in strings are refused.
// closing(): finishes an open escape, string, number or literal (minimally: "\"", "0", the rest
// of true/false/null), gives a missing value `null` (a missing key `"_":null`), closes every open
// array and object; "{}" when nothing was accepted; "" when the object is already complete.
// Thread-safety: a value type.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace warden::api::anthropic {

class json_object_prefix {
 public:
  /// Accepts `text` when what was fed stays a prefix of one JSON object; otherwise changes
  /// nothing and returns false.
  bool feed(std::string_view text);
  /// The text that completes what was accepted into a valid JSON object.
  std::string closing() const;
  /// One whole object was accepted (trailing whitespace allowed).
  bool complete() const { return expect_ == expect::done; }

 private:
  enum class expect { start, key_or_close, key, colon, value, value_or_close, comma_or_close, done };
  bool step(char c);
  bool outside(char c);
  bool in_string(char c);
  bool in_token(char c);
  bool finish_token();
  void value_done();

  std::vector<char> stack_;
  expect expect_ = expect::start;
  bool string_ = false;
  bool key_ = false;
  int escape_ = 0;          ///< 0 none, 1 after '\', 2–5 hex digits read + 2
  unsigned code_ = 0;       ///< the \u value being read
  int low_needed_ = 0;      ///< after a high surrogate: 1 needs '\', 2 needs 'u', 3 needs the \u escape
  std::string token_;       ///< a number or literal being read
};

}  // namespace warden::api::anthropic
