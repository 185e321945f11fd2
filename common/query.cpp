#include "common/query.h"

namespace warden {

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

result<std::string> decode(std::string_view v, std::string_view name) {
  std::string out;
  out.reserve(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i] == '+') {
      out += ' ';
    } else if (v[i] == '%') {
      if (i + 2 >= v.size()) {
        return make_error(errc::invalid_request, "the query parameter '" + std::string(name) + "' has a malformed %-escape",
                          std::string(name), "invalid_value");
      }
      const int a = hex_value(v[i + 1]), b = hex_value(v[i + 2]);
      if (a < 0 || b < 0) {
        return make_error(errc::invalid_request, "the query parameter '" + std::string(name) + "' has a malformed %-escape",
                          std::string(name), "invalid_value");
      }
      out += static_cast<char>(a * 16 + b);
      i += 2;
    } else {
      out += v[i];
    }
  }
  return out;
}

}  // namespace

result<std::optional<std::string>> query_param(std::string_view query, std::string_view name) {
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    const auto eq = pair.find('=');
    if (pair.substr(0, eq) != name) continue;
    if (eq == std::string_view::npos) return std::optional<std::string>(std::string());
    auto v = decode(pair.substr(eq + 1), name);
    if (!v) return v.error();
    return std::optional<std::string>(std::move(*v));
  }
  return std::optional<std::string>();
}

}  // namespace warden
