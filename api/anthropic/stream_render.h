// One Anthropic message built from model events (client path) or tool-loop events (server
// tools), as the SSE frames Anthropic streams and as the final message object.
//
// Frames (`event: <type>\ndata: <json>\n\n`, Anthropic's streaming format):
//   start_frame()       message_start {message: {id, type: "message", role: "assistant",
//                       content: [], model, stop_reason: null, stop_sequence: null,
//                       usage: {input_tokens: 0, output_tokens: 0}}} — the counts come in
//                       message_delta (the upstream reports them at the end)
//   text                content_block_start {type: text, text: ""} once per run of text, then
//                       content_block_delta text_delta; empty text opens no block (so no empty
//                       text block precedes a tool block)
//   reasoning           a thinking block {thinking: "", signature: ""} + thinking_delta
//   client tool call    tool_use block {id: "toolu_…", name, input: {}} + input_json_delta
//                       {partial_json} per argument fragment, as they arrive; each call is its
//                       own block (parallel calls are never concatenated). The block opens
//                       when its name is complete (first fragment, its end, or another event).
//                       Calls whose fragments interleave (index 0, 1, 0, 1, …): a call that
//                       starts while the open call's arguments are not yet a whole object
//                       waits, its fragments buffered, until the open block ends (its
//                       arguments complete, its finish, or any other event); then it gets its
//                       own block with what was buffered, and goes on live. So every block has
//                       its whole input and only one block is open at a time.
//                       What the client reassembles always parses as a JSON object: text is
//                       sent up to the last safe point of a valid object prefix, nothing after a
//                       byte that breaks it, and the block ends with one more delta that closes
//                       the object (api/wire/json_prefix.h); the final message holds that same object
//   server tool call    (tool loop tool_start) server_tool_use {id: "srvtoolu_…", name, input: {}}
//                       + one input_json_delta with the whole arguments + stop; its result
//                       (tool_end) is a block {type: "<tool>_tool_result", tool_use_id:
//                       "srvtoolu_…", content: [{type: text, text: <what the model saw>}]} sent
//                       whole in content_block_start, then stop, then the reference's
//                       non-standard `event: tool_result` {type: "tool_result", tool_use_id,
//                       content} (SDKs ignore unknown events). tool_status / tool_output /
//                       provisional cards have no place on this wire and are not sent
//   ping                event: ping {type: "ping"}
//   finish_frames()     content_block_stop of the open block, message_delta {delta:
//                       {stop_reason, stop_sequence}, usage: {input_tokens, output_tokens}},
//                       message_stop
// Every block gets the next `index` (0, 1, …) and is stopped before the next one starts.
// stop_reason: "tool_use" when the turn ends in client tool calls (finish tool_calls, or any
// tool_use block), "max_tokens" (length), "stop_sequence" (a stop sequence matched), "refusal"
// (content_filter), "end_turn" otherwise.
// Thread-safety: one builder per response.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/loop_events.h"
#include "api/wire/json_prefix.h"
#include "common/json_util.h"
#include "model/conversation.h"
#include "model/events.h"

namespace warden::api::anthropic {

/// Anthropic's stop_reason for a finished message (rules above).
const char* stop_reason_for(model::finish_reason f, bool had_tool_use, bool stop_sequence_matched) noexcept;

class message_builder {
 public:
  message_builder(std::string id, std::string model);

  std::string start_frame() const;
  /// The frames for a model event (client path); usage/finish/error are recorded, not framed.
  std::string on_model_event(const model::stream_event& ev);
  /// The frames for a tool-loop event (server-tool path).
  std::string on_loop_event(const agent::loop_event& ev);
  std::string finish_frames(const std::string& stop_reason, const std::string& stop_sequence,
                            const std::optional<model::usage>& usage);
  /// The whole message (non-streaming answer).
  json message(const std::string& stop_reason, const std::string& stop_sequence,
               const std::optional<model::usage>& usage);

  bool had_tool_use() const { return had_tool_use_; }
  std::optional<model::finish_reason> finish() const { return finish_; }
  const std::optional<model::usage>& usage() const { return usage_; }
  const std::optional<error>& failure() const { return failure_; }
  const std::string& id() const { return id_; }

 private:
  enum class kind { none, text, thinking, tool_use };
  struct pending_call {
    std::size_t upstream_index = 0;
    std::string name;
  };
  std::string text_like(kind k, const std::string& text);
  std::string tool_started(const model::tool_call_started& s);
  std::string tool_fragment(const model::tool_call_arguments_delta& d);
  std::string tool_finished(const model::tool_call_finished& f);
  std::string feed_open(const std::string& fragment);
  bool open_call_done() const;
  std::string open_waiting();
  std::string advance();
  std::string end_calls();
  std::string open_pending();
  std::string close_open();
  std::string server_call(const agent::tool_start& s);
  std::string server_result(const agent::tool_end& e);
  std::string start_block(json block);
  /// `event: context_truncated` (data: {"type":"context_truncated", …api/wire truncation_json});
  /// the non-streaming message carries the same object as `context_truncated`.
  std::string truncated(const model::context_truncated& t);
  std::optional<json> truncated_;

  std::string id_;
  std::string model_;
  json blocks_ = json::array();           ///< the content so far (tool_use inputs filled at the end)
  std::map<std::size_t, std::size_t> call_block_;  ///< upstream call index → block index
  std::map<std::size_t, std::string> call_args_;   ///< block index → arguments text (as sent)
  struct call_arguments {
    wire::json_object_prefix prefix;
    std::string accepted;   ///< what the prefix accepted
    std::size_t sent = 0;   ///< bytes of `accepted` sent (up to its last safe point)
  };
  std::map<std::size_t, call_arguments> prefixes_;  ///< open client calls: their arguments so far
  std::map<std::string, std::string> server_ids_;  ///< loop call id → srvtoolu id
  /// A client call that started while another call's block was open and unfinished.
  struct waiting_call {
    std::size_t upstream_index = 0;
    std::string name;
    std::string arguments;  ///< fragments as received, fed when its block opens
    bool finished = false;
  };
  std::optional<pending_call> pending_;
  std::vector<waiting_call> waiting_;     ///< in the order they started
  kind open_ = kind::none;
  std::size_t open_call_ = 0;             ///< upstream index of the open tool_use block
  bool open_finished_ = false;            ///< the open client call's finish has been seen
  bool had_tool_use_ = false;
  std::optional<model::finish_reason> finish_;
  std::optional<model::usage> usage_;
  std::optional<error> failure_;
};

/// `event: <name>\ndata: <json>\n\n`.
std::string event_frame(const char* name, const json& data);
/// `event: ping` {"type":"ping"}.
std::string ping_frame();

}  // namespace warden::api::anthropic
