// Owners in the store (schema version 5, issue 22 part 3): audit rows, remembered rules and
// stored responses keep the API key name that made them; rows from before read back as "".
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/testing/temp_dir.h"
#include "store/call_records.h"
#include "store/database.h"
#include "store/permission_rules_store.h"
#include "store/responses_store.h"
#include "store/testing/database.h"

namespace warden::store {
namespace {

using testing::must_open;
using testing::must_open_memory;

/// The schema steps up to `version` (1-based).
std::span<const migration> up_to(int version) {
  const auto all = k_migrations();
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i].version == version) return all.first(i + 1);
  }
  ADD_FAILURE() << "no migration " << version;
  return all;
}

call_record row_of(const std::string& call_id, const std::string& owner, const std::string& session = "s1") {
  call_record r;
  r.call_id = call_id;
  r.session_id = session;
  r.owner = owner;
  r.tool = "terminal";
  r.arguments = R"({"command":"ls"})";
  return r;
}

std::vector<std::string> call_ids(const result<std::vector<std::pair<std::int64_t, call_record>>>& rows) {
  std::vector<std::string> out;
  if (!rows) {
    ADD_FAILURE() << rows.error().message;
    return out;
  }
  for (const auto& [id, r] : *rows) out.push_back(r.call_id + "/" + r.owner);
  return out;
}

using strings = std::vector<std::string>;

TEST(Owners, AuditRowsKeepTheirOwnerAndListFiltersByIt) {
  auto db = must_open_memory();
  ASSERT_TRUE(db);
  call_log log(*db);
  call_record opened = row_of("c1", "alice");
  opened.status = "pending";  // written before it runs (rows move forward only: store/call_records.h)
  auto first = log.insert(opened);
  ASSERT_TRUE(first);
  ASSERT_TRUE(log.insert(row_of("c2", "bob")));
  ASSERT_TRUE(log.insert(row_of("c3", "alice", "s2")));
  ASSERT_TRUE(log.insert(row_of("c4", "")));
  audit_query q;
  EXPECT_EQ(call_ids(log.list(q)), (strings{"c1/alice", "c2/bob", "c3/alice", "c4/"}));
  q.owner = "alice";
  EXPECT_EQ(call_ids(log.list(q)), (strings{"c1/alice", "c3/alice"}));
  q.session_id = "s2";
  EXPECT_EQ(call_ids(log.list(q)), strings{"c3/alice"});
  q.session_id.clear();
  q.owner = "";
  EXPECT_EQ(call_ids(log.list(q)), strings{"c4/"});
  q.owner = "carol";
  EXPECT_TRUE(call_ids(log.list(q)).empty());
  // update() keeps (and may set) the owner
  call_record done = row_of("c1", "alice");
  done.allowed = true;
  ASSERT_TRUE(log.update(*first, done));
  q.owner = "alice";
  q.limit = 1;
  EXPECT_EQ(call_ids(log.list(q)), strings{"c1/alice"});
}

TEST(Owners, RulesAndResponsesKeepTheirOwner) {
  auto db = must_open_memory();
  ASSERT_TRUE(db);
  rule_store rules(*db);
  stored_rule rule;
  rule.id = "rule_a";
  rule.scope = "always";
  rule.tool = "terminal";
  rule.owner = "alice";
  ASSERT_TRUE(rules.insert(rule));
  auto listed = rules.list();
  ASSERT_TRUE(listed);
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].owner, "alice");

  response_store responses(*db);
  stored_response r;
  r.id = "resp_a";
  r.status = "completed";
  r.response_json = "{}";
  r.owner = "alice";
  ASSERT_TRUE(responses.put(r));
  r.status = "cancelled";  // an upsert keeps every column, the owner too
  ASSERT_TRUE(responses.put(r));
  auto got = responses.get("resp_a");
  ASSERT_TRUE(got && *got);
  EXPECT_EQ((**got).owner, "alice");
  EXPECT_EQ((**got).status, "cancelled");
}

TEST(Owners, RowsFromBeforeOwnersReadBackAsTheSingleUsers) {
  warden::testing::temp_dir t;
  const std::string path = t.path + "/warden.db";
  {
    auto db = must_open(path, up_to(3));
    ASSERT_TRUE(db);
    ASSERT_TRUE(db->with_connection([](connection& c) {
      return c.exec(
          "INSERT INTO call_records (call_id, session_id, tool, arguments, decision, decided_by, allowed, approval_id,"
          " reason, started_unix_ms, finished_unix_ms, duration_ms, is_error, output_bytes)"
          " VALUES ('c_old', 's1', 'terminal', '{}', 'run', 'policy', 1, '', '', 1, 2, 1, 0, 0);"
          "INSERT INTO permission_rules (id, scope, session_id, tool, created_unix_ms, expires_unix_ms)"
          " VALUES ('rule_old', 'always', '', 'terminal', 1, 0);"
          "INSERT INTO responses (id, created_at, updated_at, status, background, response_json, input_items_json,"
          " conversation_json) VALUES ('resp_old', 1, 1, 'completed', 0, '{}', '[]', '[]');");
    }));
  }
  auto db = must_open(path);
  ASSERT_TRUE(db);
  EXPECT_GE(*db->schema_version(), 4);
  call_log log(*db);
  audit_query q;
  q.owner = "";
  EXPECT_EQ(call_ids(log.list(q)), strings{"c_old/"});
  auto rules = rule_store(*db).list();
  ASSERT_TRUE(rules);
  ASSERT_EQ(rules->size(), 1u);
  EXPECT_EQ((*rules)[0].owner, "");
  response_store responses(*db);
  auto old = responses.get("resp_old");
  ASSERT_TRUE(old && *old);
  EXPECT_EQ((**old).owner, "");
  ASSERT_TRUE(log.insert(row_of("c_new", "bob")));
  q.owner = "bob";
  EXPECT_EQ(call_ids(log.list(q)), strings{"c_new/bob"});
}

}  // namespace
}  // namespace warden::store
