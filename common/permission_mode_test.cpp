#include <gtest/gtest.h>

#include <string>

#include "common/permission_mode.h"

namespace warden {
namespace {

TEST(PermissionMode, WireNamesRoundTripInLadderOrder) {
  const permission_mode ladder[] = {permission_mode::ask, permission_mode::auto_, permission_mode::off, permission_mode::full};
  const char* names[] = {"ask", "auto", "off", "full"};
  for (int i = 0; i < 4; ++i) {
    EXPECT_STREQ(to_string(ladder[i]), names[i]);
    EXPECT_EQ(parse_permission_mode(names[i]), ladder[i]);
    EXPECT_EQ(static_cast<int>(ladder[i]), i);
  }
  for (const char* bad : {"", "Full", " ask", "bypass", "auto_"}) EXPECT_EQ(parse_permission_mode(bad), std::nullopt) << bad;
}

TEST(PermissionMode, SessionIds) {
  EXPECT_TRUE(valid_session_id("chat-AZaz09_-"));
  EXPECT_TRUE(valid_session_id(std::string(64, 'x')));
  for (const char* bad : {"", "../x", "a/b", "a b", ".", "\xC3\xA9", ".host"}) EXPECT_FALSE(valid_session_id(bad)) << bad;
  EXPECT_FALSE(valid_session_id(std::string(65, 'x')));
}

}  // namespace
}  // namespace warden
