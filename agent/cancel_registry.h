// cancel_registry — finds running tool-loop requests by `cancel_id` or `session_id` for
// POST /api/inference/cancel (reference unsloth-studio.md §2.11).
//
// A request registers its cancel_token under each key it has (a cancel_key kind and the value
// the client sent), with its owner (the API key name, "" for the single user: common/principal.h);
// the returned registration removes it. cancel(kind, key, why, owner) cancels every live token
// under that key — only those of `owner` when one is given (a user key), all of them when it is
// nullopt (an admin) — and returns how many. Keys are not unique across owners: two owners may
// both use session "s1" (a session is the pair owner, session_id).
// Thread-safety: all members are thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/cancel_token.h"

namespace warden::agent {

/// The request fields a running tool loop can be found by.
enum class cancel_key : std::uint8_t { cancel_id, session_id };

class cancel_registry {
 public:
  class registration {
   public:
    registration() = default;
    registration(cancel_registry* r, std::pair<cancel_key, std::string> key, std::uint64_t id)
        : reg_(r), key_(std::move(key)), id_(id) {}
    registration(registration&& o) noexcept : reg_(o.reg_), key_(std::move(o.key_)), id_(o.id_) { o.reg_ = nullptr; }
    registration& operator=(registration&&) = delete;
    registration(const registration&) = delete;
    ~registration() {
      if (reg_) reg_->remove(key_, id_);
    }

   private:
    cancel_registry* reg_ = nullptr;
    std::pair<cancel_key, std::string> key_;
    std::uint64_t id_ = 0;
  };

  [[nodiscard]] registration add(cancel_key kind, const std::string& key, std::weak_ptr<cancel_token> t,
                                 std::string owner) {
    std::lock_guard lk(mu_);
    const std::uint64_t id = ++next_;
    auto k = std::make_pair(kind, key);
    tokens_.emplace(k, entry{id, std::move(t), std::move(owner)});
    return registration(this, std::move(k), id);
  }

  /// Tool loops registered now (each loop registers once per key it can be found by).
  std::size_t size() const {
    std::lock_guard lk(mu_);
    return tokens_.size();
  }

  /// Cancels every registered token (shutdown).
  std::size_t cancel_all(cancel_reason reason) {
    std::vector<std::shared_ptr<cancel_token>> hit;
    {
      std::lock_guard lk(mu_);
      for (auto& [k, e] : tokens_) {
        if (auto t = e.token.lock()) hit.push_back(std::move(t));
      }
    }
    for (auto& t : hit) t->cancel(reason);
    return hit.size();
  }

  std::size_t cancel(cancel_key kind, const std::string& key, cancel_reason reason,
                     std::optional<std::string_view> owner = std::nullopt) {
    std::vector<std::shared_ptr<cancel_token>> hit;
    {
      std::lock_guard lk(mu_);
      auto [b, e] = tokens_.equal_range(std::make_pair(kind, key));
      for (auto it = b; it != e; ++it) {
        if (owner && it->second.owner != *owner) continue;
        if (auto t = it->second.token.lock()) hit.push_back(std::move(t));
      }
    }
    for (auto& t : hit) t->cancel(reason);
    return hit.size();
  }

 private:
  struct entry {
    std::uint64_t id;
    std::weak_ptr<cancel_token> token;
    std::string owner;
  };
  void remove(const std::pair<cancel_key, std::string>& key, std::uint64_t id) {
    std::lock_guard lk(mu_);
    auto [b, e] = tokens_.equal_range(key);
    for (auto it = b; it != e; ++it) {
      if (it->second.id == id) {
        tokens_.erase(it);
        return;
      }
    }
  }
  mutable std::mutex mu_;
  std::uint64_t next_ = 0;
  std::multimap<std::pair<cancel_key, std::string>, entry> tokens_;
};

}  // namespace warden::agent
