#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>

#include "common/field_table.h"

namespace warden::fields {
namespace {

std::optional<error> needs_x(json& body) {
  if (!body.contains("x")) return make_error(errc::invalid_request, "'x' is missing", "x", "custom");
  body["x"] = "normalised";
  return std::nullopt;
}

constexpr std::string_view k_colours[] = {"red", "green"};
constexpr surface_mask k_a = 1;
constexpr surface_mask k_b = 2;

constexpr field k_rows[] = {
    {.name = "flag", .type = field_type::boolean},
    {.name = "label", .type = field_type::string, .required = true},
    {.name = "id", .type = field_type::string, .want = "an id", .nonempty = true},
    {.name = "opts", .type = field_type::object},
    {.name = "ratio", .type = field_type::number, .lo = 0.0, .hi = 1.5},
    {.name = "count", .type = field_type::integer, .alias = "n", .min = -1, .max = 10},
    {.name = "big", .type = field_type::integer, .min = INT64_MIN, .max = INT64_MAX},
    {.name = "colour", .type = field_type::one_of, .one_of = k_colours, .message = "'colour' must be red or green"},
    {.name = "legacy", .type = field_type::refused, .message = "'legacy' is gone", .code = "unsupported_parameter"},
    {.name = "only_a", .type = field_type::integer, .min = 0, .max = 1, .required = true, .surfaces = k_a},
};

struct expect {
  const char* body;          ///< merged into a valid base body
  const char* message;       ///< "" when the body passes
  const char* param;
  const char* code;
};

// One row per rule of the engine; the base body {"label":"l","only_a":0} passes.
const expect k_cases[] = {
    {R"({})", "", "", ""},
    {R"({"flag":null,"id":null,"opts":null,"ratio":null,"count":null,"colour":null,"legacy":null})", "", "", ""},
    {R"({"flag":true,"id":"x","opts":{},"ratio":1.5,"count":-1,"n":10,"big":-9223372036854775808,"colour":"red"})", "", "",
     ""},
    {R"({"flag":"yes"})", "'flag' must be a boolean, not string", "flag", "invalid_type"},
    {R"({"label":null})", "'label' is required", "label", "missing_required_parameter"},
    {R"({"label":3})", "'label' must be a string, not integer", "label", "invalid_type"},
    {R"({"id":""})", "'id' must be an id, not string", "id", "invalid_type"},
    {R"({"id":5})", "'id' must be an id, not integer", "id", "invalid_type"},
    {R"({"opts":[]})", "'opts' must be an object, not array", "opts", "invalid_type"},
    {R"({"ratio":"1"})", "'ratio' must be a number, not string", "ratio", "invalid_type"},
    {R"({"ratio":1.6})", "'ratio' must be between 0.0 and 1.5, got 1.6", "ratio", "invalid_value"},
    {R"({"ratio":-0.5})", "'ratio' must be between 0.0 and 1.5, got -0.5", "ratio", "invalid_value"},
    {R"({"count":1.5})", "'count' must be an integer, not number", "count", "invalid_type"},
    // a positive JSON integer is parsed unsigned: above the range it is "at most"
    {R"({"count":11})", "'count' must be at most 10", "count", "invalid_value"},
    {R"({"count":-3})", "'count' must be between -1 and 10, got -3", "count", "invalid_value"},
    {R"({"count":18446744073709551615})", "'count' must be at most 10", "count", "invalid_value"},
    // the alias: same rule, its own param, checked after the name
    {R"({"n":-2})", "'n' must be between -1 and 10, got -2", "n", "invalid_value"},
    {R"({"count":-3,"n":-2})", "'count' must be between -1 and 10, got -3", "count", "invalid_value"},
    {R"({"big":18446744073709551615})", "'big' must be at most 9223372036854775807", "big", "invalid_value"},
    {R"({"colour":"blue"})", "'colour' must be red or green", "colour", "invalid_value"},
    {R"({"colour":1})", "'colour' must be red or green", "colour", "invalid_value"},
    {R"({"legacy":false})", "'legacy' is gone", "legacy", "unsupported_parameter"},
    // the order of the table is the order of the faults
    {R"({"flag":1,"legacy":1})", "'flag' must be a boolean, not integer", "flag", "invalid_type"},
    {R"({"legacy":1,"colour":"blue"})", "'colour' must be red or green", "colour", "invalid_value"},
};

TEST(FieldTable, EachRuleAnswersAsTabled) {
  for (const auto& c : k_cases) {
    json body = json::parse(c.body);
    if (!body.contains("label")) body["label"] = "l";
    if (!body.contains("only_a")) body["only_a"] = 0;
    const auto e = check_fields(body, k_rows, k_a);
    if (std::string(c.message).empty()) {
      EXPECT_FALSE(e) << c.body << ": " << (e ? e->message : "");
      continue;
    }
    ASSERT_TRUE(e) << c.body;
    EXPECT_EQ(e->code, errc::invalid_request) << c.body;
    EXPECT_EQ(e->message, c.message) << c.body;
    EXPECT_EQ(e->param, c.param) << c.body;
    EXPECT_EQ(e->type_code, c.code) << c.body;
  }
}

TEST(FieldTable, RowsOfOtherSurfacesAreSkipped) {
  json body = {{"label", "l"}};
  auto e = check_fields(body, k_rows, k_a);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->message, "'only_a' is required");
  EXPECT_EQ(e->type_code, "missing_required_parameter");
  EXPECT_FALSE(check_fields(body, k_rows, k_b));
  body["only_a"] = 7;  // not even checked on surface b
  EXPECT_FALSE(check_fields(body, k_rows, k_b));
  ASSERT_TRUE(check_fields(body, k_rows, k_a));
}

TEST(FieldTable, CustomRowsRunAbsentOrNotAndMayNormalise) {
  constexpr field rows[] = {
      {.name = "x", .type = field_type::custom, .check = &needs_x},
      {.name = "y", .type = field_type::boolean},
  };
  json body = json::object();
  auto e = check_fields(body, rows);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->message, "'x' is missing");
  EXPECT_EQ(e->type_code, "custom");
  body = {{"x", 1}, {"y", true}};
  EXPECT_FALSE(check_fields(body, rows));
  EXPECT_EQ(body["x"], "normalised");
  body = {{"x", 1}, {"y", 0}};
  e = check_fields(body, rows);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->param, "y");
}

TEST(FieldTable, AnEmptyTableAcceptsAnything) {
  json body = {{"anything", json::array()}};
  EXPECT_FALSE(check_fields(body, std::span<const field>{}));
}

}  // namespace
}  // namespace warden::fields
