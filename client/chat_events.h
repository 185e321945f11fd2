// `warden chat`, the pure part: what the server's stream says, what the person typed, what the
// next request carries. No I/O here, so every rule is table-tested (client/chat_events_test.cpp).
//
// The stream (README "Talk to it", "Let the model run tools"): each SSE `data:` payload of
// POST /v1/chat/completions is one of
//   {"choices":[{"delta":{"content"?, "reasoning_content"?}, "finish_reason"?}], …}  a chunk
//   {"type":"tool_start"|"tool_status"|"tool_output"|"tool_args"|"tool_end", …}      a control frame
//   {"type":"elicitation_request", …}          an MCP server asks the person (docs/api/openai.md)
//   {"error":{"message", …}}                                                          an in-band error
//   [DONE]                                                                            the end
// parse_stream_data() turns one payload into the typed events below, in the order they happen
// inside the payload (reasoning, then content, then the finish). A payload that is not JSON, or
// a frame of a type this client does not know, gives no event (newer servers may add frames).
//
// Thread-safety: pure functions and plain values.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/json_util.h"
#include "common/permission_mode.h"

namespace warden::client {

// --- stream events ----------------------------------------------------------------------

struct text_event {
  std::string text;
  bool reasoning = false;  ///< delta.reasoning_content (shown dimmed, never kept in the history)
};
struct finish_event {
  std::string reason;  ///< "stop", "length", "tool_calls", …
};
struct risk_info {
  std::string level;                 ///< "low" | "high" (whatever the server sent)
  std::vector<std::string> reasons;  ///< may be empty
};
struct tool_start_event {
  std::string tool;
  std::string call_id;
  json arguments = json::object();  ///< as sent ({} on provisional cards)
  std::string approval_id;          ///< "" unless awaiting
  bool awaiting = false;            ///< awaiting_confirmation: a person must answer
  bool provisional = false;         ///< provenance.provisional: an early card, the real one follows
  std::optional<risk_info> risk;    ///< absent when the server did not classify the call
};
struct tool_status_event {
  std::string text;  ///< "" clears the status line
};
struct tool_output_event {
  std::string tool;
  std::string call_id;
  std::string text;
};
struct tool_args_event {
  std::string tool;
  std::string call_id;
  std::string text;  ///< a raw fragment of the arguments' JSON
};
struct tool_end_event {
  std::string tool;
  std::string call_id;
  std::string result;                     ///< what the model is told
  std::optional<std::string> decided_by;  ///< "user", "rule", "auto", "policy", "bypass", "expired", "client_gone", "cancel"
  std::optional<bool> allowed;            ///< whether the gate let the call run
};
/// An MCP server asks the person for input during a call (issue 26; docs/api/openai.md "MCP
/// servers asking for input"): a form (`schema`, a flat object of string / number / integer /
/// boolean properties) or a URL to visit (never opened by the client). Answered with
/// accept (+ content) / decline / cancel (client/chat_elicit.h).
struct elicitation_event {
  std::string tool;  ///< the call that asked: "<server>__<tool>"
  std::string call_id;
  std::string approval_id;  ///< "" makes it unanswerable (not askable)
  std::string server;
  std::string mode = "form";      ///< "form" | "url" (anything else is shown as a form)
  std::string message;
  json schema = json::object();   ///< form: requested_schema ({} when absent or not an object)
  std::string url;                ///< url mode
};
struct error_event {
  std::string message;
};
struct done_event {};

using stream_event = std::variant<text_event, finish_event, tool_start_event, tool_status_event, tool_output_event,
                                  tool_args_event, tool_end_event, elicitation_event, error_event, done_event>;

/// The events of one SSE data payload (see the header comment); empty for pings, usage-only
/// chunks, unknown frame types and payloads that are not JSON.
std::vector<stream_event> parse_stream_data(std::string_view data);

// --- the person's answers ----------------------------------------------------------------

/// The four answers to a card, and their wire names for POST /api/inference/tool-confirm.
enum class decision { allow, allow_session, allow_always, deny };

/// y/yes → allow, a → allow_session, A → allow_always, n/no → deny (surrounding spaces
/// ignored; "yes"/"no" in any case). Anything else, the empty line included, is nullopt: ask again.
std::optional<decision> parse_answer(std::string_view line);

/// "allow", "allow_session", "allow_always", "deny".
const char* wire_name(decision d);

// --- settings ------------------------------------------------------------------------------

/// The permission modes (README "Which mode a request gets") and their wire names are the
/// server's (common/permission_mode.h: permission_mode, to_string, parse_permission_mode).
using warden::permission_mode;

/// What the person typed for a mode: a wire name in any case, surrounding spaces ignored
/// (" AUTO " → auto); nullopt otherwise.
std::optional<permission_mode> parse_mode(std::string_view text);

/// What `/tools` set: nullopt = every tool (no `enabled_tools` field); otherwise the names,
/// possibly none (`enabled_tools: []`).
using tool_selection = std::optional<std::vector<std::string>>;

/// The tools this client knows by name (README's built-in tools); /tools and --tools refuse
/// others at once, rather than letting the next question fail with the server's 400.
inline constexpr std::string_view k_known_tools[] = {"python", "terminal", "edit_file", "web_search", "render_html"};

/// Parses `/tools` arguments: "all" → nullopt (every tool), "none" → {} (no tool), or names
/// separated by commas and/or spaces ("python,terminal", "python terminal"), each
/// one of k_known_tools, duplicates dropped. On a bad or unknown name: an error message in `error`, and
/// the return value is meaningless.
tool_selection parse_tool_selection(std::string_view text, std::string& error);

/// "all", "none", or the names joined by ", ".
std::string describe_tools(const tool_selection& tools);

/// One `/command args` line: name without the slash ("" when the line is not a command), and
/// the rest with surrounding spaces removed.
struct command_line {
  std::string name;
  std::string args;
};
command_line parse_command(std::string_view line);

// --- requests ------------------------------------------------------------------------------

struct chat_message {
  std::string role;  ///< "user" | "assistant"
  std::string content;
};

/// What one question's request carries besides the conversation.
struct run_settings {
  std::string model;
  permission_mode mode = permission_mode::ask;
  std::string session_id;
  tool_selection tools;
  bool mcp = false;  ///< `mcp_enabled: true`: the MCP servers' tools are offered too (`<server>__<tool>`)
  /// Sent first as a system message when not empty. Small models answer far better with one
  /// (without it SmolLM2's template inserts its own and the default model rambles).
  std::string system_prompt;
};

/// The body of POST /v1/chat/completions for one run: {"model", "messages" (the system prompt
/// first when set), "stream": true,
/// "enable_tools": true, "permission_mode", "session_id", "cancel_id", "enabled_tools"?,
/// "mcp_enabled"? (true when `mcp` is set)}.
json chat_request_body(const run_settings& s, const std::vector<chat_message>& messages, std::string_view cancel_id);

/// {"approval_id", "decision", "session_id"} for POST /api/inference/tool-confirm.
json confirm_body(std::string_view approval_id, decision d, std::string_view session_id);

/// The message of an error answer: the OpenAI envelope's error.message when the body is one,
/// else the body's first line (at most 200 bytes), prefixed with the HTTP status:
/// "HTTP 401: wrong API key".
std::string http_error_message(long status, std::string_view body);

/// A session id warden accepts, [A-Za-z0-9_-]{1,64}: the server's own rule,
/// warden::valid_session_id (common/permission_mode.h).
using warden::valid_session_id;

/// The first model id of a GET /v1/models body ({"data":[{"id"}…]}); nullopt when none.
std::optional<std::string> first_model_id(std::string_view body);

/// `url` without a trailing slash and without a trailing "/v1" (so both the server's root and
/// the OpenAI base URL work).
std::string normalize_base_url(std::string_view url);

/// Percent-encodes a query value (RFC 3986 unreserved characters stay).
std::string url_encode(std::string_view text);

}  // namespace warden::client
