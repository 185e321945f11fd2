// A gtest fixture with a folder of its own under /tmp (`root_`), removed with everything in it
// after the test, and small file helpers: the shared base of the file tools' tests (beneath,
// confined, edit_file).
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>

namespace warden::tools::testing {

class file_fixture : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/warden-files-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  static std::string slurp(const std::filesystem::path& p) {
    std::ifstream f(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), {}};
  }
  static void put(const std::filesystem::path& p, const std::string& text) {
    std::ofstream(p, std::ios::binary) << text;
  }

  std::filesystem::path root_;
};

}  // namespace warden::tools::testing
