// cancel_token — a thread-safe "stop this request" flag with hooks.
//
// One token per chat request that may run tools. `cancel(why)` (from any thread: the cancel
// endpoint, a disconnect, shutdown) sets the flag and its typed reason once and runs every
// registered hook; a hook registered after the cancel runs at once. Callers branch on `why()`
// (e.g. a shutdown is a failure, a client's cancel is not); `reason()` is its text for messages. Hooks must be thread-safe and quick (kill a process
// group, resolve an approval as deny, abort an upstream transfer); they run on the cancelling
// thread with the token's lock released.
// `on_cancel` returns a registration; destroying it removes the hook (and waits for nothing:
// a hook that already started may still be running on another thread, so hooks only touch
// state they own through shared_ptr).
// Thread-safety: every member is thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace warden {

/// Why a request was cancelled.
enum class cancel_reason : std::uint8_t {
  cancelled,   ///< no reason given ("cancelled")
  by_request,  ///< POST /api/inference/cancel ("cancelled by request")
  by_client,   ///< the client cancelled its own response ("cancelled by the client")
  shutdown,    ///< warden is shutting down ("warden is shutting down")
};

/// The text of a reason, for messages and records (in parentheses above).
constexpr const char* describe(cancel_reason r) noexcept {
  switch (r) {
    case cancel_reason::cancelled: return "cancelled";
    case cancel_reason::by_request: return "cancelled by request";
    case cancel_reason::by_client: return "cancelled by the client";
    case cancel_reason::shutdown: return "warden is shutting down";
  }
  return "cancelled";
}

class cancel_token : public std::enable_shared_from_this<cancel_token> {
 public:
  class registration {
   public:
    registration() = default;
    registration(std::weak_ptr<cancel_token> t, std::uint64_t id) : token_(std::move(t)), id_(id) {}
    registration(registration&& o) noexcept : token_(std::move(o.token_)), id_(o.id_) { o.id_ = 0; }
    registration& operator=(registration&& o) noexcept {
      if (this != &o) {
        reset();
        token_ = std::move(o.token_);
        id_ = o.id_;
        o.id_ = 0;
      }
      return *this;
    }
    registration(const registration&) = delete;
    registration& operator=(const registration&) = delete;
    ~registration() { reset(); }
    void reset() {
      if (id_ == 0) return;
      if (auto t = token_.lock()) t->remove(id_);
      id_ = 0;
    }

   private:
    std::weak_ptr<cancel_token> token_;
    std::uint64_t id_ = 0;
  };

  static std::shared_ptr<cancel_token> make() { return std::make_shared<cancel_token>(); }

  /// Sets the flag and runs the hooks; later calls do nothing. `why` is kept (why(), reason()).
  void cancel(cancel_reason why = cancel_reason::cancelled) {
    std::map<std::uint64_t, std::function<void()>> hooks;
    {
      std::lock_guard lk(mu_);
      if (cancelled_.load()) return;
      reason_ = why;
      cancelled_.store(true);
      hooks.swap(hooks_);
    }
    for (auto& [id, fn] : hooks) fn();
  }
  bool cancelled() const { return cancelled_.load(); }
  /// The reason of the cancel (cancel_reason::cancelled while not cancelled).
  cancel_reason why() const {
    std::lock_guard lk(mu_);
    return reason_;
  }
  /// describe(why()).
  std::string reason() const { return describe(why()); }

  /// Registers `fn` to run on cancel (at once when already cancelled).
  [[nodiscard]] registration on_cancel(std::function<void()> fn) {
    {
      std::lock_guard lk(mu_);
      if (!cancelled_.load()) {
        const std::uint64_t id = ++next_id_;
        hooks_.emplace(id, std::move(fn));
        return registration(weak_from_this(), id);
      }
    }
    fn();
    return {};
  }

 private:
  void remove(std::uint64_t id) {
    std::lock_guard lk(mu_);
    hooks_.erase(id);
  }
  mutable std::mutex mu_;
  std::atomic<bool> cancelled_{false};
  cancel_reason reason_ = cancel_reason::cancelled;
  std::uint64_t next_id_ = 0;
  std::map<std::uint64_t, std::function<void()>> hooks_;
};

}  // namespace warden
