// loop_state — what the tool loop remembers between turns, and its rules (reference
// unsloth-studio.md §2.4–§2.6), as a small value the orchestrator asks:
//   - budget: turns that ran at least one tool count against max_tool_calls_per_message; when it
//     is spent, the last tool message gets k_budget_spent and tools go off (one last pass
//     without tools); ≥ k_unlimited_tool_calls = no limit;
//   - fruitless turns: three turns in a row that run nothing → tools off;
//   - forced choice: a tool_choice that obliges a call (a named function or "required") is sent
//     on the first turn only (reverts to the upstream's default once the model made its call,
//     even a denied one), or the model could never answer;
//   - dedupe: a call identical (canonical key) to one that already succeeded is not re-run; the
//     second such repeat turns tools off;
//   - once per answer: a tool with traits.once_per_answer that succeeded refuses further calls
//     and turns tools off;
//   - a call to a tool that is not enabled turns tools off (force_final()).
// Thread-safety: one per loop.
#pragma once

#include <map>
#include <set>
#include <string>

#include "agent/gate.h"

namespace warden::agent {

inline constexpr const char* k_budget_spent =
    "You have used every tool call allowed for this message. Answer now from the results above, "
    "without calling tools.";
inline constexpr const char* k_already_ran = "This exact call already ran successfully; its result is above. Do not repeat it.";

class loop_state {
 public:
  /// `tools_on`: tools offered at all (selection non-empty, budget > 0, tool_choice not "none").
  loop_state(bool tools_on, int budget, bool forced_choice)
      : tools_on_(tools_on && budget > 0), budget_(budget), forced_choice_(forced_choice) {}

  bool tools_on() const { return tools_on_; }
  /// Whether this turn sends the request's tool_choice.
  bool send_tool_choice() const { return !(forced_choice_ && forced_done_); }

  enum class repeat { fresh, already_succeeded, once_spent };
  /// Whether the call may run; counts repeats (and turns tools off at the second repeat or for
  /// a spent once-per-answer tool).
  repeat check_repeat(const std::string& key, const std::string& tool, bool once_per_answer);
  /// Records a call that ran.
  void note_ran(const std::string& key, const std::string& tool, bool once_per_answer, bool is_error);
  /// A call named a tool that is not enabled: the next pass has no tools.
  void force_final() { force_final_ = true; }

  /// The end of a turn that had calls. Returns true when the budget is now spent (the caller
  /// appends k_budget_spent to the last tool message); tools are off afterwards in that case
  /// and when the turn forced a final pass.
  bool end_turn();

  int executed_turns() const { return executed_turns_; }
  int fruitless_turns() const { return fruitless_turns_; }

 private:
  bool tools_on_;
  int budget_;
  bool forced_choice_;
  bool forced_done_ = false;
  bool force_final_ = false;
  bool ran_this_turn_ = false;
  int executed_turns_ = 0;
  int fruitless_turns_ = 0;
  std::set<std::string> succeeded_;
  std::set<std::string> once_done_;
  std::map<std::string, int> repeats_;
};

}  // namespace warden::agent
