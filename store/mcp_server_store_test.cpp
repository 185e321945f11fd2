// mcp_server_store (mcp_server_store.h): the MCP registry's table, and schema step 9 on a
// database written by the previous version.
#include "store/mcp_server_store.h"

#include <gtest/gtest.h>

#include "common/testing/temp_dir.h"
#include "store/knowledge_base.h"
#include "store/testing/database.h"

namespace warden::store {
namespace {

using testing::must_open;
using testing::must_open_memory;
using testing::query_text;
using warden::testing::temp_dir;

stored_mcp_server row(std::string id, std::string config = R"({"command":"npx"})", std::int64_t t = 100) {
  return stored_mcp_server{std::move(id), "alice", std::move(config), t, t};
}

struct mcp_store : ::testing::Test {
  std::unique_ptr<database> db = must_open_memory();
  mcp_server_store store{*db};
};

TEST_F(mcp_store, InsertFindListInIdOrder) {
  ASSERT_TRUE(store.insert(row("zeta")).ok());
  ASSERT_TRUE(store.insert(row("alpha", "{\"q\":\"it's \\\"quoted\\\"\"}")).ok());
  ASSERT_TRUE(store.insert(row("mid")).ok());
  auto all = store.list();
  ASSERT_TRUE(all.ok()) << all.error().message;
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].id, "alpha");
  EXPECT_EQ((*all)[1].id, "mid");
  EXPECT_EQ((*all)[2].id, "zeta");
  auto one = store.find("alpha");
  ASSERT_TRUE(one.ok() && one->has_value());
  EXPECT_EQ(**one, row("alpha", "{\"q\":\"it's \\\"quoted\\\"\"}"));
  EXPECT_FALSE(store.find("nope")->has_value());
}

TEST_F(mcp_store, InsertingAnExistingIdIsAnError) {
  ASSERT_TRUE(store.insert(row("gh")).ok());
  auto again = store.insert(row("gh", "{}"));
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, errc::invalid_request);
  EXPECT_EQ(again.error().message, "an MCP server with id gh exists");
  EXPECT_EQ(again.error().param, "id");
  EXPECT_EQ(store.find("gh")->value().config_json, R"({"command":"npx"})");  // unchanged
}

TEST_F(mcp_store, UpdateKeepsOwnerAndCreated) {
  ASSERT_TRUE(store.insert(row("gh")).ok());
  stored_mcp_server changed{"gh", "bob", R"({"url":"https://h/"})", 999, 500};
  auto updated = store.update(changed);
  ASSERT_TRUE(updated.ok());
  EXPECT_TRUE(*updated);
  auto now = store.find("gh")->value();
  EXPECT_EQ(now.config_json, R"({"url":"https://h/"})");
  EXPECT_EQ(now.owner, "alice");
  EXPECT_EQ(now.created_unix_ms, 100);
  EXPECT_EQ(now.updated_unix_ms, 500);
  auto missing = store.update(row("nope"));
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(*missing);
  EXPECT_FALSE(store.find("nope")->has_value());
}

TEST_F(mcp_store, RemoveSaysWhetherThereWasOne) {
  ASSERT_TRUE(store.insert(row("gh")).ok());
  EXPECT_TRUE(*store.remove("gh"));
  EXPECT_FALSE(*store.remove("gh"));
  EXPECT_TRUE(store.list()->empty());
}

TEST(mcp_server_migration, PreviousVersionGainsTheTableAndKeepsItsRows) {
  temp_dir t;
  const std::string path = t.path + "/warden.db";
  const auto all = k_migrations();
  ASSERT_GE(all.back().version, 9);
  std::size_t before = 0;
  while (all[before].version < 9) ++before;
  {
    auto db = must_open(path, all.first(before));
    ASSERT_TRUE(db);
    EXPECT_EQ(*db->schema_version(), 8);
    EXPECT_EQ(query_text(*db, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'mcp_servers'"), "0");
    knowledge_base_store kb(*db);
    ASSERT_TRUE(kb.create_kb("kb_old", "notes", "", 1).ok());
  }
  auto db = must_open(path);
  ASSERT_TRUE(db);
  EXPECT_EQ(*db->schema_version(), all.back().version);
  EXPECT_TRUE(knowledge_base_store(*db).get_kb("kb_old")->has_value());
  mcp_server_store store(*db);
  ASSERT_TRUE(store.insert(row("fs")).ok());
  EXPECT_EQ(store.list()->size(), 1u);
}

}  // namespace
}  // namespace warden::store
