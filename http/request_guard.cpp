#include "http/request_guard.h"

#include <algorithm>
#include <cctype>

namespace warden::http {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::size_t header_count(const http_request& req, std::string_view name) {
  return static_cast<std::size_t>(
      std::count_if(req.headers.begin(), req.headers.end(), [&](const auto& h) { return h.first == name; }));
}

bool contains(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

/// A decimal port 1..65535 without sign, spaces or leading junk.
std::optional<int> parse_port(std::string_view p) {
  if (p.empty() || p.size() > 5) return std::nullopt;
  int v = 0;
  for (char c : p) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  if (v < 1 || v > 65535) return std::nullopt;
  return v;
}

struct host_port {
  std::string name;         ///< lower-case; IPv6 literals keep their brackets
  std::optional<int> port;  ///< absent when the authority has none
};

/// Splits an authority "name[:port]" or "[v6][:port]"; nullopt when malformed.
std::optional<host_port> parse_authority(std::string_view a) {
  host_port hp;
  std::string_view name = a, port;
  bool has_port = false;
  if (!a.empty() && a.front() == '[') {
    const auto close = a.find(']');
    if (close == std::string_view::npos || close < 2) return std::nullopt;
    name = a.substr(0, close + 1);
    for (char c : name.substr(1, name.size() - 2)) {
      if (!(std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.')) return std::nullopt;
    }
    std::string_view rest = a.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return std::nullopt;
      port = rest.substr(1);
      has_port = true;
    }
  } else {
    const auto colon = a.find(':');
    if (colon != std::string_view::npos) {
      name = a.substr(0, colon);
      port = a.substr(colon + 1);
      has_port = true;
    }
    if (name.empty() || name.size() > 253) return std::nullopt;
    for (char c : name) {
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_')) return std::nullopt;
    }
  }
  if (has_port) {
    hp.port = parse_port(port);
    if (!hp.port) return std::nullopt;
  }
  hp.name = lower(name);
  return hp;
}

/// An origin as browsers serialize it: default ports dropped.
std::string canonical_origin(std::string_view origin) {
  std::string o = lower(origin);
  const bool http = o.rfind("http://", 0) == 0;
  const std::string_view default_port = http ? ":80" : ":443";
  if (o.size() > default_port.size() && o.compare(o.size() - default_port.size(), default_port.size(), default_port) == 0) {
    o.resize(o.size() - default_port.size());
  }
  return o;
}

error forbidden(std::string message, std::string code) {
  return make_error(errc::forbidden, std::move(message), "", std::move(code));
}

}  // namespace

guard_policy make_guard_policy(const std::string& bind_host, int port, const std::vector<std::string>& allowed_hosts,
                               const std::vector<std::string>& allowed_origins) {
  guard_policy p;
  p.names_any_port = {"localhost", "127.0.0.1", "[::1]"};
  std::string bound = lower(bind_host);
  if (bound.find(':') != std::string::npos && bound.front() != '[') bound = "[" + bound + "]";
  const bool unspecified = bound == "0.0.0.0" || bound == "[::]" || bound == "[0:0:0:0:0:0:0:0]";
  if (!unspecified && !contains(p.names_any_port, bound)) p.names_any_port.push_back(bound);
  for (const auto& h : allowed_hosts) {
    auto hp = parse_authority(h);
    if (!hp) continue;  // config validated it; never widen on a parse mismatch
    if (hp->port) p.names_with_port.push_back(hp->name + ":" + std::to_string(*hp->port));
    else if (!contains(p.names_any_port, hp->name)) p.names_any_port.push_back(hp->name);
  }
  for (const auto& n : p.names_any_port) p.origins.push_back(canonical_origin("http://" + n + ":" + std::to_string(port)));
  for (const auto& n : p.names_with_port) p.origins.push_back(canonical_origin("http://" + n));
  for (const auto& o : allowed_origins) p.origins.push_back(canonical_origin(o));
  return p;
}

std::optional<error> check_host(const http_request& req, const guard_policy& p) {
  const std::string hint =
      "; warden answers only to localhost, 127.0.0.1, [::1], its bound address and the names given with "
      "--allowed-hosts (WARDEN_ALLOWED_HOSTS)";
  if (header_count(req, "host") != 1) {
    return forbidden("the request must carry exactly one Host header" + hint, "invalid_host");
  }
  const std::string_view raw = trim(req.header("host"));
  auto hp = parse_authority(raw);
  if (!hp) return forbidden("malformed Host header '" + std::string(raw.substr(0, 200)) + "'" + hint, "invalid_host");
  if (contains(p.names_any_port, hp->name)) return std::nullopt;
  if (contains(p.names_with_port, hp->name + ":" + std::to_string(hp->port.value_or(80)))) return std::nullopt;
  return forbidden("Host '" + std::string(raw.substr(0, 200)) + "' is not allowed" + hint, "host_not_allowed");
}

origin_check check_origin(const http_request& req, const guard_policy& p) {
  origin_check r;
  const std::string hint = "; allow a web application's origin with --allowed-origins (WARDEN_ALLOWED_ORIGINS)";
  const std::size_t n = header_count(req, "origin");
  if (n == 0) {
    const std::string site = lower(trim(req.header("sec-fetch-site")));
    if (site == "cross-site" || site == "same-site") {
      r.refused = forbidden("cross-site browser requests are refused" + hint, "origin_not_allowed");
    }
    return r;
  }
  if (n > 1) {
    r.refused = forbidden("the request carries more than one Origin header", "origin_not_allowed");
    return r;
  }
  const std::string_view raw = trim(req.header("origin"));
  const std::string origin = canonical_origin(raw);
  std::string_view authority;
  if (origin.rfind("http://", 0) == 0) authority = std::string_view(origin).substr(7);
  else if (origin.rfind("https://", 0) == 0) authority = std::string_view(origin).substr(8);
  if (origin == "null" || authority.empty() || !parse_authority(authority) || !contains(p.origins, origin)) {
    r.refused = forbidden("requests from origin '" + std::string(raw.substr(0, 200)) + "' are refused" + hint,
                          "origin_not_allowed");
    return r;
  }
  r.allowed_origin = origin;
  return r;
}

std::optional<error> check_json_content_type(const http_request& req) {
  const std::string want = "send the body as JSON with 'Content-Type: application/json'";
  if (header_count(req, "content-type") != 1) {
    return make_error(errc::unsupported_media_type, "missing or repeated Content-Type: " + want, "",
                      "unsupported_media_type");
  }
  const std::string_view raw = req.header("content-type");
  std::string_view rest = raw;
  const auto semi = rest.find(';');
  const std::string media = lower(trim(rest.substr(0, semi)));
  bool ok = media == "application/json";
  while (ok && semi != std::string_view::npos && !rest.empty()) {
    rest = rest.substr(rest.find(';') + 1);
    const auto next = rest.find(';');
    const std::string_view param = trim(rest.substr(0, next));
    const auto eq = param.find('=');
    if (eq != std::string_view::npos && lower(trim(param.substr(0, eq))) == "charset") {
      std::string v = lower(trim(param.substr(eq + 1)));
      if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
      ok = v == "utf-8" || v == "utf8";
    }
    if (next == std::string_view::npos) break;
  }
  if (ok) return std::nullopt;
  return make_error(errc::unsupported_media_type,
                    "unsupported Content-Type '" + std::string(raw.substr(0, 200)) + "': " + want +
                        " (a charset parameter must be utf-8)",
                    "", "unsupported_media_type");
}

}  // namespace warden::http
