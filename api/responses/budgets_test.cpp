// The Responses budgets (budgets.h): history toward the body limit, stored-bytes quotas, the
// background-run caps.
#include "api/responses/budgets.h"

#include <gtest/gtest.h>

#include "store/testing/database.h"

namespace warden::api::responses {
namespace {

TEST(ResponsesBudgets, HistoryCountsTowardTheBodyLimit) {
  responses_limits l;
  l.max_body_bytes = 1000;
  EXPECT_FALSE(check_history(l, 600, 400, "resp_p"));
  auto e = check_history(l, 600, 401, "resp_p");
  ASSERT_TRUE(e);
  EXPECT_EQ(http_status(e->code), 413);
  EXPECT_EQ(e->type_code, "request_too_large");
  EXPECT_EQ(e->param, "previous_response_id");
  EXPECT_NE(e->message.find("resp_p"), std::string::npos);
  EXPECT_NE(e->message.find("401 bytes"), std::string::npos);
  EXPECT_NE(e->message.find("--max-body"), std::string::npos);
  l.max_body_bytes = 0;  // none
  EXPECT_FALSE(check_history(l, 600, 1 << 30, "resp_p"));
}

store::stored_response row(std::string id, std::string owner, std::string session, std::size_t bytes) {
  store::stored_response r;
  r.id = std::move(id);
  r.status = "completed";
  r.owner = std::move(owner);
  r.session = std::move(session);
  r.response_json = std::string(bytes - 2, 'x');  // + input_items "[]" and conversation "[]" = bytes + 2
  return r;
}

TEST(ResponsesBudgets, StoredBytesStayWithinTheTotalAndTheSessionQuota) {
  auto db = store::testing::must_open_memory();
  ASSERT_TRUE(db);
  store::response_store st(*db);
  ASSERT_TRUE(st.put(row("resp_1", "alice", "s1", 500)).ok());  // 502 bytes
  ASSERT_TRUE(st.put(row("resp_2", "bob", "s1", 300)).ok());    // 302 bytes
  responses_limits l;
  l.max_stored_bytes = 1000;
  l.max_session_stored_bytes = 600;
  EXPECT_FALSE(check_storage(l, st, 96, "alice", "s1"));  // 502 + 96 ≤ 600, 804 + 96 ≤ 1000
  auto session = check_storage(l, st, 99, "alice", "s1");
  ASSERT_TRUE(session);
  EXPECT_EQ(http_status(session->code), 429);
  EXPECT_EQ(session->type_code, "storage_quota_exceeded");
  EXPECT_NE(session->message.find("--responses-session-quota"), std::string::npos);
  EXPECT_FALSE(check_storage(l, st, 196, "carol", "s9"));  // another session: only the total counts
  auto total = check_storage(l, st, 197, "carol", "s9");
  ASSERT_TRUE(total);
  EXPECT_NE(total->message.find("--responses-quota"), std::string::npos);
  EXPECT_NE(total->message.find("DELETE /v1/responses/{id}"), std::string::npos);
  l.max_stored_bytes = 0;
  l.max_session_stored_bytes = 0;
  EXPECT_FALSE(check_storage(l, st, 1 << 30, "alice", "s1"));
}

TEST(ResponsesBudgets, BackgroundRunsAreCappedInAllAndPerSession) {
  run_registry runs;
  responses_limits l;
  l.max_background_runs = 3;
  l.max_session_background_runs = 2;
  auto a = runs.start("resp_a", "alice", "s1");
  EXPECT_FALSE(check_background_runs(l, runs, "alice", "s1"));
  auto b = runs.start("resp_b", "alice", "s1");
  auto mine = check_background_runs(l, runs, "alice", "s1");
  ASSERT_TRUE(mine);
  EXPECT_EQ(http_status(mine->code), 429);
  EXPECT_EQ(mine->type_code, "too_many_background_runs");
  EXPECT_NE(mine->message.find("--session-background-runs"), std::string::npos);
  EXPECT_FALSE(check_background_runs(l, runs, "bob", "s1"));    // another key's session
  EXPECT_FALSE(check_background_runs(l, runs, "alice", "s2"));  // another session
  auto c = runs.start("resp_c", "bob", "s1");
  auto all = check_background_runs(l, runs, "carol", "s3");
  ASSERT_TRUE(all);
  EXPECT_NE(all->message.find("--background-runs"), std::string::npos);
  runs.end("resp_a");  // a run that ends frees its place
  EXPECT_FALSE(check_background_runs(l, runs, "alice", "s1"));
}

}  // namespace
}  // namespace warden::api::responses
