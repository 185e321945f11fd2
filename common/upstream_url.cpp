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

std::string url_problem(std::string_view url) {
  if (url.size() > 2048) return "the URL is longer than 2048 bytes";
  for (char c : url) {
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) return "the URL has a blank or a control character";
  }
  std::size_t scheme_end = 0;
  if (url.rfind("http://", 0) == 0) scheme_end = 7;
  else if (url.rfind("https://", 0) == 0) scheme_end = 8;
  else return "not an http:// or https:// URL";
  if (url.find_first_of("?#") != std::string_view::npos) return "the URL has a ?query or #fragment (give its base URL)";
  const std::string_view authority = url.substr(scheme_end, url.find('/', scheme_end) - scheme_end);
  if (authority.find('@') != std::string_view::npos) {
    return "the URL carries a user:password@ (it would show wherever the URL does): give the key with key_env= or "
           "--upstream-api-key";
  }
  std::string_view host = authority, port;
  if (!authority.empty() && authority.front() == '[') {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return "the URL's [IPv6 address] is not closed";
    host = authority.substr(0, close + 1);
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') return "the URL's host is malformed";
      port = authority.substr(close + 2);
    }
  } else if (const std::size_t colon = authority.find(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty() || host == "[]") return "the URL has no host";
  const char* bad_port = "the URL's port is not 1 to 65535";
  if (authority.back() == ':') return bad_port;
  if (!port.empty()) {
    if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string_view::npos) return bad_port;
    const int n = std::stoi(std::string(port));
    if (n < 1 || n > 65535) return bad_port;
  }
  return "";
}

namespace {

bool env_name(std::string_view v) {
  if (v.empty() || v.size() > 128 || (v[0] >= '0' && v[0] <= '9')) return false;
  for (char c : v) {
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

bool printable(std::string_view v) {
  for (char c : v) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
  }
  return true;
}

/// Applies one "name=value" option of a line to `e`; an error message, or "" when it is good.
/// `seen` holds the options the line gave already.
std::string take_option(std::string_view word, upstream_entry& e, std::string& seen) {
  const auto eq = word.find('=');
  const std::string_view name = word.substr(0, eq);
  const std::string_view value = eq == std::string_view::npos ? std::string_view() : word.substr(eq + 1);
  if (eq == std::string_view::npos || value.empty()) return "'" + std::string(word.substr(0, 64)) + "' is not name=value";
  const std::string tag = "<" + std::string(name.substr(0, 16)) + ">";
  if (seen.find(tag) != std::string::npos) return std::string(name.substr(0, 16)) + "= is given twice";
  seen += tag;
  if (name == "model") {
    if (value.size() > 256 || !printable(value)) return "model must be 1 to 256 printable characters";
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
    if (value.rfind("WARDEN_", 0) == 0) return "key_env may not name a WARDEN_* variable (warden's own settings and keys)";
    e.key_env = std::string(value);
    return "";
  }
  return "unknown option '" + std::string(name.substr(0, 64)) + "' (model=, slots=, key_env=)";
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
    if (std::string why = url_problem(word); !why.empty()) return bad(why);
    upstream_entry e;
    e.url = upstream_base_url(word);
    std::string seen;
    while (words >> word) {
      if (std::string why = take_option(word, e, seen); !why.empty()) return bad(why);
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
