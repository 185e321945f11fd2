// Test support (header-only, for *_test.cpp files only): a fresh folder under /tmp.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>

namespace warden::testing {

/// Creates /tmp/<prefix>-XXXXXX (mode 0700, mkdtemp) and removes it with everything in it when
/// destroyed. `path` is empty when the folder could not be created.
struct temp_dir {
  std::string path;
  explicit temp_dir(const std::string& prefix = "warden-test") {
    std::string tmpl = "/tmp/" + prefix + "-XXXXXX";
    if (::mkdtemp(tmpl.data()) != nullptr) path = tmpl;
  }
  ~temp_dir() {
    std::error_code ec;
    if (!path.empty()) std::filesystem::remove_all(path, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
};

}  // namespace warden::testing
