#include <gtest/gtest.h>

#include "agent/loop_state.h"

namespace warden::agent {
namespace {

TEST(LoopState, BudgetCountsTurnsThatRanAndTurnsToolsOff) {
  loop_state s(true, 2, false);
  ASSERT_TRUE(s.tools_on());
  s.note_ran("python:{}", "python", false, false);
  EXPECT_FALSE(s.end_turn());
  EXPECT_TRUE(s.tools_on());
  s.note_ran("python:{\"a\":1}", "python", false, true);  // an error still counts as a run
  EXPECT_TRUE(s.end_turn());                              // spent: the caller adds the notice
  EXPECT_FALSE(s.tools_on());
  EXPECT_EQ(s.executed_turns(), 2);
}

TEST(LoopState, ZeroBudgetMeansNoToolsAndUnlimitedNeverSpends) {
  EXPECT_FALSE(loop_state(true, 0, false).tools_on());
  EXPECT_FALSE(loop_state(false, 25, false).tools_on());
  loop_state s(true, k_unlimited_tool_calls, false);
  for (int i = 0; i < 50; ++i) {
    s.note_ran("k" + std::to_string(i), "python", false, false);
    EXPECT_FALSE(s.end_turn());
  }
  EXPECT_TRUE(s.tools_on());
}

TEST(LoopState, ThreeFruitlessTurnsInARowEndTools) {
  loop_state s(true, 25, false);
  EXPECT_FALSE(s.end_turn());
  EXPECT_FALSE(s.end_turn());
  EXPECT_TRUE(s.tools_on());
  s.note_ran("k", "python", false, false);  // a productive turn resets the count
  EXPECT_FALSE(s.end_turn());
  EXPECT_EQ(s.fruitless_turns(), 0);
  s.end_turn();
  s.end_turn();
  EXPECT_TRUE(s.tools_on());
  EXPECT_FALSE(s.end_turn());  // the third in a row: tools off, but no budget notice
  EXPECT_FALSE(s.tools_on());
}

TEST(LoopState, ForcedChoiceIsSentOnTheFirstTurnOnly) {
  loop_state named(true, 25, true);
  EXPECT_TRUE(named.send_tool_choice());
  named.end_turn();  // even a turn whose call was denied
  EXPECT_FALSE(named.send_tool_choice());
  loop_state plain(true, 25, false);
  plain.end_turn();
  EXPECT_TRUE(plain.send_tool_choice());  // "auto" stays
}

TEST(LoopState, DedupeRefusesRepeatsOfSuccessesAndEndsToolsAtTheSecond) {
  loop_state s(true, 25, false);
  EXPECT_EQ(s.check_repeat("python:{}", "python", false), loop_state::repeat::fresh);
  s.note_ran("python:{}", "python", false, false);
  EXPECT_EQ(s.check_repeat("python:{}", "python", false), loop_state::repeat::already_succeeded);
  s.end_turn();
  EXPECT_TRUE(s.tools_on());
  EXPECT_EQ(s.check_repeat("python:{}", "python", false), loop_state::repeat::already_succeeded);
  s.end_turn();
  EXPECT_FALSE(s.tools_on());
  // A failed call may be retried as often as the model likes.
  loop_state f(true, 25, false);
  f.note_ran("python:{}", "python", false, true);
  EXPECT_EQ(f.check_repeat("python:{}", "python", false), loop_state::repeat::fresh);
}

TEST(LoopState, OncePerAnswerToolsAndForcedFinal) {
  loop_state s(true, 25, false);
  s.note_ran("render_html:{\"code\":\"a\"}", "render_html", true, false);
  EXPECT_EQ(s.check_repeat("render_html:{\"code\":\"b\"}", "render_html", true), loop_state::repeat::once_spent);
  s.end_turn();
  EXPECT_FALSE(s.tools_on());
  loop_state n(true, 25, false);
  n.force_final();  // a call to a tool that is not enabled
  EXPECT_FALSE(n.end_turn());
  EXPECT_FALSE(n.tools_on());
}

}  // namespace
}  // namespace warden::agent
