// engine_pool — several engines behind one front door (issue 28 §2): managed llama-server
// replicas (`--replicas N`) and existing OpenAI-compatible servers (`--upstream` given several
// times, `--upstreams-file`: more llama-servers, vLLM, SGLang). warden routes; it never splits
// one model across machines.
//
// Routing, per model request (chat_service asks pick() before each attempt):
//   1. candidates: the members serving the request's `model` when any member serves it (the pool
//      routes by model), else every member (each then answers with its own model, as a single
//      upstream does);
//   2. healthy: state() ready (a llama-server child that crashed is `starting` until model_host
//      restarted it; a remote engine is probed every 5 s, engine/openai_compatible.h) and not
//      ejected;
//   3. session affinity: a request naming a key the pool has seen (its session_id, or the
//      previous_response_id of a Responses chain) goes to the engine that served that key while
//      that engine is healthy, so the engine's prompt cache is reused; afterwards the key (and
//      the new response's id) is remembered for that engine;
//   4. otherwise the member with the fewest outstanding requests; ties go round robin.
// Failover: when an engine fails before the first byte of its answer (refused or reset
// connection, 5xx or 503 head: errc::upstream_unavailable / upstream_error; a 401 or 403 (the
// engine refuses the key warden sends it: its key_env is wrong) and a 429 (it is rate limiting:
// upstream_status_error in chat_service.h); a stream whose head has not come within head_timeout),
// the request is sent to the next healthy candidate, at most max_attempts engines in all; the
// client sees nothing of it. Any other 4xx is the request's own answer and is not retried;
// nothing is retried once a byte was relayed.
// Ejection (settle()): an engine that failed where another then answered is ejected for
// eject_base, doubled for each failure in a row up to eject_max, then re-admitted on trial; a
// success ends the ejection and the run. When no engine answered, only the engines that were
// unreachable or not ready (errc::upstream_unavailable) are ejected: a 5xx that follows the
// request everywhere is the request's (a prompt that crashes engines stops at max_attempts, and
// does not eject the pool). Probes (the member's state) eject and re-admit on their own.
// When every ready candidate is ejected, they are tried anyway (a blip of the whole pool does not
// turn into 503s).
// Affinity keys: at most affinity_capacity, the oldest forgotten first.
//
// Thread-safety: every method is safe from any thread (one mutex; no I/O under it). The members'
// upstreams and the pool outlive every request (the composition root owns them).
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/error.h"
#include "engine/chat_service.h"
#include "engine/upstream.h"

namespace warden::engine {

class http_client;

/// One engine of the pool: its name (a metrics label, "chat", "chat-2", …), its upstream, the
/// requests it serves at once (llama-server's --parallel, or what the file/flag says; 0 =
/// unknown) and where it is (a URL for a remote one, "" for a managed child).
struct pool_member_spec {
  std::string name;
  upstream* up = nullptr;
  int slots = 0;
  std::string where;
};

struct pool_options {
  std::chrono::milliseconds eject_base{1000};
  std::chrono::milliseconds eject_max{30000};
  std::size_t affinity_capacity = 65536;
  /// How long a request waits while no member is ready but one is starting (loading, restarting
  /// after a crash); then 503.
  std::chrono::milliseconds load_wait{0};
  /// Engines one request may try (the first and its failovers).
  std::size_t max_attempts = 2;
  /// A streamed request whose engine sends no answer head this long fails over (an engine that
  /// accepts and hangs; --engine-head-timeout); checked every 250 ms, whatever the keep-alive
  /// interval. 0 = never. A non-streaming answer's head comes with the whole answer, so it waits.
  std::chrono::milliseconds head_timeout{120000};
};

class engine_pool {
 public:
  /// `members` (at least one; each upstream non-null) are served through chat services of their
  /// own on `client`. Throws std::logic_error on an empty pool or a null upstream (a wiring bug).
  engine_pool(std::vector<pool_member_spec> members, http_client& client, std::chrono::milliseconds ping,
              pool_options o = {});
  ~engine_pool();
  engine_pool(const engine_pool&) = delete;
  engine_pool& operator=(const engine_pool&) = delete;

  /// The pool as one upstream for what is not routed per request (health, the model id, the
  /// llama.cpp root routes such as /props): ready when any member is; its URLs and caps are
  /// those of the first ready member (else the first).
  upstream& front();

  std::size_t size() const { return members_.size(); }
  const std::string& name(std::size_t i) const;
  chat_service& chat(std::size_t i);

  /// A member picked for one attempt; `hold` counts the request outstanding there until released.
  struct choice {
    std::size_t index;
    std::shared_ptr<void> hold;
  };
  /// The member for a request for `model` with affinity key `follow` ("" = none), never one of
  /// `tried`, counted outstanding at once (so concurrent picks spread); nullopt when no healthy
  /// candidate is left.
  std::optional<choice> pick(std::string_view model, std::string_view follow, const std::vector<std::size_t>& tried);
  /// pick(), waiting (up to load_wait) while no member is ready but one is starting.
  boost::asio::awaitable<std::optional<choice>> wait_pick(std::string model, std::string follow,
                                                          std::vector<std::size_t> tried);
  /// The request at `i` got its answer's head: ends its ejection and run of failures; remembers
  /// `keys` (the non-empty ones) for `i`.
  void succeeded(std::size_t i, const std::vector<std::string>& keys);
  /// One request's failures before the first byte, in order, once it is settled: `answered`
  /// when another engine then answered it (each is counted failed_over and ejected), else each
  /// is counted failed and only an unreachable or unready one is ejected (rules above).
  void settle(const std::vector<std::pair<std::size_t, error>>& failures, bool answered);
  /// A request for `model` no engine answered: settle(failures, false), then the answer to give
  /// its client (the last engine's error, its message led by "engine NAME: ", or
  /// unavailable(model) when none was tried).
  error give_up(const std::vector<std::pair<std::size_t, error>>& failures, std::string_view model = {});
  /// True for the errors a request fails over on (upstream_unavailable, upstream_error,
  /// too_many_requests).
  static bool fails_over(const error& e);
  const pool_options& options() const { return opt_; }
  /// 503 naming the state of each member that could serve `model` (the members serving it when
  /// any does, and then the message names it; else every member), for when none can take it.
  error unavailable(std::string_view model = {}) const;

  struct member_status {
    std::string name;
    std::string where;     ///< URL of a remote engine; "" for a managed child
    std::string model_id;
    upstream_state state;
    std::string message;
    bool healthy;          ///< ready and not ejected
    int outstanding;
    int slots;
    std::uint64_t requests;   ///< answered (a head received)
    std::uint64_t failovers;  ///< requests that failed there before their first byte
    std::int64_t ejected_ms;  ///< time left of an ejection; 0 when not ejected
  };
  std::vector<member_status> status() const;
  /// Sum of the members' slots; 0 when any member's is unknown.
  int total_slots() const;
  /// The slots of the healthy members together (the admission queue's, so an engine that is down
  /// or ejected does not leave its share to the others), at least the smallest member's (so a
  /// request still reaches the pool, which answers 503 at once when nothing is healthy); 0 when
  /// any member's slots are unknown.
  int slots_now() const;

 private:
  struct member;
  bool healthy(const member& m, std::chrono::steady_clock::time_point now) const;
  std::vector<std::size_t> candidates(std::string_view model, const std::vector<std::size_t>& tried) const;
  void remember_locked(const std::string& key, std::size_t i);
  /// Counts one failure of `i` (`outcome`) and ejects it when `eject`.
  void failed(std::size_t i, const error& why, bool eject, const char* outcome);
  /// Counts a request outstanding at `i` (mu_ held) until the handle is released.
  std::shared_ptr<void> hold_locked(std::size_t i);

  class front_upstream;
  std::vector<std::unique_ptr<member>> members_;
  std::unique_ptr<front_upstream> front_;
  pool_options opt_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::size_t> affinity_;
  std::deque<std::string> affinity_order_;
  std::size_t rotate_ = 0;
};

}  // namespace warden::engine
