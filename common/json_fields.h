// json_fields — validation of request bodies shared by every API surface.
//
// parse_request_body(): the body as one JSON object, or the 400 to answer: empty body, invalid
// UTF-8, nesting deeper than k_max_json_depth, a key repeated in one object (RFC 8259 §4 leaves
// duplicates to the parser; warden refuses them so validation and use cannot read a body two
// ways), invalid JSON (with the byte offset), or a top level that is not an object.
// The check_* functions validate one field of an object: absent or null passes (the default
// applies); a wrong type or a value outside the inclusive range gives the 400. A surface's list
// of request fields is a table (common/field_table.h) whose engine answers with these.
// Errors: errc::invalid_request, `param` naming the field, `type_code` one of invalid_json,
// invalid_type, invalid_value, duplicate_key, missing_required_parameter. Each surface renders
// them in its own envelope.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/json_util.h"
#include "common/result.h"

namespace warden {

/// The 400 for a bad value of `param` (type_code invalid_value unless given).
error field_invalid(std::string message, std::string param, std::string code = "invalid_value");
/// The 400 "'param' must be WANT, not TYPE" (type_code invalid_type).
error field_wrong_type(const std::string& param, const char* want, const json& got);

/// `hint` completes "the request body is empty; send a JSON object with …" (e.g. "'messages'").
result<json> parse_request_body(std::string_view text, std::string_view hint = "'messages'");

std::optional<error> check_number_field(const json& obj, const char* name, double lo, double hi);
std::optional<error> check_int_field(const json& obj, const char* name, std::int64_t lo, std::int64_t hi);
/// `pred` is one of json's is_* members; `want` says what was expected ("a string").
std::optional<error> check_kind_field(const json& obj, const char* name, bool (json::*pred)() const noexcept,
                                      const char* want);
/// A boolean field read into `out` (left unchanged when absent or null).
std::optional<error> check_bool_field(const json& obj, const char* name, bool& out);
std::optional<error> check_bool_field(const json& obj, const char* name, std::optional<bool>& out);

}  // namespace warden
