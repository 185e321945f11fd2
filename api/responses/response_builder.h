// response_builder — one Responses API answer as it is produced: the `response` object, its
// `output` items, and the SSE events that describe them, in OpenAI's shapes.
//
// Events are JSON values {"type": …, "sequence_number": n, …} (n from 0, +1 per event, never
// reused) so a caller can store them (background runs replay them) and frame them with sse().
//   start()            → response.created, response.in_progress (status in_progress)
//   on_model_event()   → text: a `message` item (output_item.added, content_part.added
//                        output_text, output_text.delta…); reasoning: a `reasoning` item with a
//                        reasoning_text part (reasoning_text.delta…); tool calls: `function_call`
//                        items (function_call_arguments.delta…, .done, output_item.done). An item
//                        is closed (…done events) when another kind of output starts or at the end.
//   on_loop_event()    → text and reasoning as above; warden's own tool calls (the loop ran
//                        them) are `mcp_call` items (server_label "warden", output = the result
//                        the model saw), opened on tool_start and closed on tool_end; every tool
//                        event is also sent as warden's control event (wire::control_json:
//                        tool_start with approval_id/awaiting_confirmation when a person is asked
//                        over the stream, tool_status, tool_output, tool_end), with a sequence
//                        number, so a client of the reference's protocol can answer
//                        /api/inference/tool-confirm.
//   (background runs, set_approval_items: a tool_start that waits for a person also adds an
//                        mcp_approval_request item "mcpr_<approval id>")
//   approval_requests() → one `mcp_approval_request` item per call that needs a person
//                        (id "mcpr_…", name, arguments, server_label "warden"); returns the
//                        request id → call id map to store.
//   finish()           → closes open items, then response.completed (or response.incomplete
//                        with incomplete_details.reason "max_output_tokens" when the turn hit its
//                        length limit, or response.failed with error {code, message}).
// response() is the object itself (what a non-streaming request gets, GET /v1/responses/{id}
// returns, and the created/completed events carry): id, object "response", created_at (Unix s),
// status, error, incomplete_details, instructions, model, output, parallel_tool_calls,
// previous_response_id, reasoning, store, background, temperature, top_p, max_output_tokens,
// text, tool_choice, tools, truncation "disabled", metadata, usage {input_tokens,
// input_tokens_details.cached_tokens, output_tokens, output_tokens_details.reasoning_tokens,
// total_tokens} (null until finished), and output_text (the concatenated message text).
// Thread-safety: one builder per response, one thread at a time.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/loop_context.h"
#include "api/responses/items.h"
#include "agent/loop_events.h"
#include "common/error.h"
#include "common/json_util.h"
#include "model/events.h"

namespace warden::api::responses {

/// What a response object repeats from its request (responses_request.h echo + settings).
struct response_settings {
  std::string model;
  std::string previous_response_id;
  bool store = true;
  bool background = false;
  json echo = json::object();
  /// Flat function name → {namespace, name} (responses_request::namespaced): such a call's item
  /// carries `namespace` and the function's own name.
  std::map<std::string, std::pair<std::string, std::string>> namespaced{};
};

class response_builder {
 public:
  response_builder(std::string id, std::int64_t created_at, response_settings s);

  std::vector<json> start();
  std::vector<json> on_model_event(const model::stream_event& ev);
  std::vector<json> on_loop_event(const agent::loop_event& ev);
  /// The mcp_approval_request items for `turn`'s calls that need a person; `ids` gets
  /// approval request id → call id.
  std::vector<json> approval_requests(const agent::parked_turn& turn, std::map<std::string, std::string>& ids);
  /// Ends the response. `failure` set → failed; `cancelled` → status cancelled (its last event
  /// is response.incomplete: the Responses stream has no cancelled event); `length` →
  /// incomplete; otherwise completed.
  std::vector<json> finish(const std::optional<model::usage>& usage, bool length, const std::optional<error>& failure,
                           bool cancelled = false);
  /// A tool_start that waits for a person also adds an mcp_approval_request item whose id is
  /// "mcpr_" + the approval id (background runs: any client can answer it later).
  void set_approval_items(bool on) { approval_items_ = on; }
  /// An `error` event (a stream that cannot go on) — use before finish() with a failure.
  json error_event(const error& e);

  json response() const;
  /// The output as one assistant message (reasoning, text, function calls with their call ids;
  /// mcp_call and approval items left out: the loop's own messages carry them).
  model::message assistant_message() const;
  const std::string& id() const { return id_; }
  const std::string& status() const { return status_; }
  /// The sequence number the next event gets.
  std::int64_t next_sequence() const { return seq_; }
  /// Continues numbering after `n` events (a resumed background run).
  void set_next_sequence(std::int64_t n) { seq_ = n; }

 private:
  enum class open_kind { none, message, reasoning, function_call, mcp_call };
  json event(const char* type, json fields);
  /// The `context_truncated` event (api/wire truncation_json); the response object keeps the
  /// last one as `context_truncated`.
  void truncated(const model::context_truncated& t, std::vector<json>& out);
  std::optional<json> truncated_;
  void close_open(std::vector<json>& out, const char* message_status = "completed");
  void open_message(std::vector<json>& out);
  void open_reasoning(std::vector<json>& out);
  void text(const std::string& delta, std::vector<json>& out);
  void reasoning(const std::string& delta, std::vector<json>& out);
  void call_started(const model::tool_call_started& s, std::vector<json>& out);
  /// Gives a reasoning item its summary (reasoning.summary set) and sends its events.
  void add_summary(json& item, const std::string& text, std::vector<json>& out);
  /// Sets `item`'s name (and namespace) from the flat name the model wrote.
  void name_call(json& item, const std::string& flat) const;
  void call_args(const model::tool_call_arguments_delta& d, std::vector<json>& out);
  void call_finished(std::size_t index, std::vector<json>& out);
  void tool_started(const agent::tool_start& s, std::vector<json>& out);
  void tool_ended(const agent::tool_end& e, std::vector<json>& out);
  /// An MCP server's request for input (issue 26): an `mcp_elicitation_request` output item
  /// ({id: the approval_id, server_label, message, mode, requested_schema | url, tool_call_id});
  /// the client answers it through POST /api/inference/tool-confirm.
  void elicitation_item(const agent::elicitation_request& q, std::vector<json>& out);

  std::string id_;
  std::int64_t created_at_;
  response_settings settings_;
  std::string status_ = "in_progress";
  json output_ = json::array();
  json error_;                        ///< null unless failed
  json incomplete_;                   ///< null unless incomplete
  std::optional<model::usage> usage_;
  std::int64_t seq_ = 0;
  bool approval_items_ = false;
  open_kind open_ = open_kind::none;
  std::size_t open_index_ = 0;        ///< output index of the open message/reasoning item
  std::map<std::size_t, std::size_t> call_items_;   ///< turn call index → output index (open calls)
  std::map<std::size_t, std::string> call_names_;   ///< turn call index → the name as the model wrote it
  std::map<std::string, std::size_t> mcp_items_;    ///< call id → output index (open mcp_call items)
};

/// `event: <type>\ndata: <json>\n\n`.
std::string sse(const json& event);

}  // namespace warden::api::responses
