// model events — what one model turn produces, as it streams (DESIGN §3).
//
// engine::chat_backend decodes an upstream's stream into these; the loop (agent/) reads them;
// surfaces render them. One turn is a sequence of events ended by the stream's end (the
// producer returns nullopt): `finish` comes once when the upstream says why it stopped, `usage`
// may follow it. Tool calls are identified by `index` within the turn: `tool_call_started`
// first (a repeated one for the same index extends the name: some servers split it),
// then argument fragments in order, then `tool_call_finished` (at the latest at the end of the
// turn). `ping` = the upstream is silent but alive (a keep-alive may be sent). `error` ends the
// turn (the upstream failed mid-stream). `context_truncated` comes first, before anything of the
// turn, when messages were dropped so that the prompt fits the model's context (model/context_fit.h).
// Thread-safety: plain values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "common/error.h"
#include "model/conversation.h"

namespace warden::model {

struct text_delta {
  std::string text;
};
struct reasoning_delta {
  std::string text;
};
struct tool_call_started {
  std::size_t index = 0;
  std::string id;    ///< "" when the upstream gave none (the loop assigns one)
  std::string name;  ///< may be a fragment (see above)
  bool healed = false;  ///< written by the model as text and turned into a call (engine/healing.h)
};
struct tool_call_arguments_delta {
  std::size_t index = 0;
  std::string fragment;  ///< JSON text fragment
};
struct tool_call_finished {
  std::size_t index = 0;
};
struct usage_event {
  model::usage usage;
};
struct finish_event {
  finish_reason reason = finish_reason::stop;
};
struct ping_event {};
struct error_event {
  warden::error failure;
};

/// One message left out of the prompt (context_truncated).
struct dropped_message {
  std::size_t index = 0;                   ///< its position in the turn's conversation (the typed model's)
  std::string role;                        ///< "user", "assistant", "tool"
  std::vector<std::string> tool_call_ids;  ///< the calls it made or answered
  std::string preview;                     ///< the start of its text (≤ 80 characters, valid UTF-8)
};
/// Messages were dropped before the turn so that the prompt fits (context_overflow policy).
struct context_truncated {
  std::string policy;  ///< "truncate_middle" | "truncate_oldest"
  std::vector<dropped_message> dropped;
  std::int64_t prompt_tokens_before = 0;  ///< tokens, the model's tokenizer, the whole prompt
  std::int64_t prompt_tokens_after = 0;
  std::int64_t n_ctx = 0;                 ///< the context of one slot, tokens
};

using stream_event = std::variant<text_delta, reasoning_delta, tool_call_started, tool_call_arguments_delta,
                                  tool_call_finished, usage_event, finish_event, ping_event, error_event,
                                  context_truncated>;

}  // namespace warden::model
