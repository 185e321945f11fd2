#include "agent/approvals.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include "common/ids.h"

namespace warden::agent {

namespace asio = boost::asio;

struct approval_registry::slot {
  slot(std::string i, std::string s, asio::any_io_executor ex, std::chrono::steady_clock::time_point d)
      : id(std::move(i)), session(std::move(s)), timer(std::move(ex)), deadline(d) {}
  std::string id;
  std::string session;
  std::optional<approval_outcome> outcome;  // guarded by the registry's mutex
  asio::steady_timer timer;                 // touched on the waiter's executor only
  std::chrono::steady_clock::time_point deadline;
};


std::unique_ptr<approval_registry::ticket> approval_registry::open(std::string session_id,
                                                                   asio::any_io_executor ex) {
  auto s = std::make_shared<slot>(ids::new_id(ids::kind::approval), std::move(session_id), std::move(ex),
                                  std::chrono::steady_clock::now() + timeout_);
  {
    std::lock_guard lk(mu_);
    slots_.emplace(s->id, s);
  }
  return std::make_unique<ticket>(*this, std::move(s));
}

bool approval_registry::settle(const std::shared_ptr<slot>& s, approval_outcome o) {
  {
    std::lock_guard lk(mu_);
    if (s->outcome) return false;
    s->outcome = o;
  }
  // Wake the waiter on its own executor; the timer is only ever touched there.
  asio::post(s->timer.get_executor(), [s] { s->timer.cancel(); });
  return true;
}

bool approval_registry::resolve(std::string_view id, approval_decision d, std::optional<std::string_view> session) {
  std::shared_ptr<slot> s;
  {
    std::lock_guard lk(mu_);
    auto it = slots_.find(std::string(id));
    if (it == slots_.end()) return false;
    if (session && *session != it->second->session) return false;
    s = it->second;
  }
  return settle(s, d == approval_decision::allow ? approval_outcome::allowed : approval_outcome::denied);
}

std::size_t approval_registry::pending() const {
  std::lock_guard lk(mu_);
  return slots_.size();
}

approval_registry::ticket::~ticket() {
  std::lock_guard lk(reg_.mu_);
  reg_.slots_.erase(slot_->id);
}

const std::string& approval_registry::ticket::id() const { return slot_->id; }

void approval_registry::ticket::cancel() { reg_.settle(slot_, approval_outcome::cancelled); }

std::function<void()> approval_registry::ticket::canceller() const {
  return [reg = &reg_, s = slot_] { reg->settle(s, approval_outcome::cancelled); };
}

asio::awaitable<std::optional<approval_outcome>> approval_registry::ticket::wait(std::chrono::milliseconds slice) {
  using clock = std::chrono::steady_clock;
  while (true) {
    {
      std::lock_guard lk(reg_.mu_);
      if (slot_->outcome) co_return slot_->outcome;
    }
    const auto now = clock::now();
    if (now >= slot_->deadline) {
      reg_.settle(slot_, approval_outcome::timed_out);
      continue;  // settle() may have lost to a concurrent decision: read whichever won
    }
    const auto until = std::min(slot_->deadline, now + slice);
    slot_->timer.expires_at(until);
    auto [ec] = co_await slot_->timer.async_wait(asio::as_tuple(asio::use_awaitable));
    if ((co_await asio::this_coro::cancellation_state).cancelled() != asio::cancellation_type::none) {
      throw boost::system::system_error(asio::error::operation_aborted);
    }
    if (!ec && until < slot_->deadline) {
      std::lock_guard lk(reg_.mu_);
      if (!slot_->outcome) co_return std::nullopt;  // a slice passed: the caller pings
    }
  }
}

}  // namespace warden::agent
