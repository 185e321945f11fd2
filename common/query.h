// query — reading a URL query string (the part after '?', http_request::query).
//
// query_param(): the value of the first `name=value` pair whose name matches exactly, with
// '+' read as a space and %XX decoded (RFC 3986 percent-encoding); "" for `name` or `name=`;
// nullopt when the name is absent. A malformed escape (%G1, a trailing %) is an error
// (errc::invalid_request, param = name). Names are compared before decoding.
// Thread-safety: pure function.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace warden {

result<std::optional<std::string>> query_param(std::string_view query, std::string_view name);

}  // namespace warden
