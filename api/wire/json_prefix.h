// json_prefix — follows tool-call arguments as they stream in: how much of them can be sent as
// input_json_delta now, and how to close what was sent into one JSON object. The Anthropic
// stream sends a call's arguments as fragments the client concatenates and parses (the SDKs
// also parse every partial buffer); a model can write arguments that are not a JSON object (an
// array, cut-off or malformed text, a lone surrogate escape). api/anthropic/stream_render.h sends only the
// text up to the last *safe point* and ends the block with closing(), so what a client
// reassembles always parses, to the same object the non-streaming answer holds, and nothing is
// invented beyond closing a cut-off string value and the open brackets.
// Rules: RFC 8259 syntax; the top level must be an object; at most 128 levels of nesting (the
// SDKs' partial parsers give up near 200); numbers must fit a double; \u escapes must pair
// surrogates; raw control characters in strings are refused. The first character that breaks
// these ends the call's arguments: nothing after it is accepted (so later text is never spliced
// onto an earlier part).
// Safe points: after `{` or `[`, after a complete value (and a following `}`/`]`), and inside a
// string value outside an escape. Between them (a key and its colon, a number or literal, an
// escape, a comma) text is held back, and dropped if the arguments end there.
// closing(): from the last safe point: `"` for an open string value, then the open brackets;
// "{}" when no `{` was reached; "" when the object is complete.
// Thread-safety: a value type.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace warden::api::wire {

class json_object_prefix {
 public:
  /// Accepts the longest start of `text` that keeps the arguments valid; returns how many bytes.
  /// After a refused byte the arguments are over: later calls accept nothing.
  std::size_t feed(std::string_view text);
  /// Bytes accepted so far up to the last safe point (what may be sent).
  std::size_t safe_length() const { return safe_length_; }
  /// What closes the text up to the last safe point into a valid JSON object.
  std::string closing() const;
  /// One whole object was accepted (trailing whitespace allowed).
  bool complete() const { return safe_.want == expect::done; }

  static constexpr std::size_t k_max_depth = 128;

 private:
  enum class expect { start, key_or_close, key, colon, value, value_or_close, comma_or_close, done };
  struct state {
    std::vector<char> stack;
    expect want = expect::start;
    bool string = false;
    bool key = false;
    int escape = 0;        ///< 0 none, 1 after '\', 2–5: hex digits read + 2
    unsigned code = 0;     ///< the \u value being read
    int low_needed = 0;    ///< after a high surrogate: 1 needs '\', 2 needs 'u' + a low surrogate
    std::string token;     ///< a number or literal being read
  };
  bool step(char c);
  bool outside(char c);
  bool in_string(char c);
  bool in_token(char c);
  bool finish_token();
  void value_done();
  bool safe() const;

  state s_;                      ///< after every accepted byte
  state safe_;                   ///< at the last safe point
  std::size_t fed_ = 0;          ///< bytes accepted
  std::size_t safe_length_ = 0;  ///< bytes accepted up to the last safe point
  bool over_ = false;            ///< a byte was refused
};

}  // namespace warden::api::wire
