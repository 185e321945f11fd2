// upstream_status — the upstream state machine (engine/upstream.h), written once: every kind of
// upstream (llama_server, openai_compatible, the registry's fakes in tests) keeps its state and
// status message in one of these, and a move the machine does not allow is refused here.
//
//     stopped ──start()──▶ starting ──health ok──▶ ready
//        │                    │                      │
//        │ bad launch inputs  │ load fails           │ child exits / probe fails
//        ▼                    ▼                      ▼
//      failed ◀───────────────┴──────────────────────┘
//        └─▶ ready when a later probe answers (remote upstreams); ─▶ starting on a restart
//      stop(): starting or ready ─▶ stopped (a failed upstream stays failed)
//
// Allowed: any state to itself (a new message); stopped → starting | failed; starting → ready |
// failed | stopped; ready → failed | stopped; failed → ready | starting (a restart). Refused:
// failed → stopped (a failure stays visible after shutdown), stopped → ready, ready → starting.
// Thread-safety: all methods are safe from any thread; state and message change together under
// one lock, so get() never pairs a new state with an old message.
#pragma once

#include <atomic>
#include <mutex>
#include <string>

#include "engine/upstream.h"

namespace warden::engine {

/// True when the machine above may move from `from` to `to`. Pure.
constexpr bool upstream_transition_allowed(upstream_state from, upstream_state to) noexcept {
  if (from == to) return true;
  switch (from) {
    case upstream_state::stopped: return to == upstream_state::starting || to == upstream_state::failed;
    case upstream_state::starting: return true;  // → ready, failed or stopped
    case upstream_state::ready: return to == upstream_state::failed || to == upstream_state::stopped;
    case upstream_state::failed: return to == upstream_state::ready || to == upstream_state::starting;
  }
  return false;
}

class upstream_status {
 public:
  struct snapshot {
    upstream_state state;
    std::string message;
  };
  /// The outcome of set(): the state before, and whether the move was allowed (and made).
  struct transition {
    upstream_state from;
    bool moved;
  };

  /// Starts `stopped` with `message`.
  explicit upstream_status(std::string message = "") : message_(std::move(message)) {}

  upstream_state state() const noexcept { return state_.load(); }
  std::string message() const {
    std::lock_guard lock(mu_);
    return message_;
  }
  snapshot get() const {
    std::lock_guard lock(mu_);
    return {state_.load(), message_};
  }

  /// Moves to `to` with `message` when upstream_transition_allowed(); else changes nothing.
  transition set(upstream_state to, std::string message) {
    std::lock_guard lock(mu_);
    const upstream_state from = state_.load();
    if (!upstream_transition_allowed(from, to)) return {from, false};
    message_ = std::move(message);
    state_.store(to);
    return {from, true};
  }

 private:
  mutable std::mutex mu_;
  std::atomic<upstream_state> state_{upstream_state::stopped};
  std::string message_;
};

}  // namespace warden::engine
