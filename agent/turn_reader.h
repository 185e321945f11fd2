// turn_reader — reads one model turn (engine::chat_turn) for the tool loop.
//
// Text and reasoning deltas are forwarded to the client as they arrive, with tool-call markup
// written as text held back (text_tool_calls.h: scanned even in a tool-less pass, so markup
// never reaches the user's text). Structured tool-call fragments are accumulated by index.
// At the end: the turn's visible text, its calls (structured ones win; otherwise the text ones,
// at most k_max_text_calls_per_turn, exact duplicates dropped; none when tools are off), the
// finish reason, usage, or the failure. Pings are forwarded as keep-alives.
// Thread-safety: one per turn.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <optional>
#include <string>
#include <vector>

#include "agent/loop_events.h"
#include "common/error.h"
#include "engine/chat_backend.h"
#include "model/conversation.h"

namespace warden::agent {

/// Text-form calls kept per turn (reference §2.5, _MAX_TOOL_CALLS_PER_TURN).
inline constexpr std::size_t k_max_text_calls_per_turn = 8;

/// A tool call as the model made it.
struct pending_call {
  std::string id;         ///< "" when the model gave none
  std::string name;
  std::string arguments;  ///< raw JSON text as the model wrote it
  bool from_text = false;  ///< written as text markup (healed)
};

/// Emits loop events and remembers when the client went away.
class event_out {
 public:
  explicit event_out(loop_sink& sink) : sink_(sink) {}
  /// False once the client is gone.
  boost::asio::awaitable<bool> send(loop_event ev);
  bool gone() const { return gone_; }

 private:
  loop_sink& sink_;
  bool gone_ = false;
};

struct turn_read {
  std::string text;  ///< visible text of the turn
  std::vector<pending_call> calls;
  std::optional<model::finish_reason> finish;
  std::optional<model::usage> usage;
  std::optional<error> failure;  ///< the upstream broke mid-turn
  bool client_gone = false;
};

boost::asio::awaitable<turn_read> read_turn(engine::chat_turn& turn, bool tools_on, event_out& out);

}  // namespace warden::agent
