// The parser for the small JSON bodies of the control endpoints (tool-confirm, cancel, …), used
// only by api/control/. The dialects' warden extension fields (session_id, cancel_id, …) are
// parsed by api/wire/loop_fields.h, not here.
//
// parse_control_body(): the body must be UTF-8, nest at most k_max_json_depth levels, be valid
// JSON without repeated keys, and be an object; then each named field, when present and not
// null, must be a string. Errors: errc::invalid_request with `param` and a type code
// (invalid_json, duplicate_key, invalid_type).
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/json_util.h"
#include "common/result.h"

namespace warden::api::control {

/// The string fields of a control body, by name (absent or null fields are missing).
using string_fields = std::map<std::string, std::string, std::less<>>;

result<string_fields> parse_control_body(std::string_view body, const std::vector<std::string_view>& fields);

/// The same checks up to "an object"; the object itself (for bodies with non-string fields).
result<json> parse_control_object(std::string_view body);

}  // namespace warden::api::control
