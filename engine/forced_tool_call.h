// Forced function calls for upstreams that cannot force one themselves.
//
// OpenAI's `tool_choice: {"type":"function","function":{"name":X}}` obliges the model to call X.
// llama-server (v0.4.0) ignores the object form ("type must be string") and, with a chat template
// that has no tool syntax, does not force `required` either. For such upstreams warden forces
// the call itself: the request asks for X's arguments as JSON constrained by X's `parameters`
// schema (llama-server turns `response_format: json_schema` into a grammar), and the answer is
// turned back into a standard `tool_calls` entry — non-streamed (rewrite_completion) or chunk by
// chunk (stream_rewriter), so clients see exactly what OpenAI would send:
// `delta.tool_calls[0]` with id/type/name first, then argument fragments, then
// `finish_reason: "tool_calls"`.
// Thread-safety: pure functions; a stream_rewriter belongs to one stream.
#pragma once

#include <optional>
#include <string>

#include "common/json_util.h"

namespace warden::engine {

struct forced_call {
  std::string name;         ///< function name
  std::string description;  ///< function description ("" when absent)
  json parameters;          ///< JSON schema of the arguments
  std::string call_id;      ///< id given to the resulting tool call (ids::kind::tool_call: "call_" + 24 chars)
};

/// The forced function of a request whose tool_choice names one listed in `tools`; nullopt for
/// any other request (no tools, string tool_choice, unknown name).
std::optional<forced_call> find_forced_call(const json& body);

/// The upstream request: tools/tool_choice removed, a JSON-schema response format and a system
/// instruction naming the function added.
json rewrite_request(json body, const forced_call& call);

/// A chat.completion whose message content holds the arguments → the same with `tool_calls`.
json rewrite_completion(json completion, const forced_call& call);

/// Rewrites streamed chunks in place.
class stream_rewriter {
 public:
  explicit stream_rewriter(forced_call call) : call_(std::move(call)) {}
  /// Rewrites one chat.completion.chunk.
  void rewrite(json& chunk);

 private:
  forced_call call_;
  bool announced_ = false;
};

}  // namespace warden::engine
