// `warden chat`, the pure part of answering an MCP server's request for input (issue 26) and of
// the approvals inbox (`--inbox`, `/inbox`): the form's fields, what a typed value becomes, the
// answers, the request bodies, the inbox's lines. No I/O; table-tested in
// client/chat_elicit_test.cpp. The prompts themselves: client/chat_ask.cpp.
//
// A form (elicitation_event::schema) is a flat object schema: properties of type string (enum,
// enumNames, minLength, maxLength, format), number / integer (minimum, maximum), boolean, each
// with an optional title, description and default; `required` names the fields that must be
// given. The fields are asked required ones first (in `required`'s order), then the others by
// name (the wire's object keys carry no order).
//
// Thread-safety: pure functions and plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client/chat_events.h"
#include "common/json_util.h"

namespace warden::client {

struct elicitation_field {
  std::string name;
  std::string title;        ///< "" when the schema has none
  std::string description;  ///< "" when the schema has none
  std::string type;         ///< "string" | "number" | "integer" | "boolean" (others are read as text)
  std::string format;       ///< a string's format ("email", "uri", "date", …), shown only
  std::vector<std::string> choices;  ///< a string's enum (in order); empty = free text
  std::vector<std::string> choice_labels;  ///< enumNames, when as many as choices; else empty
  std::optional<double> minimum, maximum;
  std::optional<std::int64_t> min_length, max_length;
  bool required = false;
  std::optional<json> default_value;  ///< taken on an empty line
};

/// The fields of a form, required first (see the header comment); properties that are not
/// objects are left out.
std::vector<elicitation_field> form_fields(const json& schema);

/// What a field is called on screen: its title, else its name.
std::string field_label(const elicitation_field& f);

/// The kind of value asked: "text", "text, 2 to 20 characters", "email", "whole number, at least
/// 0", "number, 0 to 1", "y/n", "choose 1-3".
std::string field_hint(const elicitation_field& f);

/// A typed line as the field's JSON value, or nullopt with the reason in `error`:
///   boolean: y/yes/true → true, n/no/false → false (any case);
///   integer: a whole number (surrounding spaces ignored), within minimum/maximum;
///   number: a finite number, within minimum/maximum;
///   enum: the choice's number (1-based) or the choice as written;
///   string: the text as typed, within minLength/maxLength (counted in characters).
/// The empty line is the caller's (skip, default, or "required").
std::optional<json> parse_field_value(const elicitation_field& f, std::string_view line, std::string& error);

/// The answers to a request for input, and their wire names for tool-confirm.
enum class elicit_decision { accept, decline, cancel };
const char* wire_name(elicit_decision d);

/// y/yes → accept, d/decline or n/no → decline, c/cancel → cancel (any case, surrounding spaces
/// ignored); anything else is nullopt: ask again.
std::optional<elicit_decision> parse_elicit_answer(std::string_view line);

/// The prompts under a form and under a URL.
inline constexpr std::string_view k_send_choices = "Send? [y]es / [d]ecline / [c]ancel";
inline constexpr std::string_view k_url_choices = "[y] done / [d]ecline / [c]ancel";

/// {"approval_id", "decision", "session_id", "content"? (accept only)} for
/// POST /api/inference/tool-confirm.
json elicit_confirm_body(std::string_view approval_id, elicit_decision d, const json& content,
                         std::string_view session_id);

/// The field a 400 answer names (`error.param` "content.<field>" → "<field>"); "" when it names
/// none.
std::string error_field(std::string_view body);

// --- the approvals inbox (GET /api/inference/approvals) ----------------------------------------

struct inbox_item {
  std::string kind;  ///< "tool_call" | "elicitation"
  std::string session_id;
  std::int64_t expires_at_ms = 0;  ///< 0 when the server sent none
  tool_start_event card;           ///< tool_call: awaiting, as the stream's card would be
  elicitation_event question;      ///< elicitation
};

/// The inbox's items, in the server's order (oldest first); items without an approval id are
/// left out. nullopt when the body is not {"data": [...]}.
std::optional<std::vector<inbox_item>> parse_inbox(std::string_view body);

/// One line for an item (no newline): "python · print(1) · session s1 · expires in 58 s" or
/// "fake asks: Who are you? (fake__ask) · session s1 · expires in 58 s"; made safe (one_line).
std::string inbox_line(const inbox_item& item, std::int64_t now_ms);

}  // namespace warden::client
