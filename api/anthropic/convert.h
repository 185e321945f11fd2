// Anthropic Messages wire format ↔ the typed conversation model (model/conversation.h).
//
// to_model_messages(system, messages) — a body already shape-checked by messages_request.h:
//   system: a string, or a list of text blocks (joined with "\n\n") → one system message first;
//   user content: a string → one text part; blocks: text → text part; image with a base64
//     source → image part "data:<media_type>;base64,<data>", with a url source → image part
//     <url>; document with a text source (or plain-text base64) → text part; tool_result →
//     one tool message (tool_use_id → tool_call_id; content a string or a list of text blocks
//     and text-source documents joined with "\n", image blocks there become "[image]"; is_error
//     kept), splitting the user
//     message so that order is kept (results first, then the rest as a user message); any other
//     block (thinking in a user message included) is refused;
//   assistant content: a string → text; text → text part; thinking → reasoning part (the
//     signature is dropped: warden's models do not sign); redacted_thinking → dropped (encrypted
//     for another provider's model); tool_use and server_tool_use → tool-call parts (input
//     serialized as JSON text); a `*_tool_result` block (warden's or Anthropic's server-tool
//     results, passed back) → a tool message after the calls so far, and the assistant message
//     goes on after it.
// to_anthropic(messages) — the inverse: {"system": string (absent when none), "messages": [...]}:
//   system messages → `system` (joined with "\n\n"); tool messages, and a user message right
//   after them, → one user message of tool_result blocks (+ its own blocks); a message whose
//   content is a single text part → a string; reasoning → thinking blocks (signature ""); tool
//   calls → tool_use blocks whose `input` is the parsed arguments ({} when they are not a JSON
//   object); opaque parts (OpenAI-only kinds such as input_audio) are dropped.
// Round trip: to_model_messages(to_anthropic(m)) == m for every conversation that
// to_model_messages produced (property-tested from OpenAI-shaped conversations, convert_test.cpp).
// Errors (to_model_messages): errc::invalid_request, `param` naming the block
// ("messages[1].content[0].source") — an unsupported block type or source.
// Thread-safety: pure functions.
#pragma once

#include <vector>

#include "common/json_util.h"
#include "common/result.h"
#include "model/conversation.h"

namespace warden::api::anthropic {

result<std::vector<model::message>> to_model_messages(const json& system, const json& messages);

json to_anthropic(const std::vector<model::message>& messages);

/// One assistant message's parts as Anthropic content blocks (thinking, text, tool_use), in order.
json content_blocks(const model::message& m);

/// A tool call's arguments as a tool_use `input`: the parsed object, {} when not a JSON object.
json tool_input(const std::string& arguments);

}  // namespace warden::api::anthropic
