#include "api/control/extensions.h"

#include "common/json_util.h"

namespace warden::api::control {

namespace {

error bad_body(std::string message, std::string param, std::string code) {
  return make_error(errc::invalid_request, std::move(message), std::move(param), std::move(code));
}

/// The body as a JSON object, or the 400 to send.
result<json> object_body(std::string_view body) {
  if (!is_valid_utf8(body)) return bad_body("the body is not valid UTF-8", "", "invalid_json");
  if (json_nesting_depth(body, k_max_json_depth) > k_max_json_depth) {
    return bad_body("the body nests JSON too deeply", "", "invalid_json");
  }
  checked_json parsed = parse_json_checking_keys(body);
  if (parsed.too_many_elements) {
    return bad_body("the body holds more than " + std::to_string(k_max_json_elements) + " JSON values", "",
                    "too_many_elements");
  }
  if (!parsed.syntax_error.empty()) return bad_body("the body is not valid JSON", "", "invalid_json");
  if (!parsed.duplicate_key.empty()) {
    const std::string key = parsed.duplicate_key.substr(0, 100);
    return bad_body("the body repeats the key '" + key + "'", key, "duplicate_key");
  }
  json j = std::move(parsed.value);
  if (j.is_discarded()) return bad_body("the body is not valid JSON", "", "invalid_json");
  if (!j.is_object()) return bad_body("the body must be a JSON object", "", "invalid_type");
  return j;
}

}  // namespace

result<json> parse_control_object(std::string_view body) { return object_body(body); }

result<string_fields> parse_control_body(std::string_view body, const std::vector<std::string_view>& fields) {
  auto j = object_body(body);
  if (!j) return j.error();
  string_fields out;
  for (auto key : fields) {
    auto it = j->find(std::string(key));
    if (it == j->end() || it->is_null()) continue;
    if (!it->is_string()) return bad_body("'" + std::string(key) + "' must be a string", std::string(key), "invalid_type");
    out.emplace(std::string(key), it->get<std::string>());
  }
  return out;
}

}  // namespace warden::api::control
