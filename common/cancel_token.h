// cancel_token — a thread-safe "stop this request" flag with hooks.
//
// One token per chat request that may run tools. `cancel()` (from any thread: the cancel
// endpoint, a disconnect, shutdown) sets the flag once and runs every registered hook; a hook
// registered after the cancel runs at once. Hooks must be thread-safe and quick (kill a process
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

  /// Sets the flag and runs the hooks; later calls do nothing. `reason` is kept for messages.
  void cancel(std::string reason = "cancelled") {
    std::map<std::uint64_t, std::function<void()>> hooks;
    {
      std::lock_guard lk(mu_);
      if (cancelled_.load()) return;
      reason_ = std::move(reason);
      cancelled_.store(true);
      hooks.swap(hooks_);
    }
    for (auto& [id, fn] : hooks) fn();
  }
  bool cancelled() const { return cancelled_.load(); }
  std::string reason() const {
    std::lock_guard lk(mu_);
    return reason_;
  }

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
  std::string reason_;
  std::uint64_t next_id_ = 0;
  std::map<std::uint64_t, std::function<void()>> hooks_;
};

}  // namespace warden
