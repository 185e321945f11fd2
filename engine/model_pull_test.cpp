// The pure parts of model pulls (engine/model_pull.h): sources and names, Content-Range, the
// SHA-256 in an ETag. The transfers themselves are tested end to end (tests/e2e/test_model_pull.py).
#include "engine/model_pull.h"

#include <gtest/gtest.h>

namespace warden::engine {
namespace {

TEST(ModelPull, HfSpecResolvesToTheHubLayout) {
  pull_request r;
  r.hf = "owner/repo:file.gguf";
  auto t = resolve_pull(r, "https://huggingface.co");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->url, "https://huggingface.co/owner/repo/resolve/main/file.gguf");
  EXPECT_EQ(t->name, "file.gguf");
  r.hf = "o-1/r.x@v1.0:sub/m_Q4.gguf";
  r.name = "mine.gguf";
  t = resolve_pull(r, "http://127.0.0.1:9");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->url, "http://127.0.0.1:9/o-1/r.x/resolve/v1.0/sub/m_Q4.gguf");
  EXPECT_EQ(t->name, "mine.gguf");
}

TEST(ModelPull, BadSourcesAreRefused) {
  for (const char* s : {"owner/repo", "repo:file.gguf", "o/r:", "o/r@:f.gguf", "o/r:../x.gguf", "o/..:f.gguf",
                        "o/r:/abs.gguf", "o/r:a b.gguf"}) {
    pull_request r;
    r.hf = s;
    auto t = resolve_pull(r, "https://huggingface.co");
    ASSERT_FALSE(t) << s;
    EXPECT_EQ(t.error().param, "hf") << s;
  }
  pull_request both;
  both.hf = "o/r:f.gguf";
  both.url = "https://h/f.gguf";
  EXPECT_FALSE(resolve_pull(both, "https://huggingface.co"));
  pull_request ftp;
  ftp.url = "ftp://h/f.gguf";
  EXPECT_EQ(resolve_pull(ftp, "").error().param, "url");
  pull_request sha;
  sha.url = "https://h/f.gguf";
  sha.sha256 = "abc";
  EXPECT_EQ(resolve_pull(sha, "").error().param, "sha256");
  pull_request query;
  query.url = "https://h/x/model.gguf?download=1#f";
  ASSERT_TRUE(resolve_pull(query, ""));
  EXPECT_EQ(resolve_pull(query, "")->name, "model.gguf");
}

TEST(ModelPull, FileNameValidation) {
  EXPECT_TRUE(valid_model_file_name("SmolLM2-135M.Q4_1.gguf"));
  EXPECT_TRUE(valid_model_file_name("a+b.gguf"));
  for (const char* n : {"", ".gguf", ".hidden.gguf", "a/b.gguf", "x.bin", "a b.gguf", "x.GGUF"}) {
    EXPECT_FALSE(valid_model_file_name(n)) << n;
  }
  EXPECT_FALSE(valid_model_file_name(std::string(300, 'a') + ".gguf"));
}

TEST(ModelPull, ContentRange) {
  auto r = parse_content_range("bytes 100-199/200");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->first, 100u);
  EXPECT_EQ(r->second, 200u);
  EXPECT_EQ(parse_content_range("bytes 0-9/*")->second, 0u);
  EXPECT_FALSE(parse_content_range("items 1-2/3"));
  EXPECT_FALSE(parse_content_range("bytes */200"));
}

TEST(ModelPull, Sha256FromEtags) {
  const std::string h(64, 'a');
  EXPECT_EQ(etag_sha256("\"" + h + "\""), h);
  EXPECT_EQ(etag_sha256("W/\"" + std::string(64, 'B') + "\""), std::string(64, 'b'));
  EXPECT_EQ(etag_sha256("\"d41d8cd98f00b204e9800998ecf8427e\""), "");  // an MD5 ETag is no SHA-256
}

}  // namespace
}  // namespace warden::engine
