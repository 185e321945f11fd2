#include <gtest/gtest.h>

#include "agent/cancel_registry.h"
#include "agent/tool_loop.h"

namespace warden::agent {
namespace {

TEST(CancelRegistry, FindsTokensByKindAndKeyWithATypedReason) {
  cancel_registry reg;
  auto by_id = cancel_token::make();
  auto by_session = cancel_token::make();
  auto r1 = reg.add(cancel_key::cancel_id, "abc", by_id, "");
  auto r2 = reg.add(cancel_key::session_id, "abc", by_session, "");  // same text, other kind

  EXPECT_EQ(reg.cancel(cancel_key::cancel_id, "nope", cancel_reason::by_request), 0u);
  EXPECT_EQ(reg.cancel(cancel_key::cancel_id, "abc", cancel_reason::by_request), 1u);
  EXPECT_TRUE(by_id->cancelled());
  EXPECT_EQ(by_id->why(), cancel_reason::by_request);
  EXPECT_EQ(by_id->reason(), "cancelled by request");
  EXPECT_FALSE(by_session->cancelled());

  EXPECT_EQ(reg.cancel_all(k_shutdown_reason), 2u);
  EXPECT_EQ(by_session->why(), cancel_reason::shutdown);
  EXPECT_EQ(by_session->reason(), "warden is shutting down");
  EXPECT_EQ(by_id->why(), cancel_reason::by_request);  // the first reason stays
}

TEST(CancelRegistry, ARegistrationRemovesItsToken) {
  cancel_registry reg;
  auto t = cancel_token::make();
  {
    auto r = reg.add(cancel_key::session_id, "s", t, "");
  }
  EXPECT_EQ(reg.cancel(cancel_key::session_id, "s", cancel_reason::by_client), 0u);
  EXPECT_FALSE(t->cancelled());
}

TEST(CancelRegistry, AnOwnerStopsOnlyItsOwnTokensAndNoOwnerFilterStopsAll) {
  cancel_registry reg;
  auto alice = cancel_token::make(), bob = cancel_token::make(), single = cancel_token::make();
  auto ra = reg.add(cancel_key::session_id, "s1", alice, "alice");
  auto rb = reg.add(cancel_key::session_id, "s1", bob, "bob");
  auto rs = reg.add(cancel_key::session_id, "s1", single, "");
  EXPECT_EQ(reg.cancel(cancel_key::session_id, "s1", cancel_reason::by_request, "bob"), 1u);
  EXPECT_TRUE(bob->cancelled());
  EXPECT_FALSE(alice->cancelled());
  EXPECT_FALSE(single->cancelled());
  EXPECT_EQ(reg.cancel(cancel_key::session_id, "s1", cancel_reason::by_request, "carol"), 0u);
  EXPECT_EQ(reg.cancel(cancel_key::session_id, "s1", cancel_reason::by_request, ""), 1u);  // the single user's
  EXPECT_TRUE(single->cancelled());
  EXPECT_FALSE(alice->cancelled());
  EXPECT_EQ(reg.cancel(cancel_key::session_id, "s1", cancel_reason::by_request), 3u);  // an admin: every owner's
  EXPECT_TRUE(alice->cancelled());
}

TEST(CancelReason, EachReasonHasItsText) {
  EXPECT_STREQ(describe(cancel_reason::cancelled), "cancelled");
  EXPECT_STREQ(describe(cancel_reason::by_request), "cancelled by request");
  EXPECT_STREQ(describe(cancel_reason::by_client), "cancelled by the client");
  EXPECT_STREQ(describe(cancel_reason::shutdown), "warden is shutting down");
  auto t = cancel_token::make();
  EXPECT_EQ(t->why(), cancel_reason::cancelled);
  t->cancel();
  EXPECT_EQ(t->reason(), "cancelled");
}

}  // namespace
}  // namespace warden::agent
