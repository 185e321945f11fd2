// The environment scrubber's decisions (is_secret_variable) for the shapes of issue 22: the
// same detector as redaction (find_secrets.h), so each value the audit log would redact keeps
// its variable out of a tool's environment. sandbox/env_scrub_test.cpp holds the older table.
#include "secrets/secret_detect.h"

#include <gtest/gtest.h>

#include "secrets/redact.h"
#include "secrets/testing/secret_shapes.h"

namespace warden::secrets {
namespace {

TEST(SecretDetect, TheTenEnvironmentShapesAreDropped) {
  const auto rows = testing::ten_env_shapes();
  ASSERT_EQ(rows.size(), 10u);
  for (const auto& r : rows) {
    EXPECT_FALSE(is_secret_name(r.name)) << r.what << ": the value must decide, not the name";
    EXPECT_TRUE(is_secret_variable(r.name, r.value)) << r.what << ": " << r.value;
    EXPECT_NE(redact_secrets(r.value), r.value) << r.what;  // and redaction hides it
  }
}

TEST(SecretDetect, EveryRedactedShapeIsDroppedFromAnEnvironment) {
  for (const auto& r : testing::twenty_shapes()) EXPECT_TRUE(is_secret_variable("CMD", r.in)) << r.what;
}

struct kept {
  const char* name;
  const char* value;
};

TEST(SecretDetect, OrdinaryValuesAreKept) {
  const kept rows[] = {
      {"PATH", "/usr/local/bin:/usr/bin:/bin"},
      {"GIT_COMMIT", "3f2a9c1d4e5b6a7980c1d2e3f4a5b6c7d8e9f012"},    // 40 hex: a commit, not a key
      {"REQUEST_ID", "123e4567-e89b-12d3-a456-426614174000"},          // a UUID
      {"CHECKSUMS", "d41d8cd98f00b204e9800998ecf8427e  empty.txt"},    // 32 hex inside text
      {"HELP", "Basic authentication is enabled"},
      {"LINK", "https://example.org/posts?author=bob"},
      {"GREETING", "hello world"},
      {"LS_COLORS", "rs=0:di=01;34:ln=01;36:*.tar=01;31"},
      {"CLOCK", "12:34:56"},
      {"PROMPT", "\\u@\\h:\\w$ "},
      {"EDITOR_ARGS", "-w --nofork"},
  };
  for (const auto& r : rows) EXPECT_FALSE(is_secret_variable(r.name, r.value)) << r.name << "=" << r.value;
}

}  // namespace
}  // namespace warden::secrets
