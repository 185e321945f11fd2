#include "common/json_fields.h"

#include <cmath>

#include "common/utf8.h"

namespace warden {

error field_invalid(std::string message, std::string param, std::string code) {
  return make_error(errc::invalid_request, std::move(message), std::move(param), std::move(code));
}

error field_wrong_type(const std::string& param, const char* want, const json& got) {
  return field_invalid("'" + param + "' must be " + want + ", not " + json_type_name(got), param, "invalid_type");
}

result<json> parse_request_body(std::string_view text, std::string_view hint) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return field_invalid("the request body is empty; send a JSON object with " + std::string(hint), "", "invalid_json");
  }
  if (!is_valid_utf8(text)) return field_invalid("the request body is not valid UTF-8", "", "invalid_json");
  if (json_nesting_depth(text, k_max_json_depth) > k_max_json_depth) {
    return field_invalid("the request body nests JSON deeper than " + std::to_string(k_max_json_depth) + " levels", "",
                         "invalid_json");
  }
  checked_json parsed = parse_json_checking_keys(text);
  if (parsed.too_many_elements) {
    return field_invalid("the request body holds more than " + std::to_string(k_max_json_elements) +
                             " JSON values (objects, arrays, strings, numbers); send fewer",
                         "", "too_many_elements");
  }
  if (!parsed.syntax_error.empty()) {
    return field_invalid("the request body is not valid JSON" + parsed.syntax_error, "", "invalid_json");
  }
  if (!parsed.duplicate_key.empty()) {
    return field_invalid("the request body repeats the key '" + parsed.duplicate_key.substr(0, 100) +
                             "' in one object; send each key once",
                         parsed.duplicate_key.substr(0, 100), "duplicate_key");
  }
  json body = std::move(parsed.value);
  if (body.is_discarded()) return field_invalid("the request body is not valid JSON", "", "invalid_json");
  if (!body.is_object()) return field_invalid("the request body must be a JSON object", "", "invalid_type");
  return body;
}

std::optional<error> check_number_field(const json& obj, const char* name, double lo, double hi) {
  auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) return std::nullopt;
  if (!it->is_number()) return field_wrong_type(name, "a number", *it);
  const double v = it->get<double>();
  if (!std::isfinite(v) || v < lo || v > hi) {
    std::string message = "'";
    message.append(name).append("' must be between ").append(json(lo).dump()).append(" and ");
    message.append(json(hi).dump()).append(", got ").append(it->dump());
    return field_invalid(std::move(message), name);
  }
  return std::nullopt;
}

std::optional<error> check_int_field(const json& obj, const char* name, std::int64_t lo, std::int64_t hi) {
  auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) return std::nullopt;
  if (!it->is_number_integer() && !it->is_number_unsigned()) return field_wrong_type(name, "an integer", *it);
  if (it->is_number_unsigned() && it->get<std::uint64_t>() > static_cast<std::uint64_t>(hi)) {
    return field_invalid("'" + std::string(name) + "' must be at most " + std::to_string(hi), name);
  }
  const std::int64_t v = it->get<std::int64_t>();
  if (v < lo || v > hi) {
    return field_invalid("'" + std::string(name) + "' must be between " + std::to_string(lo) + " and " +
                             std::to_string(hi) + ", got " + std::to_string(v),
                         name);
  }
  return std::nullopt;
}

std::optional<error> check_kind_field(const json& obj, const char* name, bool (json::*pred)() const noexcept,
                                      const char* want) {
  auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) return std::nullopt;
  if (!((*it).*pred)()) return field_wrong_type(name, want, *it);
  return std::nullopt;
}

std::optional<error> check_bool_field(const json& obj, const char* name, bool& out) {
  auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) return std::nullopt;
  if (!it->is_boolean()) return field_wrong_type(name, "a boolean", *it);
  out = it->get<bool>();
  return std::nullopt;
}

std::optional<error> check_bool_field(const json& obj, const char* name, std::optional<bool>& out) {
  auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) return std::nullopt;
  if (!it->is_boolean()) return field_wrong_type(name, "a boolean", *it);
  out = it->get<bool>();
  return std::nullopt;
}

}  // namespace warden
