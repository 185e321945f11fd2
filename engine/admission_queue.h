// admission_queue — admission control in front of one engine (issue 28 §1; the reference's
// llama_admission, unsloth-studio.md §3.3 and the "Admission control" row of §5).
//
// An engine serves `slots` requests at once (llama-server's --parallel). Every model turn of every
// surface (OpenAI chat and legacy completions, Anthropic Messages, Responses, each turn of the
// tool loop) takes a slot before its request goes upstream and gives it back when that upstream
// request ends. Requests past the slots wait here, first in first out, instead of piling into
// llama-server's own queue, where they could not be counted, refused or kept alive.
//
//   queue length   max_queue requests wait at most (default max(64, 16 × slots), the reference's);
//                  one more is refused at once: errc::too_many_requests (429, type_code
//                  "queue_full"), with retry_after_s() for the Retry-After header;
//   per key        a named API key (common/principal.h) may hold at most per_key_queue of the
//                  waiting places (default half the queue), so one client flooding leaves room
//                  for the others (429, type_code "queue_full_for_key"). Single-user mode (key "")
//                  has no such cap: there is one client;
//   fairness       a freed slot goes to the waiting key served least recently (round robin over
//                  keys), first come first served within a key: a key with 60 waiting requests
//                  and a key with one alternate instead of the one waiting behind the 60;
//   resumed turns  a request that held a slot before (the next turn of a tool loop, after its
//                  tools ran or a person answered an approval) waits ahead of new requests and
//                  past the caps: a stream that already started is never refused half-way;
//   keep-alive     while waiting, `keep_alive` is called every `tick` (the surface's own ping:
//                  an SSE comment, an Anthropic `ping` event); when it returns false (the
//                  client is gone) the request leaves the queue (errc::cancelled);
//   timeout        with `timeout` > 0, a new request still waiting after it leaves with
//                  errc::upstream_unavailable (503, type_code "queue_timeout", with Retry-After);
//                  a resumed turn waits as long as it takes (its tools may have run); 0 (the
//                  default, the reference's) waits as long as it takes;
//   cancel         a `cancel` token that fires (POST /api/inference/cancel, shutdown) ends the
//                  wait (errc::cancelled).
// A parked approval holds no slot: the tool loop's turn (and with it its slot) has ended before
// the loop waits for a person, so the slot serves queued requests meanwhile ("lends its slot",
// §3.3); the loop's next turn takes one again as a resumed turn. Tools running hold none either.
//
// Metrics (common/metrics.h): warden_queue_wait_seconds{engine} (time from arrival to a slot),
// warden_queue_rejected_total{engine,reason} (queue_full, queue_full_for_key, queue_timeout);
// the composition root samples snapshot() for warden_queue_depth and warden_engine_slots_busy.
// Thread-safety: every method may be called from any thread and any executor; a slot may be
// released (destroyed) on any thread. A waiter is woken through a concurrent channel, never by
// touching its timer from another thread.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/cancel_token.h"
#include "common/result.h"
#include "engine/chat_backend.h"

namespace warden::engine {

struct admission_options {
  std::string engine = "llama-server";     ///< the metric label and the name in messages
  /// Slots the engine serves at once (read on every decision: a model reload may change it);
  /// a value below 1 counts as 1.
  std::function<int()> slots = [] { return 1; };
  int max_queue = 0;                        ///< requests waiting at most; 0 = max(64, 16 × slots)
  int per_key_queue = 0;                    ///< waiting places of one named key; 0 = half the queue
  std::chrono::milliseconds timeout{0};     ///< longest wait; 0 = none
  std::chrono::milliseconds tick{5000};     ///< keep-alive period while waiting
};

/// Held by shared_ptr (make_shared): a slot keeps its queue alive until it is given back.
class admission_queue : public std::enable_shared_from_this<admission_queue> {
 public:
  /// A held slot; destroying it gives the slot back (to the next waiter). Null never.
  using slot = std::shared_ptr<void>;

  /// What /metrics and /api/inference/status show. `waiting` counts resumed turns too.
  struct snapshot_t {
    int slots = 0;
    int busy = 0;
    int waiting = 0;
    int max_queue = 0;
  };

  explicit admission_queue(admission_options o);
  ~admission_queue();
  admission_queue(const admission_queue&) = delete;
  admission_queue& operator=(const admission_queue&) = delete;

  /// Waits for a slot (see the header comment). `key`: the caller's key name ("" single user);
  /// `resumed`: the request held a slot before; `keep_alive` and `cancel` may be null.
  /// Errors: errc::too_many_requests (queue_full, queue_full_for_key), errc::upstream_unavailable
  /// (queue_timeout), errc::cancelled (keep-alive failed, token cancelled).
  boost::asio::awaitable<result<slot>> acquire(std::string key, bool resumed,
                                                std::function<boost::asio::awaitable<bool>()> keep_alive,
                                                std::shared_ptr<cancel_token> cancel);
  snapshot_t snapshot() const;
  /// Seconds a refused client should wait before retrying: the mean time a slot is held times
  /// the rounds of the queue ahead, between 1 and 60.
  int retry_after_s() const;
  const std::string& engine() const { return opt_.engine; }

 private:
  struct waiter;
  int capacity_locked() const;
  int max_queue_locked() const;
  /// Counts a slot taken by `key` (mu_ held).
  void take_locked(const std::string& key);
  /// The handle of a slot taken; giving it back calls release().
  slot handle();
  /// A slot came back after `held` (0: never used), from the slot's deleter.
  void release(std::chrono::steady_clock::duration held);
  /// Hands free slots to waiters (mu_ held); their wake-ups are collected in `wake`.
  void grant_locked(std::vector<std::shared_ptr<waiter>>& wake);
  /// Removes `w` from the queue (mu_ held); false when it was granted meanwhile.
  bool leave_locked(const std::shared_ptr<waiter>& w);
  error refusal_locked(const std::string& key, bool& full_for_key) const;

  admission_options opt_;
  mutable std::mutex mu_;
  int busy_ = 0;
  std::uint64_t seq_ = 0;
  std::deque<std::shared_ptr<waiter>> waiting_;
  std::map<std::string, int> waiting_of_;              ///< named keys' waiting requests (not resumed)
  std::map<std::string, std::uint64_t> last_grant_;    ///< key → the seq_ of its last slot
  double mean_hold_s_ = 0;                             ///< moving mean of how long a slot is held
};

/// A chat_backend that takes a slot of `queue` for each turn (the turn holds it until its upstream
/// answer has ended; engine/admission_queue.h). One per request: the first turn queues as a new
/// request, later ones (the tool loop's next turn, a context-fit retry) as resumed turns.
/// `on_silence` is the keep-alive while queued. A null `queue` passes every turn through.
/// `on_refused` (optional) is told retry_after_s() when the queue refuses or times out (the
/// Retry-After header).
/// Thread-safety: one per request coroutine; the queue and `inner` are shared.
class admitting_backend : public decorating_backend {
 public:
  admitting_backend(chat_backend& inner, std::shared_ptr<admission_queue> queue, std::string key,
                    std::function<void(int)> on_refused = nullptr)
      : decorating_backend(inner), queue_(std::move(queue)), key_(std::move(key)), on_refused_(std::move(on_refused)) {}
  boost::asio::awaitable<result<std::unique_ptr<chat_turn>>> open_turn(
      const model::chat_request& req, std::shared_ptr<cancel_token> cancel,
      std::function<boost::asio::awaitable<bool>()> on_silence) override;

 private:
  std::shared_ptr<admission_queue> queue_;
  std::string key_;
  std::function<void(int)> on_refused_;
  bool resumed_ = false;
};

}  // namespace warden::engine
