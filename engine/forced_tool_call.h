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
//
// `tool_choice: "required"` is forced the same way when the served template cannot render tools
// (model_caps.native_tool_calls false: llama-server then ignores `required`). With one declared
// function it is that function's named call; with several the model writes
// {"name": N, "parameters": {…}} (sorted keys put the name first) under a schema that is the
// anyOf of one such object per declared function (name as a const), and warden turns it into the call. That answer is buffered while it
// streams (the name comes whole only at the end) and sent as one tool_calls delta with the
// finish; an answer that does not parse (cut by max_tokens) stays text with its finish_reason.
// Past k_any_of_max_functions functions or k_any_of_max_schema_bytes of argument schemas, the
// schema constrains only the name (an enum) and asks for an object as arguments: llama-server
// turns the schema into a grammar it checks every token against. Measured 2026-12-03 on 2 cores,
// default model, 40 tokens, prompt cached: 400 full schemas 5.8-6.3 s, the 400 names 1.2 s,
// 32 full schemas 0.9 s. (Uncached, the prompt that lists 400 functions costs ~30 s more.)
//
// JSON mode: llama-server ignores `response_format: {"type":"json_object"}` but enforces
// `json_schema`, so for warden's own llama-server json_object becomes a json_schema whose schema
// is {"type":"object"} (enforce_json_object). A model without its own chat template (llama-server's
// ChatML fallback) gets "<|im_end|>" as a stop string (add_chatml_stop).
// Thread-safety: pure functions; a stream_rewriter belongs to one stream.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/json_util.h"

namespace warden::engine {

struct forced_call {
  std::string name;         ///< function name; "" for a choice among several (`required`)
  std::string description;  ///< function description ("" when absent)
  json parameters;          ///< JSON schema of the arguments
  std::string call_id;      ///< id given to the resulting tool call (ids::kind::tool_call: "call_" + 24 chars)
  std::vector<std::string> names{};  ///< the declared functions, for a choice among several
  bool any_of() const { return name.empty(); }
};

/// Above either limit, `required` over several functions constrains the name only (see above).
inline constexpr std::size_t k_any_of_max_functions = 32;
inline constexpr std::size_t k_any_of_max_schema_bytes = 16 * 1024;

/// The forced function of a request whose tool_choice names one listed in `tools`; with
/// `force_required`, also for `tool_choice: "required"` (the single declared function, or a
/// choice among all of them). nullopt for any other request (no tools, unknown name, "auto").
std::optional<forced_call> find_forced_call(const json& body, bool force_required = false);

/// `response_format: {"type":"json_object"}` → {"type":"json_schema","json_schema":{"name":
/// "json_object","schema":{"type":"object"}}}; any other body is left alone.
void enforce_json_object(json& body);

/// Adds "<|im_end|>" to the body's `stop` (a string or an array; created when absent; at most
/// once). A `stop` of another type is left for the upstream to refuse.
void add_chatml_stop(json& body);

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
  void rewrite_any_of(json& choice);

  forced_call call_;
  bool announced_ = false;
  std::string buffered_;  ///< any_of: the answer so far
};

}  // namespace warden::engine
