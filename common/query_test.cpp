#include <gtest/gtest.h>

#include "common/query.h"

namespace warden {
namespace {

std::optional<std::string> q(std::string_view query, std::string_view name) {
  auto r = query_param(query, name);
  EXPECT_TRUE(r) << query;
  return r ? *r : std::nullopt;
}

TEST(Query, FindsDecodesAndReportsAbsence) {
  EXPECT_EQ(q("session_id=abc&limit=5", "limit"), "5");
  EXPECT_EQ(q("session_id=abc&limit=5", "session_id"), "abc");
  EXPECT_EQ(q("a=1&a=2", "a"), "1");
  EXPECT_EQ(q("since=2026-12-01T10%3A00%3A00Z", "since"), "2026-12-01T10:00:00Z");
  EXPECT_EQ(q("x=a+b%20c", "x"), "a b c");
  EXPECT_EQ(q("flag&y=", "flag"), "");
  EXPECT_EQ(q("flag&y=", "y"), "");
  EXPECT_EQ(q("session_idx=1", "session_id"), std::nullopt);
  EXPECT_EQ(q("", "a"), std::nullopt);
}

TEST(Query, MalformedEscapesAreErrors) {
  for (auto bad : {"a=%", "a=%4", "a=%G1", "a=x%zz"}) {
    auto r = query_param(bad, "a");
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().param, "a");
  }
  EXPECT_TRUE(query_param("b=%", "a"));  // only the asked parameter is decoded
}

}  // namespace
}  // namespace warden
