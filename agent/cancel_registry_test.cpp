#include <gtest/gtest.h>

#include "agent/cancel_registry.h"
#include "agent/tool_loop.h"

namespace warden::agent {
namespace {

TEST(CancelRegistry, FindsTokensByKindAndKeyWithATypedReason) {
  cancel_registry reg;
  auto by_id = cancel_token::make();
  auto by_session = cancel_token::make();
  auto r1 = reg.add(cancel_key::cancel_id, "abc", by_id);
  auto r2 = reg.add(cancel_key::session_id, "abc", by_session);  // same text, other kind

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
    auto r = reg.add(cancel_key::session_id, "s", t);
  }
  EXPECT_EQ(reg.cancel(cancel_key::session_id, "s", cancel_reason::by_client), 0u);
  EXPECT_FALSE(t->cancelled());
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
