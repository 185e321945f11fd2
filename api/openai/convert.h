// OpenAI chat-completions request → the typed conversation model (model/conversation.h).
//
// to_model_request() takes a body already validated by parse_chat_request() (extension fields
// removed) and converts it for the tool loop:
//   messages: role (developer → system, the legacy "function" role → tool), content (a string →
//     one text part; a list → text / image_url parts, typed only when they carry nothing else;
//     any other part, or one with extra fields such as cache_control, kept verbatim), name,
//     reasoning_content → a reasoning part, assistant tool_calls → tool-call parts (arguments
//     as JSON text; an object is serialized), tool_call_id + content → a tool-result part (a
//     tool message holds that part alone: its tool_calls and reasoning_content are not read);
//     other message fields ride along in `extra`;
//   tools: the client's function tools → tool specs (name, description, parameters; other
//     kinds left out; the tool loop offers its own instead, agent/tool_loop.cpp);
//   tool_choice: "none" | "auto" | "required" | {"type":"function","function":{"name"}};
//   temperature, top_p, max_tokens (or max_completion_tokens), seed, stop (string or list) →
//     typed sampling; every other field (llama.cpp's extras included) → sampling.extra, except
//     messages, tools, tool_choice, parallel_tool_calls, stream, stream_options and model, which
//     the loop and the engine decide.
// Errors: errc::invalid_request with `param` naming the field (e.g.
// "messages[1].tool_calls[0]") for shapes the validator lets through but the model cannot hold.
// Thread-safety: pure function.
#pragma once

#include "common/json_util.h"
#include "common/result.h"
#include "model/conversation.h"

namespace warden::api::openai {

result<model::chat_request> to_model_request(json body);

/// One wire message → a model message (`where` names it in errors, e.g. "messages[2]").
result<model::message> to_model_message(const json& m, const std::string& where);

}  // namespace warden::api::openai
