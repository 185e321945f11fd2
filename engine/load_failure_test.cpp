// classify_load_failure over llama-server's real output (engine/testdata/load_failure/*.txt).
#include "engine/load_failure.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace warden::engine {
namespace {

std::string recording(const std::string& name) {
  const char* root = std::getenv("WARDEN_SOURCE_DIR");  // set by ctest (CMakeLists.txt)
  std::ifstream f(std::string(root ? root : ".") + "/engine/testdata/load_failure/" + name + ".txt");
  EXPECT_TRUE(f.is_open()) << name;
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(LoadFailure, ClassifiesEveryRecording) {
  const std::pair<const char*, load_failure_kind> cases[] = {
      {"flag", load_failure_kind::unsupported_flag},   {"port", load_failure_kind::port_in_use},
      {"perm", load_failure_kind::permission_denied},  {"missing", load_failure_kind::missing_file},
      {"oom", load_failure_kind::out_of_memory},       {"arch", load_failure_kind::unsupported_architecture},
      {"corrupt", load_failure_kind::corrupt_gguf},
  };
  for (const auto& [name, kind] : cases) {
    const load_failure f = classify_load_failure(recording(name), false);
    EXPECT_EQ(f.kind, kind) << name << " → " << to_string(f.kind);
    EXPECT_FALSE(f.advice.empty()) << name;
  }
}

TEST(LoadFailure, NamesTheRefusedFlag) {
  const load_failure f = classify_load_failure(recording("flag"), false);
  EXPECT_EQ(f.param, "--no-such-flag");
  EXPECT_NE(f.advice.find("--no-such-flag"), std::string::npos);
}

TEST(LoadFailure, TimeoutAndUnknown) {
  EXPECT_EQ(classify_load_failure("anything", true).kind, load_failure_kind::timed_out);
  const load_failure f = classify_load_failure("Segmentation fault\n", false);
  EXPECT_EQ(f.kind, load_failure_kind::unknown);
  EXPECT_EQ(std::string(to_string(f.kind)), "unknown");
}

}  // namespace
}  // namespace warden::engine
