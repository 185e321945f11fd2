// text_tool_calls — tool calls a model wrote as text instead of structured `tool_calls`
// (reference unsloth-studio.md §2.8). One parser per format, each a pure function over the
// text that starts at the format's marker (possibly cut short by max_tokens):
//   hermes   <tool_call>{"name":…,"arguments":{…}}</tool_call>   (Qwen, Hermes; repeated blocks)
//            <tool_call><function=NAME><parameter=K>V</parameter></function></tool_call>
//   qwen_xml <function=NAME><parameter=K>V</parameter></function>  (Qwen3 coder style)
//   mistral  [TOOL_CALLS] [{"name":…,"arguments":…}, …]  |  [TOOL_CALLS]NAME[ARGS]{…}  |  [TOOL_CALLS]NAME{…}
//   llama3   <|python_tag|>{"name":…,"parameters":{…}}
// Missing closing tags and JSON cut short are repaired when possible (strings and brackets
// closed); what cannot be repaired becomes a call whose `arguments` is not valid JSON, so the
// loop reports a tool error to the model. Markup never reaches the user's text.
//
// text_call_scanner strips calls from streamed content: feed() returns the text that is safe to
// show now (a possible marker prefix at the end is held back), and once a marker appears the
// rest of the turn is held; finish() parses what was held.
// Thread-safety: pure functions; a scanner belongs to one turn.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace warden::agent {

struct text_call {
  std::string name;       ///< "" when the markup had no readable name
  std::string arguments;  ///< JSON text of the arguments (may be invalid when it could not be repaired)
};

struct text_call_format {
  const char* name;
  std::string_view marker;
  std::vector<text_call> (*parse)(std::string_view from_marker);
};

/// Every supported format, in detection order.
const std::vector<text_call_format>& text_call_formats();

/// Closes an unterminated string and any open arrays/objects of JSON cut short; nullopt when the
/// text is not the beginning of a JSON value.
std::optional<std::string> repair_truncated_json(std::string_view text);

class text_call_scanner {
 public:
  /// Text to show now.
  std::string feed(std::string_view content);
  struct outcome {
    std::string text;               ///< held-back text that turned out not to be a marker
    std::vector<text_call> calls;
  };
  /// End of the turn.
  outcome finish();
  /// True once a marker was seen (the rest of the turn is held).
  bool draining() const { return format_ != nullptr; }

 private:
  std::string pending_;  ///< possible marker prefix at the end of the shown text
  std::string held_;     ///< from the marker on
  const text_call_format* format_ = nullptr;
};

}  // namespace warden::agent
