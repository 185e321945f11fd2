#include "model/context_fit.h"

#include <gtest/gtest.h>

namespace warden::model {
namespace {

message text_msg(role r, std::string t) {
  message m;
  m.role = r;
  m.content.emplace_back(text_part{std::move(t)});
  return m;
}
message call_msg(std::vector<std::string> ids) {
  message m;
  m.role = role::assistant;
  for (auto& id : ids) m.content.emplace_back(tool_call_part{id, "python", "{}"});
  return m;
}
message result_msg(std::string id) {
  message m;
  m.role = role::tool;
  m.content.emplace_back(tool_result_part{std::move(id), "out", false});
  return m;
}

// system, u1, a1, u2, a2(call c1,c2), t(c1), t(c2), a3, u3, a4, u4(last)
std::vector<message> sample() {
  return {text_msg(role::system, "sys"), text_msg(role::user, "u1"), text_msg(role::assistant, "a1"),
          text_msg(role::user, "u2"),    call_msg({"c1", "c2"}),        result_msg("c1"),
          result_msg("c2"),              text_msg(role::assistant, "a3"), text_msg(role::user, "u3"),
          text_msg(role::assistant, "a4"), text_msg(role::user, "u4")};
}

TEST(ContextFit, PolicyNamesRoundTrip) {
  for (auto p : {overflow_policy::error, overflow_policy::truncate_middle, overflow_policy::truncate_oldest}) {
    EXPECT_EQ(parse_overflow_policy(to_string(p)), p);
  }
  EXPECT_FALSE(parse_overflow_policy("truncate"));
  EXPECT_FALSE(parse_overflow_policy(""));
}

TEST(ContextFit, UnitsAreExchangesAndKeepSystemAndLastTurn) {
  const auto units = fit_units(sample());
  ASSERT_EQ(units.size(), 5u);
  EXPECT_EQ(units[0].messages, (std::vector<std::size_t>{0}));
  EXPECT_FALSE(units[0].droppable);
  EXPECT_EQ(units[1].messages, (std::vector<std::size_t>{1, 2}));
  EXPECT_EQ(units[2].messages, (std::vector<std::size_t>{3, 4, 5, 6, 7}));  // the whole tool-call group
  EXPECT_EQ(units[3].messages, (std::vector<std::size_t>{8, 9}));
  EXPECT_TRUE(units[3].droppable);
  EXPECT_EQ(units[4].messages, (std::vector<std::size_t>{10}));
  EXPECT_FALSE(units[4].droppable);
}

TEST(ContextFit, AToolResultAfterAUserMessageStaysWithItsCall) {
  // An Anthropic-style user text between a call and its result must not split the group.
  std::vector<message> m = {text_msg(role::user, "u1"), call_msg({"c1"}), text_msg(role::user, "note"),
                            result_msg("c1"), text_msg(role::assistant, "a"), text_msg(role::user, "last")};
  const auto units = fit_units(m);
  ASSERT_EQ(units.size(), 2u);
  EXPECT_EQ(units[0].messages, (std::vector<std::size_t>{0, 1, 2, 3, 4}));
  EXPECT_TRUE(units[0].droppable);
}

TEST(ContextFit, TextAfterToolResultsStaysWithThem) {
  // Anthropic: user [tool_result c1, text "and also"] arrives as tool(c1) + user("and also").
  std::vector<message> m = {text_msg(role::user, "u1"), call_msg({"c1"}), result_msg("c1"),
                            text_msg(role::user, "and also"), text_msg(role::assistant, "a"),
                            text_msg(role::user, "u2"), text_msg(role::assistant, "b"), text_msg(role::user, "last")};
  const auto units = fit_units(m);
  ASSERT_EQ(units.size(), 3u);
  EXPECT_EQ(units[0].messages, (std::vector<std::size_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(units[1].messages, (std::vector<std::size_t>{5, 6}));
  EXPECT_FALSE(units[2].droppable);
}

TEST(ContextFit, OldestDropsFromTheStart) {
  const auto msgs = sample();
  std::vector<std::int64_t> w(msgs.size(), 10);
  EXPECT_EQ(choose_drops(msgs, w, overflow_policy::truncate_oldest, 15), (std::vector<std::size_t>{1, 2}));
  EXPECT_EQ(choose_drops(msgs, w, overflow_policy::truncate_oldest, 21), (std::vector<std::size_t>{1, 2, 3, 4, 5, 6, 7}));
}

TEST(ContextFit, MiddleKeepsTheOpeningExchangeUntilLast) {
  const auto msgs = sample();
  std::vector<std::int64_t> w(msgs.size(), 10);
  EXPECT_EQ(choose_drops(msgs, w, overflow_policy::truncate_middle, 15), (std::vector<std::size_t>{3, 4, 5, 6, 7}));
  EXPECT_EQ(choose_drops(msgs, w, overflow_policy::truncate_middle, 60),
            (std::vector<std::size_t>{3, 4, 5, 6, 7, 8, 9}));
  // Everything droppable: the opening exchange goes too, never system or the last turn.
  EXPECT_EQ(choose_drops(msgs, w, overflow_policy::truncate_middle, 1000),
            (std::vector<std::size_t>{1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

TEST(ContextFit, ErrorPolicyAndNothingToShedDropNothing) {
  const auto msgs = sample();
  std::vector<std::int64_t> w(msgs.size(), 10);
  EXPECT_TRUE(choose_drops(msgs, w, overflow_policy::error, 100).empty());
  EXPECT_TRUE(choose_drops(msgs, w, overflow_policy::truncate_oldest, 0).empty());
  std::vector<message> one = {text_msg(role::system, "s"), text_msg(role::user, "only")};
  EXPECT_TRUE(choose_drops(one, {5, 5}, overflow_policy::truncate_oldest, 100).empty());
}

TEST(ContextFit, WithoutRemovesExactlyTheListed) {
  const auto msgs = sample();
  const auto kept = without(msgs, {1, 2, 8});
  ASSERT_EQ(kept.size(), msgs.size() - 3);
  EXPECT_EQ(kept[1].text(), "u2");
  EXPECT_EQ(kept.back().text(), "u4");
}

TEST(ContextFit, MessageCharsCountsEveryPart) {
  EXPECT_EQ(message_chars(text_msg(role::user, "hello")), 5u);
  EXPECT_EQ(message_chars(call_msg({"c1"})), std::string("python{}c1").size());
  EXPECT_EQ(message_chars(result_msg("c9")), std::string("outc9").size());
}

}  // namespace
}  // namespace warden::model
