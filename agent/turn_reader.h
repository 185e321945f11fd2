// turn_reader — reads one model turn (engine::chat_turn) for the tool loop.
//
// Text and reasoning deltas are forwarded to the client as they arrive. Calls the model wrote
// as text come healed from the backend (the loop wraps it in engine::healing_backend for the
// selected tools, in a tool-less pass too, so their markup never reaches the user's text) as
// structured calls marked `healed`. Structured tool-call fragments are accumulated by index.
// At the end: the turn's visible text, its calls (every structured one; of the healed ones at
// most k_max_text_calls_per_turn, exact duplicates dropped; none when tools are off), the
// finish reason, usage, or the failure. Pings are forwarded as keep-alives.
//
// Provisional cards (reference unsloth-studio.md §2.9): while a streamed *structured* call's
// arguments arrive, the reader opens an early `tool_start{provisional, arguments {}}` when all
// hold: the call has a name and an id from the model (not shared with another call of the
// turn); it is the turn's first call or parallel calls are allowed; the tool is selected; the
// payload is large (render_html, or ≥ k_provisional_min_chars of arguments so far); and the
// call could not be gated (!may_need_confirmation — a gated call never flashes "running").
// The card is followed by `tool_args`: the backlog as one fragment, then each later delta.
// At most one card per call; calls written as text never get one. The loop reconciles a card
// by id (the call runner's real tool_start) or closes it with tool_end
// (unresolved_card_result()).
// Thread-safety: one per turn.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <optional>
#include <string>
#include <vector>

#include "agent/gate.h"
#include "agent/loop_events.h"
#include "common/error.h"
#include "engine/chat_backend.h"
#include "model/conversation.h"
#include "tools/tool.h"

namespace warden::agent {

/// Text-form calls kept per turn (reference §2.5, _MAX_TOOL_CALLS_PER_TURN).
inline constexpr std::size_t k_max_text_calls_per_turn = 8;

/// Arguments from this many characters on make a call "large" enough for a provisional card
/// (reference §2.9; render_html always is).
inline constexpr std::size_t k_provisional_min_chars = 256;

/// tool_end results of a provisional card that never got its real card (reference §2.9).
inline constexpr const char* k_card_lost_connection =
    "Error: lost connection to llama-server before the tool call completed.";
inline constexpr const char* k_card_interrupted = "Error: the tool call was interrupted before it completed.";

/// What read_turn needs to decide on provisional cards.
struct provisional_options {
  provisional_options() = default;
  provisional_options(const std::vector<tools::tool*>* sel, gate_policy p, bool parallel)
      : selected(sel), policy(p), parallel_tool_calls(parallel) {}
  const std::vector<tools::tool*>* selected = nullptr;  ///< the turn's tools; null = no provisional cards
  gate_policy policy;
  bool parallel_tool_calls = true;  ///< false: only the turn's first call may get a card
};

/// A provisional card opened during a turn.
struct provisional_card {
  std::string tool;
  std::string call_id;
};

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
  /// send(ping_event()) and send(status_event(text)), with the event in this call's frame: a
  /// coroutine that waits long (a parked approval) keeps its frame, and with it the temporaries
  /// of each co_await (issue 23).
  boost::asio::awaitable<bool> send_ping();
  boost::asio::awaitable<bool> send_status(std::string text);
  bool gone() const { return gone_; }
  /// The next text sent starts a paragraph ("\n\n" first) when it directly follows text that
  /// did not end a line: a re-prompted turn's text and the next turn's are not run together. Any
  /// other event in between (a tool card) cancels it.
  void break_paragraph() { break_pending_ = sent_text_ && !ends_line_; }

 private:
  loop_sink& sink_;
  bool gone_ = false;
  bool sent_text_ = false;
  bool ends_line_ = false;
  bool break_pending_ = false;
};

struct turn_read {
  std::string text;  ///< visible text of the turn
  std::vector<pending_call> calls;
  std::optional<model::finish_reason> finish;
  std::optional<model::usage> usage;
  std::optional<error> failure;  ///< the upstream broke mid-turn
  bool client_gone = false;
  std::vector<provisional_card> provisional;  ///< cards opened, in order (their tool_start was sent or attempted)
  std::optional<model::context_truncated> truncated;  ///< messages were dropped to fit (engine/context_fit.h)
};

boost::asio::awaitable<turn_read> read_turn(engine::chat_turn& turn, bool tools_on, event_out& out,
                                            const provisional_options& prov = provisional_options());

/// Whether a mid-turn failure is the upstream connection breaking (or never being there): the
/// transport failed, as engine/chat_service.cpp words it, or the upstream is unavailable.
bool connection_lost(const error& failure);

/// The tool_end result for a provisional card that never got its real card: "" when the call
/// simply was not run (no failure), k_card_lost_connection when the connection was lost,
/// k_card_interrupted for any other failure.
std::string unresolved_card_result(const std::optional<error>& failure);

}  // namespace warden::agent
