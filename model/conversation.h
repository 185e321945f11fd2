// model — the one typed conversation model every API surface converts to and from (DESIGN §3).
//
// A surface (api/openai, api/anthropic, …) parses its wire format into these values, the loop
// (agent/) and the upstream conversation (engine/chat_backend.h) work on them, and the surface
// renders the results back. Nothing here knows a wire format.
//
// Shapes:
//   message      = role + an ordered list of content parts + optional name + a pass-through bag
//                  (`extra`: fields of the surface's message that warden does not interpret,
//                  forwarded unchanged to an upstream of the same dialect)
//   content_part = text | reasoning | tool call | tool result | image | opaque (a part of a kind
//                  warden does not interpret, e.g. input_audio, carried as the surface's JSON)
//   chat_request = messages, tool specs, tool choice, parallel_tool_calls, sampling
//                  (typed fields warden reads or rewrites + `extra`, the fields it does not
//                  interpret: llama.cpp's n_probs, grammar, cache_prompt, … keep flowing)
//   usage        = token counts; finish_reason = why a turn ended
// Units: token counts are tokens; temperatures etc. are the sampler's own units.
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/json_util.h"

namespace warden::model {

enum class role { system, user, assistant, tool };

/// "system", "user", "assistant", "tool".
const char* to_string(role r) noexcept;
/// The four names (and "developer" → system, OpenAI's newer name); nullopt otherwise.
std::optional<role> parse_role(std::string_view s) noexcept;

struct text_part {
  std::string text;
};
/// The model's visible reasoning ("thinking"), kept apart from the answer text.
struct reasoning_part {
  std::string text;
};
/// A call the model made. `arguments` is JSON text as the model wrote it (it may be invalid).
struct tool_call_part {
  std::string id;
  std::string name;
  std::string arguments;
};
/// The answer to one tool call.
struct tool_result_part {
  std::string tool_call_id;
  std::string content;
  bool is_error = false;
};
/// An image by URL (http(s) or data:), with the surface's detail hint ("" when absent).
struct image_part {
  std::string url;
  std::string detail;
};
/// A part warden does not interpret, kept as the surface's JSON.
struct opaque_part {
  json value;
};

using content_part = std::variant<text_part, reasoning_part, tool_call_part, tool_result_part, image_part, opaque_part>;

struct message {
  model::role role = model::role::user;
  std::vector<content_part> content;
  std::string name;  ///< participant name, "" when absent
  json extra;        ///< uninterpreted fields of the wire message; null when none

  /// The concatenated text parts.
  std::string text() const;
  /// The tool calls, in order.
  std::vector<const tool_call_part*> tool_calls() const;
};

/// A tool the model may call: a function with a JSON-schema `parameters` object.
struct tool_spec {
  std::string name;
  std::string description;
  json parameters;
};

/// Why `name` cannot name a tool, or nullopt when it can: 1 to 128 bytes of ASCII letters,
/// digits and `_ - . : /`. OpenAI's and Anthropic's rule is `^[a-zA-Z0-9_-]{1,64}` (128 for
/// newer Anthropic models); warden also takes `.`, `:` and `/`, which MCP and namespaced tools
/// use (issue 24: `search.web_query`). A name with quotes, spaces or newlines would otherwise
/// reach the model's prompt and the healing stage as written. Pure; thread-safe.
std::optional<std::string> tool_name_problem(std::string_view name);

struct tool_choice {
  enum class mode { auto_, none, required, named };
  mode kind = mode::auto_;
  std::string name;  ///< the function, for `named`
};

/// Sampling fields warden reads or rewrites; everything else of the request is in `extra`.
struct sampling {
  std::optional<double> temperature;
  std::optional<double> top_p;
  std::optional<std::int64_t> max_tokens;
  std::optional<std::int64_t> seed;
  std::optional<std::vector<std::string>> stop;
  json extra = json::object();  ///< pass-through bag (an object), forwarded unchanged
};

/// Where a pool of engines sends a request (engine/engine_pool.h); without a pool only nothing.
/// Never sent upstream as such.
struct routing {
  std::string model;                ///< the model id the client asked for; "" = any engine
  std::string follow;               ///< affinity key: the session_id, or a previous_response_id; "" = none
  std::vector<std::string> record;  ///< keys remembered for the engine that answers
};

struct chat_request {
  std::vector<message> messages;
  std::vector<tool_spec> tools;
  std::optional<model::tool_choice> tool_choice;  ///< nullopt = the upstream's default
  std::optional<bool> parallel_tool_calls;        ///< nullopt = the upstream's default
  model::sampling sampling;
  bool include_usage = true;  ///< ask the upstream for token counts
  model::routing route;       ///< which engine of a pool; not part of the conversation
};

struct usage {
  std::int64_t prompt_tokens = 0;
  std::int64_t completion_tokens = 0;
  std::int64_t total_tokens = 0;
  usage& operator+=(const usage& o) noexcept {
    prompt_tokens += o.prompt_tokens;
    completion_tokens += o.completion_tokens;
    total_tokens += o.total_tokens;
    return *this;
  }
  bool operator==(const usage&) const = default;
};

enum class finish_reason { stop, length, tool_calls, content_filter };

/// "stop", "length", "tool_calls", "content_filter".
const char* to_string(finish_reason f) noexcept;
/// The four names; nullopt otherwise.
std::optional<finish_reason> parse_finish_reason(std::string_view s) noexcept;

}  // namespace warden::model
