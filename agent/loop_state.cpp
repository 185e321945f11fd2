#include "agent/loop_state.h"

namespace warden::agent {

loop_state::repeat loop_state::check_repeat(const std::string& key, const std::string& tool, bool once_per_answer) {
  if (once_per_answer && once_done_.count(tool)) {
    force_final_ = true;
    return repeat::once_spent;
  }
  if (succeeded_.count(key)) {
    if (++repeats_[key] >= 2) force_final_ = true;
    return repeat::already_succeeded;
  }
  return repeat::fresh;
}

void loop_state::note_ran(const std::string& key, const std::string& tool, bool once_per_answer, bool is_error) {
  ran_this_turn_ = true;
  if (is_error) return;
  succeeded_.insert(key);
  if (once_per_answer) once_done_.insert(tool);
}

bool loop_state::end_turn() {
  forced_done_ = true;
  if (ran_this_turn_) {
    ++executed_turns_;
    fruitless_turns_ = 0;
  } else if (++fruitless_turns_ >= 3) {
    force_final_ = true;
  }
  ran_this_turn_ = false;
  const bool unlimited = budget_ >= k_unlimited_tool_calls;
  const bool spent = !force_final_ && !unlimited && executed_turns_ >= budget_;
  if (force_final_ || spent) tools_on_ = false;
  return spent;
}

}  // namespace warden::agent
