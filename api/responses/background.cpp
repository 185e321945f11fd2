#include "api/responses/background.h"

#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace warden::api::responses {

namespace asio = boost::asio;

void run_channel::wake(std::unique_lock<std::mutex>& lk) {
  std::vector<std::shared_ptr<asio::steady_timer>> woken;
  woken.swap(waiters_);
  lk.unlock();
  for (auto& t : woken) {
    // On the timer's own executor; an expiry in the past also wakes a wait that starts later.
    asio::post(t->get_executor(), [t] { t->expires_at(asio::steady_timer::time_point::min()); });
  }
}

void run_channel::publish(std::vector<json> events, json snapshot) {
  std::unique_lock lk(mu_);
  for (auto& e : events) events_.push_back(std::move(e));
  if (!snapshot.is_null()) snapshot_ = std::move(snapshot);
  wake(lk);
}

void run_channel::finish(json final_object) {
  std::unique_lock lk(mu_);
  snapshot_ = std::move(final_object);
  done_ = true;
  wake(lk);
}

run_channel::read_result run_channel::read_from(std::int64_t from) const {
  std::lock_guard lk(mu_);
  read_result r;
  const auto start = static_cast<std::size_t>(std::max<std::int64_t>(from, 0));
  for (std::size_t i = start; i < events_.size(); ++i) r.events.push_back(events_[i]);
  r.done = done_;
  return r;
}

asio::awaitable<void> run_channel::wait(std::int64_t from, std::chrono::milliseconds max) {
  auto timer = std::make_shared<asio::steady_timer>(co_await asio::this_coro::executor, max);
  {
    std::lock_guard lk(mu_);
    if (done_ || static_cast<std::int64_t>(events_.size()) > from) co_return;
    waiters_.push_back(timer);
  }
  boost::system::error_code ec;
  co_await timer->async_wait(asio::redirect_error(asio::use_awaitable, ec));
  co_return;
}

json run_channel::snapshot() const {
  std::lock_guard lk(mu_);
  return snapshot_;
}

bool run_channel::done() const {
  std::lock_guard lk(mu_);
  return done_;
}

std::vector<json> run_channel::all_events() const {
  std::lock_guard lk(mu_);
  return events_;
}

void run_channel::mark_cancelled() {
  std::lock_guard lk(mu_);
  cancelled_ = true;
}

bool run_channel::cancelled() const {
  std::lock_guard lk(mu_);
  return cancelled_;
}

std::shared_ptr<run_channel> run_registry::start(const std::string& id) {
  auto ch = std::make_shared<run_channel>(id);
  std::lock_guard lk(mu_);
  runs_[id] = ch;
  return ch;
}

std::shared_ptr<run_channel> run_registry::find(const std::string& id) const {
  std::lock_guard lk(mu_);
  auto it = runs_.find(id);
  return it == runs_.end() ? nullptr : it->second;
}

void run_registry::end(const std::string& id) {
  std::lock_guard lk(mu_);
  runs_.erase(id);
}

std::size_t run_registry::active() const {
  std::lock_guard lk(mu_);
  return runs_.size();
}

}  // namespace warden::api::responses
