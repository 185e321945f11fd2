#include "common/upstream_url.h"

namespace warden {

std::string upstream_base_url(std::string_view url) {
  while (!url.empty() && url.back() == '/') url.remove_suffix(1);
  std::string out(url);
  const auto scheme = url.find("://");
  if (url.empty() || scheme == std::string_view::npos) return out;
  // Where the authority (host[:port], userinfo) ends: the path, query or fragment begins.
  const auto rest = url.find_first_of("/?#", scheme + 3);
  if (rest == std::string_view::npos) out += "/v1";
  return out;
}

}  // namespace warden
