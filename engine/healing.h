// healing — a chat_backend that turns tool calls a model wrote as text into structured calls
// (tool_call_text.h), so every surface renders them as its own calls without knowing they were
// text (issue 24; reference unsloth-studio.md §2.8 and §6).
//
// healing_backend wraps another backend for one request with the names it declared (the
// client's `tools`, or the loop's enabled tools). Its turns pass every event through, except:
//   - text goes through a text_call_scanner: only a possible opener's prefix is held back (and,
//     at the turn's start, a possible bare call), so the time to the first token is unchanged
//     when no call comes; from an opener on, the rest of the turn's text is held;
//   - finish_event and what follows it (usage) are held to the turn's end;
//   - at the end, the held text is healed: text that stays text comes out as text_delta, each
//     healed call as tool_call_started{index, id "call_…", name, healed} + one
//     tool_call_arguments_delta (a JSON object's text) + tool_call_finished, with indices after
//     any structured call's; then finish_event — `tool_calls` when a call was healed — and the
//     held usage.
// A turn that already has structured calls is not healed (its text passes through unchanged),
// nor one cut by max_tokens (finish `length`: a call in it is cut short, and running a repaired
// half-command is not what the model meant), nor one whose request declared no tools. Reasoning is never touched. An error_event releases
// the held text as text first.
// Thread-safety: one backend per request coroutine; the wrapped backend is shared.
#pragma once

#include <set>
#include <string>

#include "engine/chat_backend.h"

namespace warden::engine {

class healing_backend : public decorating_backend {
 public:
  healing_backend(chat_backend& inner, std::set<std::string> declared);
  boost::asio::awaitable<result<std::unique_ptr<chat_turn>>> open_turn(
      const model::chat_request& req, std::shared_ptr<cancel_token> cancel,
      std::function<boost::asio::awaitable<bool>()> on_silence) override;

 private:
  std::set<std::string> declared_;
};

/// The function names `req` declares (its tools).
std::set<std::string> declared_tool_names(const model::chat_request& req);

}  // namespace warden::engine
