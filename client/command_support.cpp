#include "client/command_support.h"

#include <cstdio>
#include <cstdlib>

#include "common/secret_file.h"

namespace warden::client {

std::optional<std::string> find_api_key(const std::string& api_key, const std::string& api_key_file, const char* prog) {
  std::string key = api_key, file = api_key_file;
  if (const char* e = std::getenv("WARDEN_API_KEY"); key.empty() && file.empty() && e) key = e;
  if (const char* e = std::getenv("WARDEN_API_KEY_FILE"); key.empty() && file.empty() && e) file = e;
  if (file.empty()) return key;
  auto read = read_secret_file(file, "--api-key-file");
  if (!read) {
    std::fprintf(stderr, "%s: %s\n", prog, read.error().message.c_str());
    return std::nullopt;
  }
  return *read;
}

std::optional<json> reply_json(const http_reply& r, const char* prog) {
  if (!r.ok()) {
    std::fprintf(stderr, "%s: %s\n", prog, r.error_text().c_str());
    return std::nullopt;
  }
  auto j = parse_json(r.body);
  if (!j) {
    std::fprintf(stderr, "%s: the server sent something that is not JSON\n", prog);
    return std::nullopt;
  }
  return j;
}

}  // namespace warden::client
