// upstream_registry — owns every upstream warden talks to: engine children (llama-server for
// chat, the embeddings child) and remote OpenAI-compatible servers, each under a name, with how
// it starts (at start-up, or on first use) and the order it stops in. The composition root
// (app/serve.cpp) fills it once; routes look upstreams up by name. Model load/swap/unload and a
// pool of engines are meant to plug in here (more entries, a restart path through the state
// machine of engine/upstream_status.h), not into the composition root.
//
// Start: start_all() starts the `at_start_up` entries one after another in the order they were
// added, on the calling thread (llama-server's PR_SET_PDEATHSIG is tied to the forking thread, so
// that thread must live as long as the process: the main thread). `on_first_use` entries are
// wrapped in an on_demand_upstream (below) and begin when a handler first calls begin().
// Stop: stop_all() stops every entry, the last added first (a lazily started child before the
// chat child it was derived from), whatever its state; it is idempotent, and after it start_all()
// starts nothing more.
//
// Thread-safety: add() only during set-up, before start_all() and before the registry is shared;
// afterwards find(), on_demand(), statuses() and stop_all() are safe from any thread (stop_all()
// calls are serialised), and start_all() runs on one thread while stop_all() may run on another
// (each upstream's stop() ends a start() still in progress).
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "engine/upstream.h"

namespace warden::engine {

/// An upstream started on first use (the embeddings child). begin() starts `inner` on a keeper
/// thread of its own and returns at once; later calls do nothing. The keeper thread lives until
/// stop(), because llama-server's PR_SET_PDEATHSIG fires when the thread that forked it ends.
/// Until begin(), state() is `stopped` with a "starts on first use" message; from begin() until
/// inner's start() returns it is `starting`; then it is inner's state. A failed start is not
/// retried (the message says why; restart warden). start() = begin() and wait for the outcome.
/// Everything else (model id, URLs, key) is inner's.
/// Thread-safety: all methods are safe from any thread; stop() is idempotent.
class on_demand_upstream final : public upstream {
 public:
  explicit on_demand_upstream(std::unique_ptr<upstream> inner);
  ~on_demand_upstream() override;
  on_demand_upstream(const on_demand_upstream&) = delete;
  on_demand_upstream& operator=(const on_demand_upstream&) = delete;

  /// Starts inner in the background once (no-op after stop()); never blocks.
  void begin() override;
  result<void> start() override;
  void stop() override;
  upstream_state state() const override;
  std::string status_message() const override;
  std::string model_id() const override { return inner_->model_id(); }
  std::string url_for(std::string_view api_path) const override { return inner_->url_for(api_path); }
  std::vector<std::string> request_headers() const override { return inner_->request_headers(); }
  bool is_local() const override { return inner_->is_local(); }
  model_caps caps() const override { return inner_->caps(); }

 private:
  std::unique_ptr<upstream> inner_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool begun_ = false;
  bool stopping_ = false;
  std::optional<result<void>> outcome_;  ///< inner's start(), once it returned
  std::thread keeper_;
};

enum class start_policy {
  at_start_up,   ///< start_all() starts it
  on_first_use,  ///< wrapped in an on_demand_upstream; its first user calls begin()
};

class upstream_registry {
 public:
  /// One entry as statuses() reports it (for /health, logs and a later /api/models).
  struct status {
    std::string name;
    start_policy policy;
    upstream_state state;
    std::string message;
    std::string model_id;
  };

  upstream_registry() = default;
  ~upstream_registry();  ///< stop_all()
  upstream_registry(const upstream_registry&) = delete;
  upstream_registry& operator=(const upstream_registry&) = delete;

  /// Takes `u` under `name` and returns the upstream callers should use: `u` itself, or for
  /// on_first_use its on_demand_upstream wrapper. Set-up only. A name added twice (or an empty
  /// name, or a null `u`) is a wiring bug: throws std::logic_error.
  upstream& add(std::string name, std::unique_ptr<upstream> u, start_policy policy);

  /// The upstream added under `name` (the wrapper for on_first_use); nullptr when none.
  upstream* find(std::string_view name) const;
  /// The on_demand_upstream of an on_first_use entry; nullptr when none or at_start_up.
  on_demand_upstream* on_demand(std::string_view name) const;

  /// Starts the at_start_up entries in the order added, each blocking until ready or failed.
  /// Returns the first failure (later entries are not started). Errors: what that upstream's
  /// start() returned; errc::upstream_unavailable when stop_all() came first.
  result<void> start_all();

  /// Stops every entry, the last added first. Idempotent.
  void stop_all();

  /// Every entry, in the order added.
  std::vector<status> statuses() const;

 private:
  struct entry {
    std::string name;
    start_policy policy;
    std::unique_ptr<upstream> owned;  ///< the upstream, or its on_demand_upstream wrapper
    on_demand_upstream* lazy;         ///< owned, as its wrapper type; null for at_start_up
  };
  const entry* lookup(std::string_view name) const;

  std::vector<entry> entries_;
  std::mutex stop_mu_;
  std::atomic<bool> stopped_{false};
};

}  // namespace warden::engine
