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

TEST(JsonCheckingKeys, FindsTheFirstRepeatedKeyAtAnyDepthAndOnlyThere) {
  EXPECT_EQ(parse_json_checking_keys(R"({"a":1,"a":2})").duplicate_key, "a");
  EXPECT_EQ(parse_json_checking_keys(R"({"m":[{"role":"u","x":{"k":1,"k":2}}],"z":1,"z":2})").duplicate_key, "k");
  // the same key in sibling or nested objects is not a repeat
  const auto fine = parse_json_checking_keys(R"({"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}],"c":{"a":3}})");
  EXPECT_TRUE(fine.ok());
  EXPECT_EQ(fine.duplicate_key, "");
  EXPECT_EQ(fine.value["c"]["a"], 3);
  // a repeat after an inner object closed, in the outer object
  EXPECT_EQ(parse_json_checking_keys(R"({"a":{"b":1},"b":2,"a":3})").duplicate_key, "a");
  EXPECT_FALSE(parse_json_checking_keys(R"({"a":{"b":1},"b":2,"a":3})").ok());
  // an object with many keys (the hash-set path) still finds its repeat, and only that one
  std::string wide = "{";
  for (int i = 0; i < 100; ++i) wide += "\"k" + std::to_string(i) + "\":" + std::to_string(i) + ",";
  EXPECT_TRUE(parse_json_checking_keys(wide.substr(0, wide.size() - 1) + "}").ok());
  EXPECT_EQ(parse_json_checking_keys(wide + "\"k57\":0}").duplicate_key, "k57");
  EXPECT_EQ(parse_json_checking_keys(wide + "\"k5\":{\"k5\":1}}").duplicate_key, "k5");
}

TEST(JsonCheckingKeys, CountsValuesAndStopsPastTheCap) {
  EXPECT_TRUE(parse_json_checking_keys("[1,2,3]", 4).ok());          // the array and three numbers
  const auto over = parse_json_checking_keys("[1,2,3,4]", 4);
  EXPECT_TRUE(over.too_many_elements);
  EXPECT_FALSE(over.ok());
  EXPECT_TRUE(parse_json_checking_keys(R"({"a":{"b":null}})", 3).ok());
  EXPECT_TRUE(parse_json_checking_keys(R"({"a":{"b":null}})", 2).too_many_elements);
  // a long array parses whole and right (linear path; timing lives in make bench)
  std::string big = "{\"messages\":[";
  for (int i = 0; i < 200000; ++i) big += std::string(i ? "," : "") + R"({"role":"user","content":"w"})";
  big += "]}";
  const auto parsed = parse_json_checking_keys(big);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed.value["messages"].size(), 200000u);
  EXPECT_FALSE(parse_json_checking_keys(big, 600000).ok());  // 1 + 1 + 200,000 × 3 values
  EXPECT_TRUE(parse_json_checking_keys(big, 600002).ok());
}

TEST(JsonCheckingKeys, SaysWhereTheTextStopsBeingJson) {
  EXPECT_EQ(parse_json_checking_keys(R"({"a":1,})").syntax_error, " at byte 8");
  EXPECT_EQ(parse_json_checking_keys(R"({"a":1e400})").syntax_error, ": a number is too large");
  EXPECT_FALSE(parse_json_checking_keys(R"({"a":)").ok());
  EXPECT_NE(parse_json_checking_keys(R"({"a":)").syntax_error, "");
  // invalid JSON after a repeat: both are reported, the caller answers invalid_json first
  const auto both = parse_json_checking_keys(R"({"a":1,"a":2,})");
  EXPECT_EQ(both.duplicate_key, "a");
  EXPECT_NE(both.syntax_error, "");
  EXPECT_EQ(parse_json_checking_keys("{} {}").syntax_error, " at byte 4");
}

}  // namespace
}  // namespace warden
