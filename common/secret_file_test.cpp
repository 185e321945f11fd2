// common/secret_file.h: the key is the file's one line; every bad file is a clear error that
// names the flag and the path and never the content. And config finalize() with the key files
// (--api-key-file, --upstream-api-key-file) and the upstream's base URL.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "common/config.h"
#include "common/secret_file.h"

namespace warden {
namespace {

struct SecretFile : ::testing::Test {
  std::filesystem::path dir;
  void SetUp() override {
    dir = std::filesystem::temp_directory_path() /
          ("warden-secret-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir);
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  std::string write(const std::string& name, const std::string& content) {
    const auto p = dir / name;
    std::ofstream(p, std::ios::binary) << content;
    return p.string();
  }
};

TEST_F(SecretFile, TrailingLineEndsAreDroppedNothingElse) {
  EXPECT_EQ(read_secret_file(write("a", "k3y-abc\n"), "--api-key-file").value(), "k3y-abc");
  EXPECT_EQ(read_secret_file(write("b", "k3y-abc\r\n\n"), "--api-key-file").value(), "k3y-abc");
  EXPECT_EQ(read_secret_file(write("c", "no-newline"), "--api-key-file").value(), "no-newline");
  EXPECT_EQ(read_secret_file(write("d", " spaced \n"), "--api-key-file").value(), " spaced ");
}

TEST_F(SecretFile, BadFilesAreClearErrorsWithoutTheContent) {
  struct bad {
    std::string path;
    std::string says;
  };
  const std::string big(k_max_secret_file_bytes + 1, 'k');
  const bad cases[] = {
      {(dir / "missing").string(), "No such file or directory"},
      {dir.string(), "it is a directory"},
      {write("empty", ""), "the file is empty"},
      {write("newlines", "\n\r\n"), "the file is empty"},
      {write("two", "sekrit-one\nsekrit-two\n"), "on one line"},
      {write("big", big), "larger than"},
  };
  for (const auto& c : cases) {
    auto r = read_secret_file(c.path, "--upstream-api-key-file");
    ASSERT_FALSE(r.ok()) << c.path;
    EXPECT_EQ(r.error().code, errc::invalid_request);
    EXPECT_NE(r.error().message.find(c.says), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find("--upstream-api-key-file " + c.path), std::string::npos) << r.error().message;
    EXPECT_EQ(r.error().message.find("sekrit"), std::string::npos) << r.error().message;
  }
}

TEST_F(SecretFile, FinalizeReadsTheKeyFilesEachExclusiveWithItsFlag) {
  config c;
  c.api_key_file = write("key", "served-key\n");
  c.upstream_api_key_file = write("up", "upstream-key");
  ASSERT_TRUE(finalize(c, "/home/u").ok());
  EXPECT_EQ(c.api_key, "served-key");
  EXPECT_EQ(c.upstream_api_key, "upstream-key");

  config both;
  both.api_key = "k";
  both.api_key_file = write("key2", "k2");
  auto r = finalize(both, "/home/u");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().param, "api_key_file");
  EXPECT_NE(r.error().message.find("--api-key and --api-key-file are exclusive"), std::string::npos);

  config up_both;
  up_both.upstream_api_key = "k";
  up_both.upstream_api_key_file = write("up2", "k2");
  r = finalize(up_both, "/home/u");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().param, "upstream_api_key_file");

  config missing;
  missing.api_key_file = (dir / "nope").string();
  r = finalize(missing, "/home/u");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().param, "api_key_file");
  EXPECT_NE(r.error().message.find("--api-key-file " + missing.api_key_file), std::string::npos);

  config with_named;  // a file key is still one key: exclusive with named keys
  with_named.api_key_file = write("key3", "k3");
  with_named.api_keys_file = "/etc/warden/keys";
  EXPECT_FALSE(finalize(with_named, "/home/u").ok());
}

TEST(ConfigFinalizeUpstream, AUrlWithoutAPathGetsV1) {
  config c;
  c.upstream_url = "http://127.0.0.1:8080/";
  ASSERT_TRUE(finalize(c, "/home/u").ok());
  EXPECT_EQ(c.upstream_url, "http://127.0.0.1:8080/v1");
  config kept;
  kept.upstream_url = "http://127.0.0.1:8080/api/";
  ASSERT_TRUE(finalize(kept, "/home/u").ok());
  EXPECT_EQ(kept.upstream_url, "http://127.0.0.1:8080/api");
}

}  // namespace
}  // namespace warden
