#include "agent/approvals.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include <algorithm>

#include "common/ids.h"

namespace warden::agent {

namespace asio = boost::asio;

const char* to_string(approval_outcome o) noexcept {
  switch (o) {
    case approval_outcome::allowed: return "allowed";
    case approval_outcome::denied: return "denied";
    case approval_outcome::timed_out: return "expired";
    case approval_outcome::cancelled: return "cancelled";
  }
  return "cancelled";
}

namespace {
std::int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}
}  // namespace

struct approval_registry::slot {
  slot(approval_info i, asio::any_io_executor ex, std::chrono::steady_clock::time_point d)
      : info(std::move(i)), id(info.approval_id), session(info.session_id), timer(std::move(ex)), deadline(d) {}
  approval_info info;
  const std::string& id;
  const std::string& session;
  std::optional<approval_outcome> outcome;  // guarded by the registry's mutex
  json answer = json::object();             // an elicitation's answer; guarded likewise
  asio::steady_timer timer;                 // touched on the waiter's executor only
  std::chrono::steady_clock::time_point deadline;
};


std::unique_ptr<approval_registry::ticket> approval_registry::open(std::string session_id,
                                                                   asio::any_io_executor ex) {
  approval_info info;
  info.session_id = std::move(session_id);
  return open(std::move(info), std::move(ex));
}

std::unique_ptr<approval_registry::ticket> approval_registry::open(approval_info info, asio::any_io_executor ex) {
  info.approval_id = ids::new_id(ids::kind::approval);
  info.created_unix_ms = unix_ms();
  info.expires_unix_ms = info.created_unix_ms + timeout_.count();
  auto s = std::make_shared<slot>(std::move(info), std::move(ex), std::chrono::steady_clock::now() + timeout_);
  {
    std::lock_guard lk(mu_);
    slots_.emplace(s->id, s);
  }
  approval_event ev;
  ev.info = s->info;
  notify(ev);
  return std::make_unique<ticket>(*this, std::move(s));
}

void approval_registry::notify(const approval_event& ev) {
  std::vector<std::shared_ptr<listener>> ls;
  {
    std::lock_guard lk(listeners_mu_);
    if (listeners_.empty()) return;
    for (const auto& [id, l] : listeners_) ls.push_back(l);
  }
  for (const auto& l : ls) (*l)(ev);
}

std::uint64_t approval_registry::subscribe(listener l) {
  std::lock_guard lk(listeners_mu_);
  const std::uint64_t id = next_listener_++;
  listeners_.emplace_back(id, std::make_shared<listener>(std::move(l)));
  return id;
}

void approval_registry::unsubscribe(std::uint64_t id) {
  std::lock_guard lk(listeners_mu_);
  std::erase_if(listeners_, [id](const auto& p) { return p.first == id; });
  last_unsubscribed_ = std::chrono::steady_clock::now();
}

std::optional<approval_info> approval_registry::find(std::string_view id, std::optional<std::string_view> session) const {
  std::lock_guard lk(mu_);
  auto it = slots_.find(std::string(id));
  if (it == slots_.end() || it->second->outcome) return std::nullopt;
  if (session && *session != it->second->session) return std::nullopt;
  return it->second->info;
}

std::vector<approval_info> approval_registry::list(std::string_view session) const {
  std::vector<approval_info> out;
  {
    std::lock_guard lk(mu_);
    for (const auto& [id, s] : slots_) {
      if (s->outcome || (!session.empty() && s->session != session)) continue;
      out.push_back(s->info);
    }
  }
  std::sort(out.begin(), out.end(), [](const approval_info& a, const approval_info& b) {
    return a.created_unix_ms != b.created_unix_ms ? a.created_unix_ms < b.created_unix_ms : a.approval_id < b.approval_id;
  });
  return out;
}

bool approval_registry::settle(const std::shared_ptr<slot>& s, approval_outcome o, json answer) {
  {
    std::lock_guard lk(mu_);
    if (s->outcome) return false;
    s->outcome = o;
    s->answer = std::move(answer);
  }
  // Wake the waiter on its own executor; the timer is only ever touched there.
  asio::post(s->timer.get_executor(), [s] { s->timer.cancel(); });
  approval_event ev;
  ev.settled = true;
  ev.info = s->info;
  ev.outcome = to_string(o);
  notify(ev);
  return true;
}

bool approval_registry::resolve(std::string_view id, approval_decision d, std::optional<std::string_view> session) {
  std::shared_ptr<slot> s;
  {
    std::lock_guard lk(mu_);
    auto it = slots_.find(std::string(id));
    if (it == slots_.end()) return false;
    if (session && *session != it->second->session) return false;
    if (it->second->info.kind != "tool_call") return false;  // an elicitation needs resolve_elicitation()
    s = it->second;
  }
  return settle(s, d == approval_decision::allow ? approval_outcome::allowed : approval_outcome::denied);
}

bool approval_registry::resolve_elicitation(std::string_view id, const std::string& action, json content,
                                            std::optional<std::string_view> session) {
  std::shared_ptr<slot> s;
  {
    std::lock_guard lk(mu_);
    auto it = slots_.find(std::string(id));
    if (it == slots_.end() || it->second->info.kind != "elicitation") return false;
    if (session && *session != it->second->session) return false;
    s = it->second;
  }
  json answer = json::object();
  answer["action"] = action;
  if (action == "accept") answer["content"] = std::move(content);
  return settle(s, action == "accept" ? approval_outcome::allowed : approval_outcome::denied, std::move(answer));
}

bool approval_registry::has_listeners() const {
  std::lock_guard lk(listeners_mu_);
  return !listeners_.empty();
}

bool approval_registry::had_listeners(std::chrono::milliseconds within) const {
  std::lock_guard lk(listeners_mu_);
  if (!listeners_.empty()) return true;
  return last_unsubscribed_ != std::chrono::steady_clock::time_point{} &&
         std::chrono::steady_clock::now() - last_unsubscribed_ < within;
}

json approval_registry::ticket::answer() const {
  std::lock_guard lk(reg_.mu_);
  return slot_->answer;
}

std::size_t approval_registry::pending() const {
  std::lock_guard lk(mu_);
  return slots_.size();
}

approval_registry::ticket::~ticket() {
  bool undecided = false;
  {
    std::lock_guard lk(reg_.mu_);
    reg_.slots_.erase(slot_->id);
    undecided = !slot_->outcome;
  }
  if (undecided) {
    approval_event ev;
    ev.settled = true;
    ev.info = slot_->info;
    ev.outcome = "withdrawn";
    reg_.notify(ev);
  }
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
