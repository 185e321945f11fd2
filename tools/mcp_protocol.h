// mcp_protocol — the Model Context Protocol's messages as warden's MCP client uses them (issue 26;
// spec revisions 2025-06-18 and 2025-11-25, modelcontextprotocol.io/specification): JSON-RPC 2.0
// framing, the initialize handshake, tools/list pages, tools/call results flattened to text, and
// the rules warden applies to a server's tools (names, descriptions, annotations). Pure functions,
// table-tested (mcp_protocol_test.cpp).
//
// Names: `<server>__<tool>`, every character outside [A-Za-z0-9_-] replaced by '_'; a name over 64
// characters keeps its first 55 and gets "_" + 8 hex digits of a hash of the server's own name, so
// it stays unique and stable across restarts (the manager keeps the map back to the server's name).
// Descriptions: a description carrying chat-template markup (<|…|>, <tool_call>, [INST], <s>,
// <start_of_turn>, {% / {{ template tags, …; reference #7066) is shown neutralised (the markup's
// angle brackets and braces replaced) and the tool is not offered to the model at all.
// Annotations (readOnlyHint, destructiveHint, openWorldHint; the spec calls them untrusted hints)
// become traits only for a server the user marked `trusted`: readOnlyHint true → read_only,
// openWorldHint (default true) → reads_network. Untrusted, or read-only false: the tool is neither
// read-only nor code, so the `auto` classifier asks (risk/risk.h: "unknown tool").
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/json_util.h"
#include "common/result.h"
#include "tools/tool.h"

namespace warden::tools::mcp {

/// The revisions warden speaks, newest first; initialize offers the first.
inline constexpr const char* k_protocol_versions[] = {"2025-11-25", "2025-06-18"};
bool supported_version(std::string_view v) noexcept;

// JSON-RPC error codes (JSON-RPC 2.0 §5.1).
inline constexpr int k_parse_error = -32700;
inline constexpr int k_invalid_request = -32600;
inline constexpr int k_method_not_found = -32601;
inline constexpr int k_invalid_params = -32602;

json make_request(std::int64_t id, std::string_view method, json params);
json make_notification(std::string_view method, json params = json::object());
json make_response(const json& id, json result);
json make_error_response(const json& id, int code, std::string_view message);

/// initialize's params: the newest revision, warden's clientInfo, and the elicitation capability
/// (form and url modes) when the client can ask a person.
json initialize_params(bool elicitation);

/// What one incoming message is.
enum class message_kind { request, notification, response, error_response, invalid };
struct incoming {
  message_kind kind = message_kind::invalid;
  json id;                 ///< request / response ids (number or string)
  std::string method;      ///< request / notification
  json params = json::object();
  json result;             ///< response
  int error_code = 0;      ///< error_response
  std::string error_message;
};
incoming classify(const json& msg);

/// The negotiated revision from initialize's result, or why it cannot be used.
result<std::string> negotiated_version(const json& init_result);

/// One tool as the server describes it (tools/list).
struct tool_def {
  std::string name;
  std::string title;
  std::string description;
  json input_schema = json::object();
  json annotations = json::object();
  bool app_only = false;  ///< _meta.ui.visibility without "model": not for the model
};
/// One page of tools/list: its tools (entries without a string name are skipped) and the next
/// cursor ("" on the last page); an error when `result` has no tools array.
struct tools_page {
  std::vector<tool_def> tools;
  std::string next_cursor;
};
result<tools_page> parse_tools_page(const json& result);

/// `<server>__<tool>` under the naming rule above.
std::string qualified_name(std::string_view server_id, std::string_view tool);
bool has_template_markup(std::string_view text) noexcept;
/// `text` with template markup made inert (<| → ‹|, <tag> → ‹tag›, {% → {​%, …).
std::string neutralise(std::string_view text);
/// The traits of a server's tool (see the top of this file).
tool_traits traits_for(const json& annotations, bool trusted);

/// A tools/call result as text for the model: text parts as they are, an image or audio part as
/// "[image: mime, N bytes]", an embedded resource's text (or "[resource: uri]"), a resource link
/// as "[resource: uri]"; structuredContent as JSON when there is no text. is_error from isError.
struct call_output {
  std::string text;
  bool is_error = false;
};
call_output flatten_result(const json& result);

/// The elicitation/create request as the person sees it (spec "Elicitation"): form mode
/// ({message, requestedSchema} with a flat object of primitive properties: string (with
/// enum / titled oneOf consts, format, minLength/maxLength in characters), number/integer
/// (minimum/maximum), boolean, and 2025-11-25's multi-select: an array whose items are a string
/// enum or anyOf consts, with minItems/maxItems), or url mode
/// ({mode:"url", message, url, elicitationId}). An invalid request is an error (answered to the
/// server as invalid params).
struct elicitation_request {
  std::string mode = "form";  ///< "form" | "url"
  std::string message;
  json requested_schema = json::object();  ///< form: the flat object schema
  std::string url;                          ///< url mode: shown, never opened
  std::string elicitation_id;
};
result<elicitation_request> parse_elicitation(const json& params);
/// Checks a person's `content` against a form's schema (required fields present, types, enums,
/// bounds); the error names the field.
result<void> check_elicitation_content(const json& schema, const json& content);

}  // namespace warden::tools::mcp
