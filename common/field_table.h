// field_table — a surface's request fields as declarative rows, checked in order by one engine.
//
// Each API surface (api/openai, api/anthropic, api/responses) writes its request fields as a
// constant table of `field` rows: name, type, bounds, an alias, the surfaces a row applies to,
// and, for refusals and closed sets, the `param` and message of the 400. check_fields() walks the
// rows in order and returns the first failure, so the order of a table is the order in which a
// request with several faults is told about them. Structural fields (messages, tools, …) are
// rows of type `custom`: their `check` validates, and may normalise, the body.
//
// Row semantics (`name` absent or JSON null is "absent"):
//   custom   `check(body)` runs, absent or not (it decides whether the field is required).
//   any other type: absent → the 400 "'name' is required" (missing_required_parameter) when
//            `required`, else the row passes. Present:
//   boolean, string, object   wrong type → "'name' must be WANT, not TYPE" (invalid_type), WANT
//            being `want` or the type's own phrase ("a boolean", "a string", "an object");
//            string with `nonempty`: "" fails the same way.
//   number   a JSON number in [lo, hi] (common/json_fields.h check_number_field's messages).
//   integer  a JSON integer in [min, max] (check_int_field's messages).
//   one_of   a string among `one_of`; anything else → `message` with `code`.
//   refused  any value → `message` with `code` (a field warden cannot honour).
// `alias`: a second name checked by the same rule, right after `name`, with its own `param`.
// `surfaces`: a bit mask; check_fields() skips the rows whose mask shares no bit with its
// `surface` argument (one table serves e.g. /v1/messages and /v1/messages/count_tokens).
// `param` of every generated 400 is the field's name (or alias) as sent.
// Errors: errc::invalid_request, shapes as common/json_fields.h.
// Thread-safety: rows are constants; check_fields() touches only `body` (through custom checks).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "common/json_util.h"
#include "common/result.h"

namespace warden::fields {

enum class field_type : std::uint8_t { custom, boolean, string, object, number, integer, one_of, refused };

using surface_mask = std::uint32_t;
inline constexpr surface_mask k_every_surface = ~surface_mask{0};

/// A structural check: validates (and may normalise) `body`; the 400 to answer, or nothing.
using check_fn = std::optional<error> (*)(json& body);

struct field {
  const char* name = "";
  field_type type = field_type::custom;
  const char* alias = nullptr;      ///< a second name validated by the same rule
  double lo = 0, hi = 0;            ///< number: inclusive range
  std::int64_t min = 0, max = 0;    ///< integer: inclusive range
  const char* want = nullptr;       ///< wrong-type phrase; nullptr: the type's own
  bool required = false;            ///< absent → missing_required_parameter
  bool nonempty = false;            ///< string: "" is a wrong value too
  std::span<const std::string_view> one_of{};  ///< one_of: the accepted strings
  const char* message = nullptr;    ///< one_of, refused: the whole message of the 400
  const char* code = "invalid_value";  ///< one_of, refused: its type_code
  surface_mask surfaces = k_every_surface;
  check_fn check = nullptr;         ///< custom: the check
};

/// The first failure of `rows` (in order) on `body`, or nothing. Rows whose `surfaces` share no
/// bit with `surface` are skipped.
std::optional<error> check_fields(json& body, std::span<const field> rows, surface_mask surface = k_every_surface);

}  // namespace warden::fields
