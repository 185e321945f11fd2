// loop_guidance — what the tool loop tells the model besides the conversation (reference
// unsloth-studio.md §2.3, §2.6, §2.7), as pure values the loop applies:
//   - the prompt nudge: "The current date is YYYY-MM-DD.", a sentence on calling tools instead
//     of describing them, one tip per tool family the request offers (code: traits.runs_code;
//     web: traits.reads_network; artifact: traits.once_per_answer), and under full access a
//     sentence saying so. Added once per loop to the first system message (or as a new first
//     system message), and kept the same on every turn so llama-server's prompt cache holds.
//   - the tool-error nudge: appended to the model-visible result of a call that ran and failed
//     (the client's tool_end shows the result without it).
//   - act re-prompts: a turn without calls, while tools are on, shorter than
//     k_max_intent_chars, that announces an action ("I'll run…", "Let me check…") gets one user
//     message asking for the call; at most k_reprompts_before_tool before any tool ran in this
//     loop and k_reprompts_after_tool after; never once a call was denied; not when the model
//     restates the text it was re-prompted for. Sign-offs are not intents ("let me know",
//     unsloth #8907).
// Each part can be switched off per request (tool_prompt_nudge, tool_error_nudge,
// act_reprompts) and per server (--no-tool-prompt-nudge, …); with all three off the loop's
// prompts are exactly those of a loop without guidance.
// Thread-safety: pure functions; a reprompt_tracker belongs to one loop.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/conversation.h"
#include "tools/tool.h"

namespace warden::agent {

struct guidance_switches {
  bool prompt_nudge = true;   ///< the system-prompt tool nudge
  bool error_nudge = true;    ///< the tool-error nudge
  bool act_reprompts = true;  ///< re-prompts for a plan without a call
  bool operator==(const guidance_switches&) const = default;
};

inline constexpr const char* k_tool_error_nudge =
    "The tool reported an error. Read it, correct the call (its arguments, code or command) and call the "
    "tool again, or tell the user why it cannot be done.";
inline constexpr const char* k_nudging_status = "Nudging tool calls";
inline constexpr std::size_t k_max_intent_chars = 2000;
inline constexpr int k_reprompts_before_tool = 3;
inline constexpr int k_reprompts_after_tool = 1;

/// The prompt nudge for `tools` (the loop's selected tools, in order) on `date` ("YYYY-MM-DD").
std::string tool_prompt_nudge(std::string_view date, const std::vector<const tools::tool_info*>& tools,
                              bool full_access);

/// Appends `nudge` to the first message when it is a system message with text (after a blank
/// line), else inserts a system message holding it first.
void add_prompt_nudge(std::vector<model::message>& messages, const std::string& nudge);

/// Today's date in UTC as "YYYY-MM-DD".
std::string utc_date_today();

/// True when `text` announces an action it did not take (an intent phrase outside the
/// sign-offs). Case-insensitive; ASCII and typographic apostrophes.
bool announces_intent(std::string_view text);

/// The user message of a re-prompt, naming the tools.
std::string act_reprompt(const std::vector<std::string>& tool_names);

/// The re-prompt rules of one loop.
class reprompt_tracker {
 public:
  /// For a turn that had no calls while tools were on: the re-prompt to send, or nullopt when
  /// the loop should end with this turn as the answer. Counts the re-prompt it returns.
  std::optional<std::string> after_text_turn(std::string_view text, const std::vector<std::string>& tool_names);
  void note_tool_ran() { tool_ran_ = true; }
  void note_denial() { denied_ = true; }
  int sent() const { return before_ + after_; }

 private:
  int before_ = 0;
  int after_ = 0;
  bool tool_ran_ = false;
  bool denied_ = false;
  std::string last_;  ///< the normalised text last re-prompted
};

}  // namespace warden::agent
