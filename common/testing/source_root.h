// Test support (header-only, for *_test.cpp files only): where the repository's files are, for
// tests that read fixtures such as tests/golden/*, and reading them.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>

namespace warden::testing {

/// The repository root: $WARDEN_SOURCE_DIR when set (ctest sets it for the unit tests, see the
/// top CMakeLists.txt), else the nearest folder at or above the working directory that holds
/// tests/golden. Not __FILE__: the compiler cache (ccache base_dir) makes it relative to the build
/// folder. Returns an empty path when neither finds it.
inline std::filesystem::path source_root() {
  if (const char* env = std::getenv("WARDEN_SOURCE_DIR"); env != nullptr && *env != '\0') return env;
  std::error_code ec;
  auto dir = std::filesystem::current_path(ec);
  if (ec) return {};
  for (;; dir = dir.parent_path()) {
    std::error_code missing;  // set for every folder without tests/golden
    if (std::filesystem::is_directory(dir / "tests" / "golden", missing)) return dir;
    if (dir == dir.parent_path()) return {};
  }
}

/// The whole content of the file at `p`; "" when it cannot be read.
inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace warden::testing
