#include "common/upstream_url.h"

#include <charconv>
#include <fstream>
#include <sstream>

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

namespace {

bool env_name(std::string_view v) {
  if (v.empty() || v.size() > 128 || (v[0] >= '0' && v[0] <= '9')) return false;
  for (char c : v) {
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

/// Applies one "name=value" option of a line to `e`; an error message, or "" when it is good.
std::string take_option(std::string_view word, upstream_entry& e) {
  const auto eq = word.find('=');
  const std::string_view name = word.substr(0, eq);
  const std::string_view value = eq == std::string_view::npos ? std::string_view() : word.substr(eq + 1);
  if (eq == std::string_view::npos || value.empty()) return "'" + std::string(word) + "' is not name=value";
  if (name == "model") {
    e.model_id = std::string(value);
    return "";
  }
  if (name == "slots") {
    int n = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (ec != std::errc() || end != value.data() + value.size() || n < 1 || n > 4096) return "slots must be 1 to 4096";
    e.slots = n;
    return "";
  }
  if (name == "key_env") {
    if (!env_name(value)) return "key_env must name an environment variable ([A-Z_][A-Z0-9_]*)";
    e.key_env = std::string(value);
    return "";
  }
  return "unknown option '" + std::string(name) + "' (model=, slots=, key_env=)";
}

}  // namespace

result<std::vector<upstream_entry>> parse_upstreams(std::string_view text) {
  std::vector<upstream_entry> out;
  std::istringstream in{std::string(text)};
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    std::istringstream words(line);
    std::string word;
    if (!(words >> word) || word[0] == '#') continue;
    auto bad = [n](const std::string& why) {
      return make_error(errc::invalid_request, "--upstreams-file line " + std::to_string(n) + ": " + why, "upstreams_file");
    };
    if (word.rfind("http://", 0) != 0 && word.rfind("https://", 0) != 0) return bad("'" + word + "' is not an http(s):// URL");
    upstream_entry e;
    e.url = upstream_base_url(word);
    while (words >> word) {
      if (std::string why = take_option(word, e); !why.empty()) return bad(why);
    }
    out.push_back(std::move(e));
  }
  return out;
}

result<std::vector<upstream_entry>> read_upstreams_file(const std::string& path) {
  std::ifstream f(path);
  if (!f) return make_error(errc::invalid_request, "--upstreams-file " + path + " cannot be read", "upstreams_file");
  std::stringstream ss;
  ss << f.rdbuf();
  return parse_upstreams(ss.str());
}

}  // namespace warden
