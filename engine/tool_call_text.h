// tool_call_text — tool calls a model wrote as text instead of structured calls: the format
// families of reference unsloth-studio.md §2.8 (and llama.cpp's and vLLM's parser lists), each
// a pure parser, and the streaming scanner that finds them in a turn's text.
//
// Families (the opener each block starts with; the name is the one `text_call_families()` gives):
//   hermes        <tool_call>{"name":…,"arguments":{…}}</tool_call>          (Hermes, Qwen 2.5/3)
//   glm           <tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></tool_call> (GLM 4.5–4.7)
//   qwen_xml      <function=NAME><parameter=K>V</parameter></function>, also <function name="…">
//                 and <parameter name="…">, bare or inside <tool_call>               (Qwen3-Coder, 3.5)
//   seed_oss      <seed:tool_call><function=NAME>…</function></seed:tool_call>       (Seed-OSS)
//   minimax       <minimax:tool_call><invoke name="NAME"><parameter name="K">V</parameter></invoke>…
//   llama3_json   <|python_tag|>{"name":…,"parameters":{…}}                           (Llama 3.1)
//   llama3_call   <|python_tag|>NAME.call(k="v", n=1)                                  (Llama 3.1 built-ins)
//   llama32_bare  {"name":…,"parameters"|"arguments":…} as the whole start of the turn  (Llama 3.2)
//   mistral       [TOOL_CALLS] [{…}, …] | [TOOL_CALLS]NAME[ARGS]{…} | [TOOL_CALLS]NAME{…},
//                 with an optional [CALL_ID]ID before [ARGS]                            (Mistral, Magistral)
//   mistral_bare  NAME[ARGS]{…} for a declared NAME                                      (Devstral rehearsal)
//   gemma4        <|tool_call>call:NAME{k:<|"|>v<|"|>,n:1}<tool_call|>                   (Gemma 4)
//   gemma_bare    call:NAME{…} as the whole start of the turn                            (Gemma 4)
//   deepseek      <｜tool▁calls▁begin｜> (and its four spellings with _, space, \_ and the
//                 single-call opener) …<｜tool▁call▁begin｜>[function<｜tool▁sep｜>]NAME…{json}
//                 (R1: NAME then ```json fences; V3/V3.1: NAME<｜tool▁sep｜>{json})     (DeepSeek)
//   kimi_k2       <|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:IDX
//                 <|tool_call_argument_begin|>{json}<|tool_call_end|>…                   (Kimi K2)
//   granite       <|tool_call|>[{"name":…,"arguments":{…}}, …]                           (Granite 3)
//   lfm2          <|tool_call_start|>[NAME(k="v"), …]<|tool_call_end|>                   (LFM2)
//   phi4          functools[{"name":…,"arguments":{…}}, …]                                (Phi-4-mini)
//   apertus       <|tools_prefix|>[{"NAME": {…}}, …]<|tools_suffix|>                     (Apertus)
//
// A closing tag that never came is tolerated (a turn cut short by max_tokens); JSON cut short is
// repaired when it can be (strings and brackets closed). Arguments are always a JSON object's text.
// Thread-safety: pure functions; a scanner belongs to one turn.
#pragma once

#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace warden::engine {

struct text_call {
  std::string name;
  std::string arguments;  ///< a JSON object's text
};

/// A block of call markup in a text: its bytes [begin, end) and the calls it holds (none when
/// it could not be read: it then stays text).
struct call_block {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::vector<text_call> calls;
};

struct text_call_family {
  const char* name;
  /// The openers its blocks start with ("" for the families found by name or at the start).
  std::vector<std::string_view> openers;
  /// The block that starts at `at` in `text` (at an opener, a declared name or the turn's start);
  /// nullopt when the text there is not this family's markup.
  std::optional<call_block> (*parse)(std::string_view text, std::size_t at);
};

/// Every family, in the order they are tried at one position.
const std::vector<text_call_family>& text_call_families();

/// Closes an unterminated string and any open arrays/objects of JSON cut short; nullopt when the
/// text is not the beginning of a JSON value.
std::optional<std::string> repair_truncated_json(std::string_view text);

/// What a healed text is: pieces of text that stay text, and calls, in order.
struct healed_piece {
  std::string text;                ///< when !call
  std::optional<text_call> call;
};

/// Splits `text` into text and the calls of blocks whose every call names a `declared` tool; the
/// markup of those blocks is removed and nothing else. Blocks naming anything else, and markup
/// inside ``` fenced code (an example, not a call), stay text as written. `at_start`: `text` is
/// the whole turn's text (the start-anchored families apply).
std::vector<healed_piece> heal_text(std::string_view text, const std::set<std::string>& declared, bool at_start);

/// Finds call markup in a streamed turn's text. feed() returns the text that is safe to show now:
/// only a possible opener's prefix at the end is held back (at most the longest opener less one
/// byte), except at the turn's start, where text that may be a start-anchored call (bare JSON,
/// `call:`) is held while it can be one (at most k_max_bare_call bytes). Once an opener appears,
/// the rest of the turn is held; finish() heals it (heal_text).
/// Whether text so far is inside fenced code: a line whose first characters (after spaces and
/// tabs) are three backticks opens a fence and the next such line closes it, as heal_text reads
/// fences. Fed piece by piece; pure state.
struct fence_state {
  bool open = false;
  bool line_lead = true;  ///< only spaces and tabs since the line began
  int ticks = 0;          ///< backticks at the line's lead
  void feed(std::string_view text);
};

class text_call_scanner {
 public:
  /// Longest start-anchored call held before it is shown as text (the reference's 16,384).
  static constexpr std::size_t k_max_bare_call = 16384;

  explicit text_call_scanner(std::set<std::string> declared);
  std::string feed(std::string_view content);
  std::vector<healed_piece> finish();
  /// What is held, as the model wrote it, and the scanner is emptied (a turn that is not to be
  /// healed after all).
  std::string held_text();
  /// True once an opener was seen (the rest of the turn is held).
  bool draining() const { return draining_; }

 private:
  std::size_t opener_at(std::string_view buf, bool& found) const;
  std::set<std::string> declared_;
  std::vector<std::string> openers_;  ///< fixed openers and NAME[ARGS] for the declared names
  std::string pending_;               ///< held back: a possible opener's prefix, or a possible bare call
  std::string held_;                  ///< from the opener on
  std::string last_shown_;            ///< the last byte shown (name boundaries), or ""
  fence_state shown_fence_;           ///< of the text shown: an opener in fenced code is an example
  bool at_start_ = true;              ///< nothing but white space shown yet
  bool held_at_start_ = false;        ///< held_ is the turn's whole text
  bool draining_ = false;
};

}  // namespace warden::engine
