// The JSON bracket walker and the scanners built on it (json_util.h).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/json_util.h"

namespace warden {
namespace {

constexpr auto npos = std::string_view::npos;

TEST(JsonWalk, VisitsBracketsOutsideStringsOnly) {
  const std::string text = R"(x{"a":"[}\"{","b\\":[1]}])";
  std::string seen;
  std::vector<std::size_t> at;
  const auto end = walk_json_brackets(text, 0, [&](std::size_t i, char c) {
    seen += c;
    at.push_back(i);
    return true;
  });
  EXPECT_EQ(seen, "{[]}]");
  EXPECT_EQ(at, (std::vector<std::size_t>{1, 20, 22, 23, 24}));
  EXPECT_EQ(end.stopped_at, npos);
  EXPECT_FALSE(end.in_string);
}

TEST(JsonWalk, StopsWhereTheVisitorSaysAndReportsAnOpenString) {
  const auto stop = walk_json_brackets("[[[", 0, [](std::size_t i, char) { return i < 1; });
  EXPECT_EQ(stop.stopped_at, 1u);
  const auto open = walk_json_brackets(R"({"k":"v)", 0, [](std::size_t, char) { return true; });
  EXPECT_TRUE(open.in_string);
  EXPECT_FALSE(open.escaped);
  const auto esc = walk_json_brackets(R"({"k":"v\)", 0, [](std::size_t, char) { return true; });
  EXPECT_TRUE(esc.in_string);
  EXPECT_TRUE(esc.escaped);
  // The walk starts outside any string: `from` must not point into one.
  std::string seen;
  walk_json_brackets(R"("[" [ ])", 3, [&](std::size_t, char c) { return seen += c, true; });
  EXPECT_EQ(seen, "[]");
  seen.clear();
  walk_json_brackets(R"("[" [ ])", 2, [&](std::size_t, char c) { return seen += c, true; });
  EXPECT_EQ(seen, "");  // from the closing quote on, the rest reads as one open string
}

TEST(JsonBalancedEnd, FindsTheCloserOfTheFirstValue) {
  struct row {
    std::string text;
    std::size_t from;
    std::size_t want;
  };
  const row rows[] = {
      {"{}", 0, 2},
      {"[1,[2]] tail", 0, 7},
      {R"({"a":"}"} x)", 0, 9},             // closer inside a string
      {R"({"a":"\"}"} x)", 0, 11},          // escaped quote
      {R"({"a":"\\"} x)", 0, 10},           // escaped backslash, then the real quote
      {R"(say {"x":[1]} more {"y":2})", 0, 13},  // prose before, a second value after
      {R"(say {"x":[1]} more {"y":2})", 13, 26},
      {"]} {}", 0, 5},                      // closers before the first opener are ignored
      {"{]", 0, 2},                         // kinds are not matched
      {"{\"a\":[1,2", 0, npos},             // cut short
      {"{\"a\":\"}", 0, npos},              // cut short inside a string
      {"no brackets", 0, npos},
      {"", 0, npos},
      {"{}", 2, npos},
      {"{}", 7, npos},                      // past the end
  };
  for (const auto& r : rows) EXPECT_EQ(json_balanced_end(r.text, r.from), r.want) << r.text << " from " << r.from;
}

TEST(JsonBalancedEnd, AgreesWithTheParserOnRealDocuments) {
  const std::vector<json> docs = {
      json::object(),
      json::array(),
      {{"name", "f"}, {"arguments", {{"code", "print(\"}]\\\\\")"}, {"n", {1, 2, {{"x", nullptr}}}}}}},
      {{"s", "\xE2\x82\xAC [{\\\""}, {"t", json::array({"\"", "\\", "}"})}},
      json::array({json::array({json::array({json::object({{"deep", true}})})})}),
  };
  for (const auto& d : docs) {
    const std::string text = d.dump();
    EXPECT_EQ(json_balanced_end("call: " + text + " ]} trailing", 0), 6 + text.size()) << text;
    for (std::size_t cut = 0; cut < text.size(); ++cut) {
      EXPECT_EQ(json_balanced_end(text.substr(0, cut)), npos) << text.substr(0, cut);
    }
  }
}

TEST(JsonNestingDepth, SameWalkerSameRules) {
  EXPECT_EQ(json_nesting_depth("", 10), 0u);
  EXPECT_EQ(json_nesting_depth("]]][[", 10), 2u);         // stray closers are ignored
  EXPECT_EQ(json_nesting_depth(R"(["\\", [[]]])", 10), 3u);
  EXPECT_EQ(json_nesting_depth(R"(["\"[[[", [])", 10), 2u);
  EXPECT_EQ(json_nesting_depth("[[[]]][[", 10), 3u);
  EXPECT_EQ(json_nesting_depth(std::string(100, '{'), 0), 1u);  // stops as soon as it exceeds
}

}  // namespace
}  // namespace warden
