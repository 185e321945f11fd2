// Background runs of the Responses API (`background: true`): a run that belongs to warden, not
// to the connection that started it.
//
// run_channel is one live run's event log: the run publishes each event (JSON, its index is its
// sequence_number) and, on item-level events, the response object as it stands (snapshot()); any
// number of followers read the events from a sequence number on and wait for more. A follower
// that goes away changes nothing for the run. When the run ends it calls finish() with the
// final object; followers then drain what is left and stop. The whole log stays in memory while
// the run lives; the handler stores it (store/responses_store.h response_events) when it ends,
// where GET /v1/responses/{id}?stream=true finds it afterwards (kept k_event_retention_s).
// run_registry maps response ids to live channels.
// Thread-safety: every member of both classes may be called from any thread; wait() from a
// coroutine (it parks on a timer of that coroutine's executor, woken through that executor).
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/json_util.h"

namespace warden::api::responses {

/// How long the events of a finished background run are kept for replay (24 h).
inline constexpr std::int64_t k_event_retention_s = 24 * 3600;

class run_channel {
 public:
  explicit run_channel(std::string id) : id_(std::move(id)) {}
  const std::string& id() const { return id_; }

  /// Appends events (in sequence order); `snapshot`, when not null, replaces the response object.
  void publish(std::vector<json> events, json snapshot = json());
  /// The run ended; `final_object` is the response as it ended.
  void finish(json final_object);

  struct read_result {
    std::vector<json> events;  ///< those with sequence_number ≥ `from`, in order
    bool done = false;         ///< the run ended and nothing after these remains
  };
  read_result read_from(std::int64_t from) const;
  /// Returns when an event with sequence_number ≥ `from` exists, the run ended, or `max` passed.
  boost::asio::awaitable<void> wait(std::int64_t from, std::chrono::milliseconds max);

  json snapshot() const;
  bool done() const;
  std::vector<json> all_events() const;

  /// Set by POST …/cancel: the run ends as "cancelled".
  void mark_cancelled();
  bool cancelled() const;
  std::string cancel_id;  ///< the cancel registry key of the run (set before it starts)
  /// The session the run's questions are asked in (set before it starts): the request's
  /// session_id, or agent::k_shared_session when it named none. "" answers nothing.
  std::string session_id;
  std::string owner;      ///< the API key name that started it ("" = single user; set before it starts)

 private:
  void wake(std::unique_lock<std::mutex>& lk);
  std::string id_;
  mutable std::mutex mu_;
  std::vector<json> events_;
  json snapshot_;
  bool done_ = false;
  bool cancelled_ = false;
  std::vector<std::shared_ptr<boost::asio::steady_timer>> waiters_;
};

class run_registry {
 public:
  /// Registers a new live run, its owner and session set before any other thread can see it.
  std::shared_ptr<run_channel> start(const std::string& id, std::string owner = {}, std::string session = {});
  std::shared_ptr<run_channel> find(const std::string& id) const;
  void end(const std::string& id);
  std::size_t active() const;
  /// Live runs of `owner` in `session` (run_channel::owner and ::session_id).
  std::size_t count(const std::string& owner, const std::string& session) const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<run_channel>> runs_;
};

}  // namespace warden::api::responses
