#include "common/field_table.h"

#include <algorithm>
#include <string>

#include "common/json_fields.h"

namespace warden::fields {

namespace {

const char* type_phrase(const field& f) {
  if (f.want) return f.want;
  switch (f.type) {
    case field_type::boolean: return "a boolean";
    case field_type::string: return "a string";
    case field_type::object: return "an object";
    case field_type::number: return "a number";
    case field_type::integer: return "an integer";
    case field_type::custom:
    case field_type::one_of:
    case field_type::refused: break;
  }
  return "a value";
}

bool has_type(const json& v, field_type t) {
  switch (t) {
    case field_type::boolean: return v.is_boolean();
    case field_type::string: return v.is_string();
    case field_type::object: return v.is_object();
    case field_type::number: return v.is_number();
    case field_type::integer: return v.is_number_integer() || v.is_number_unsigned();
    case field_type::custom:
    case field_type::one_of:
    case field_type::refused: break;
  }
  return true;
}

/// One name of a non-custom row (the row's own name or its alias); `v` is present, not null.
std::optional<error> check_present(const json& body, const json& v, const field& f, const std::string& name) {
  switch (f.type) {
    case field_type::number: return check_number_field(body, name.c_str(), f.lo, f.hi);
    case field_type::integer: return check_int_field(body, name.c_str(), f.min, f.max);
    case field_type::one_of: {
      const bool listed = v.is_string() && std::find(f.one_of.begin(), f.one_of.end(), v.get<std::string>()) != f.one_of.end();
      if (listed) return std::nullopt;
      return field_invalid(f.message ? f.message : "'" + name + "' has an unsupported value", name, f.code);
    }
    case field_type::refused:
      return field_invalid(f.message ? f.message : "'" + name + "' is not supported", name, f.code);
    case field_type::boolean:
    case field_type::string:
    case field_type::object:
    case field_type::custom: break;
  }
  if (!has_type(v, f.type)) return field_wrong_type(name, type_phrase(f), v);
  if (f.nonempty && v.is_string() && v.get<std::string>().empty()) return field_wrong_type(name, type_phrase(f), v);
  return std::nullopt;
}

std::optional<error> check_name(json& body, const field& f, const char* name) {
  const std::string key(name);
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) {
    if (f.required) return field_invalid("'" + key + "' is required", key, "missing_required_parameter");
    return std::nullopt;
  }
  return check_present(body, *it, f, key);
}

}  // namespace

std::optional<error> check_fields(json& body, std::span<const field> rows, surface_mask surface) {
  for (const field& f : rows) {
    if ((f.surfaces & surface) == 0) continue;
    if (f.type == field_type::custom) {
      if (f.check) {
        if (auto e = f.check(body)) return e;
      }
      continue;
    }
    if (auto e = check_name(body, f, f.name)) return e;
    if (f.alias) {
      if (auto e = check_name(body, f, f.alias)) return e;
    }
  }
  return std::nullopt;
}

}  // namespace warden::fields
