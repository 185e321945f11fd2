// provider_store (provider_store.h) and sealed_secret (sealed_secret.h): the providers' table,
// schema step 10 on a database of the previous version, and keys sealed at rest.
#include "store/provider_store.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "common/testing/temp_dir.h"
#include "store/mcp_server_store.h"
#include "store/sealed_secret.h"
#include "store/testing/database.h"

namespace warden::store {
namespace {

using testing::must_open;
using testing::must_open_memory;
using testing::query_text;
using warden::testing::temp_dir;

TEST(ProviderStore, KeepsRowsApartFromTheMcpRegistry) {
  auto db = must_open_memory();
  provider_store providers(*db);
  mcp_server_store mcp(*db);
  ASSERT_TRUE(providers.insert({"oa", "", R"({"provider_type":"openai"})", 1, 1}).ok());
  ASSERT_TRUE(mcp.insert({"oa", "", R"({"command":"x"})", 1, 1}).ok());  // another table: no clash
  auto again = providers.insert({"oa", "", "{}", 2, 2});
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().type_code, "provider_exists");
  EXPECT_EQ(again.error().message, "a provider with id oa exists");
  EXPECT_EQ((*providers.find("oa"))->config_json, R"({"provider_type":"openai"})");
  EXPECT_TRUE(*providers.update({"oa", "", R"({"provider_type":"vllm"})", 0, 5}));
  auto row = *providers.find("oa");
  EXPECT_EQ(row->config_json, R"({"provider_type":"vllm"})");
  EXPECT_EQ(row->created_unix_ms, 1);
  EXPECT_EQ(row->updated_unix_ms, 5);
  EXPECT_TRUE(*providers.remove("oa"));
  EXPECT_FALSE(*providers.remove("oa"));
  EXPECT_EQ(mcp.list()->size(), 1u);
}

TEST(ProviderStore, StepTenAddsTheTableAndKeepsEarlierRows) {
  temp_dir t;
  const std::string path = t.path + "/warden.db";
  const auto all = k_migrations();
  ASSERT_GE(all.back().version, 10);
  std::size_t before = 0;
  while (all[before].version < 10) ++before;
  {
    auto db = must_open(path, all.first(before));
    ASSERT_TRUE(db);
    EXPECT_EQ(query_text(*db, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'providers'"), "0");
    ASSERT_TRUE(mcp_server_store(*db).insert({"fs", "", "{}", 1, 1}).ok());
  }
  auto db = must_open(path);
  ASSERT_TRUE(db);
  EXPECT_EQ(*db->schema_version(), all.back().version);
  EXPECT_EQ(mcp_server_store(*db).list()->size(), 1u);
  EXPECT_TRUE(provider_store(*db).insert({"p", "", "{}", 1, 1}).ok());
}

TEST(SealedSecret, RoundTripsAndRefusesTamperingOrAnotherKey) {
  temp_dir t;
  const std::string path = t.path + "/seal.key";
  auto key = load_or_create_seal_key(path);
  ASSERT_TRUE(key.ok()) << key.error().message;
  EXPECT_EQ(key->size(), k_seal_key_bytes);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(*load_or_create_seal_key(path), *key);  // read back, not made again
  auto sealed = seal_secret(*key, "sk-live-0123456789");
  ASSERT_TRUE(sealed.ok());
  EXPECT_EQ(sealed->rfind("v1:", 0), 0u);
  EXPECT_EQ(sealed->find("sk-live"), std::string::npos);
  EXPECT_NE(*seal_secret(*key, "sk-live-0123456789"), *sealed);  // a fresh nonce each time
  EXPECT_EQ(*open_secret(*key, *sealed), "sk-live-0123456789");
  std::string bent = *sealed;
  bent[bent.size() - 3] = bent[bent.size() - 3] == '0' ? '1' : '0';
  EXPECT_FALSE(open_secret(*key, bent).ok());
  std::string other(k_seal_key_bytes, 'k');
  EXPECT_FALSE(open_secret(other, *sealed).ok());
  EXPECT_FALSE(open_secret(*key, "sk-not-sealed").ok());
  EXPECT_FALSE(open_secret(*key, sealed->substr(0, 20)).ok());
  EXPECT_EQ(*open_secret(*key, *seal_secret(*key, "")), "");
  std::ofstream(t.path + "/short.key") << "abc";
  EXPECT_FALSE(load_or_create_seal_key(t.path + "/short.key").ok());
}

}  // namespace
}  // namespace warden::store
