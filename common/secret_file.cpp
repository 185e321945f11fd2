#include "common/secret_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace warden {

result<std::string> read_secret_file(const std::string& path, std::string_view flag) {
  const std::string what = std::string(flag) + " " + path;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return make_error(errc::invalid_request, "cannot read the key from " + what + ": it is a directory");
  }
  std::ifstream f(path, std::ios::binary);
  if (!f.is_open()) {
    return make_error(errc::invalid_request, "cannot read the key from " + what + ": " + std::strerror(errno));
  }
  std::string text;
  text.resize(k_max_secret_file_bytes + 1);
  f.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (f.bad()) return make_error(errc::invalid_request, "cannot read the key from " + what + ": read error");
  text.resize(static_cast<std::size_t>(f.gcount()));
  if (text.size() > k_max_secret_file_bytes) {
    return make_error(errc::invalid_request, what + ": the file is larger than " +
                                                 std::to_string(k_max_secret_file_bytes) + " bytes; it must hold one key");
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  if (text.empty()) return make_error(errc::invalid_request, what + ": the file is empty; write the key in it");
  if (text.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos) {
    return make_error(errc::invalid_request, what + ": the file must hold the key on one line");
  }
  return text;
}

}  // namespace warden
