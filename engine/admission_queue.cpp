#include "engine/admission_queue.h"

#include <algorithm>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/experimental/concurrent_channel.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cmath>
#include <variant>

#include "common/metrics.h"

namespace warden::engine {

namespace asio = boost::asio;
using namespace asio::experimental::awaitable_operators;
using clock_type = std::chrono::steady_clock;

namespace {

constexpr int k_min_queue = 64;      // the reference's floor
constexpr int k_queue_per_slot = 16;  // the reference's multiple
constexpr int k_max_retry_after_s = 60;

double seconds(clock_type::duration d) { return std::chrono::duration<double>(d).count(); }

void describe_metrics() {
  static std::once_flag once;
  std::call_once(once, [] {
    auto& m = metrics::global();
    m.describe("warden_queue_wait_seconds", "histogram", "Time a model request waited in the admission queue for a slot");
    m.describe("warden_queue_rejected_total", "counter",
               "Model requests refused by the admission queue, by reason (queue_full, queue_full_for_key, queue_timeout)");
  });
}

void count_rejection(const std::string& engine, const char* reason) {
  metrics::global().add("warden_queue_rejected_total", {{"engine", engine}, {"reason", reason}});
}

}  // namespace

struct admission_queue::waiter {
  waiter(std::string k, bool r, std::uint64_t s, const asio::any_io_executor& ex)
      : key(std::move(k)), resumed(r), seq(s), wake(ex, 1) {}
  std::string key;
  bool resumed;
  std::uint64_t seq;
  bool granted = false;  ///< under the queue's mutex
  asio::experimental::concurrent_channel<void(boost::system::error_code)> wake;
};

namespace {

/// A held slot: gives it back when the last owner lets go.
struct held_slot {
  std::function<void(clock_type::duration)> give_back;
  clock_type::time_point since = clock_type::now();
  ~held_slot() { give_back(clock_type::now() - since); }
};

}  // namespace

admission_queue::admission_queue(admission_options o) : opt_(std::move(o)) {
  if (!opt_.slots) opt_.slots = [] { return 1; };
  if (opt_.tick.count() <= 0) opt_.tick = std::chrono::milliseconds(5000);
  describe_metrics();
  for (const char* reason : {"queue_full", "queue_full_for_key", "queue_timeout"}) {  // 0 from the start
    metrics::global().add("warden_queue_rejected_total", {{"engine", opt_.engine}, {"reason", reason}}, 0);
  }
}

admission_queue::~admission_queue() = default;

int admission_queue::capacity_locked() const { return std::max(1, opt_.slots()); }

int admission_queue::max_queue_locked() const {
  if (opt_.max_queue > 0) return opt_.max_queue;
  return std::max(k_min_queue, k_queue_per_slot * capacity_locked());
}

void admission_queue::take_locked(const std::string& key) {
  ++busy_;
  last_grant_[key] = ++seq_;
}

admission_queue::slot admission_queue::handle() {
  auto self = shared_from_this();
  auto s = std::make_shared<held_slot>();
  s->give_back = [self](clock_type::duration held) { self->release(held); };
  return s;
}

void admission_queue::release(clock_type::duration held) {
  std::vector<std::shared_ptr<waiter>> wake;
  {
    std::lock_guard lock(mu_);
    --busy_;
    if (held.count() > 0) {
      const double h = seconds(held);
      mean_hold_s_ = mean_hold_s_ == 0 ? h : 0.8 * mean_hold_s_ + 0.2 * h;
    }
    grant_locked(wake);
  }
  for (auto& w : wake) w->wake.try_send(boost::system::error_code{});
}

void admission_queue::grant_locked(std::vector<std::shared_ptr<waiter>>& wake) {
  while (!waiting_.empty() && busy_ < capacity_locked()) {
    // Resumed turns first (oldest first); then the key served least recently, oldest first.
    auto best = waiting_.end();
    for (auto it = waiting_.begin(); it != waiting_.end(); ++it) {
      if (best == waiting_.end()) {
        best = it;
        continue;
      }
      const waiter& a = **it;
      const waiter& b = **best;
      if (a.resumed != b.resumed) {
        if (a.resumed) best = it;
        continue;
      }
      if (a.resumed) continue;  // both resumed: the older (earlier in the deque) stays
      const auto la = last_grant_.count(a.key) ? last_grant_.at(a.key) : 0;
      const auto lb = last_grant_.count(b.key) ? last_grant_.at(b.key) : 0;
      if (la < lb) best = it;
    }
    std::shared_ptr<waiter> w = *best;
    waiting_.erase(best);
    if (!w->resumed && !w->key.empty() && --waiting_of_[w->key] <= 0) waiting_of_.erase(w->key);
    w->granted = true;
    take_locked(w->key);
    wake.push_back(std::move(w));
  }
}

bool admission_queue::leave_locked(const std::shared_ptr<waiter>& w) {
  if (w->granted) return false;
  auto it = std::find(waiting_.begin(), waiting_.end(), w);
  if (it != waiting_.end()) waiting_.erase(it);
  if (!w->resumed && !w->key.empty() && --waiting_of_[w->key] <= 0) waiting_of_.erase(w->key);
  return true;
}

error admission_queue::refusal_locked(const std::string& key, bool& full_for_key) const {
  const int cap = capacity_locked();
  const int maxq = max_queue_locked();
  const std::string slots = std::to_string(cap) + (cap == 1 ? " slot" : " slots");
  if (static_cast<int>(waiting_.size()) >= maxq) {
    full_for_key = false;
    const std::string waiting = waiting_.size() == 1 ? "1 request is" : std::to_string(waiting_.size()) + " requests are";
    return make_error(errc::too_many_requests,
                      "the queue for " + opt_.engine + " is full: " + waiting + " waiting for its " + slots +
                          "; retry later",
                      "", "queue_full");
  }
  const int per_key = opt_.per_key_queue > 0 ? opt_.per_key_queue : std::max(1, maxq / 2);
  auto it = waiting_of_.find(key);
  if (!key.empty() && it != waiting_of_.end() && it->second >= per_key) {
    full_for_key = true;
    const std::string held = it->second == 1 ? "1 request" : std::to_string(it->second) + " requests";
    return make_error(errc::too_many_requests,
                      "API key '" + key + "' already has " + held + " waiting for " +
                          opt_.engine + " (a key may hold " + std::to_string(per_key) + " of the queue's " +
                          std::to_string(maxq) + " places); retry later",
                      "", "queue_full_for_key");
  }
  return error{};
}

asio::awaitable<result<admission_queue::slot>> admission_queue::acquire(
    std::string key, bool resumed, std::function<asio::awaitable<bool>()> keep_alive,
    std::shared_ptr<cancel_token> cancel) {
  const auto arrived = clock_type::now();
  auto self = shared_from_this();  // the frame keeps the queue alive
  const asio::any_io_executor ex = co_await asio::this_coro::executor;
  std::shared_ptr<waiter> w;
  {
    std::lock_guard lock(mu_);
    if (waiting_.empty() && busy_ < capacity_locked()) {
      take_locked(key);
    } else {
      bool full_for_key = false;
      error refused = resumed ? error{} : refusal_locked(key, full_for_key);
      if (!refused.message.empty()) {
        count_rejection(opt_.engine, full_for_key ? "queue_full_for_key" : "queue_full");
        co_return refused;
      }
      w = std::make_shared<waiter>(key, resumed, ++seq_, ex);
      waiting_.push_back(w);
      if (!resumed && !key.empty()) ++waiting_of_[key];
    }
  }
  if (!w) {
    metrics::global().observe("warden_queue_wait_seconds", {{"engine", opt_.engine}}, 0);
    co_return handle();
  }
  // Whatever ends the wait (a grant, an error, the frame destroyed), the place is given up, and a
  // slot granted but never handed out goes back.
  struct place {
    admission_queue& q;
    std::shared_ptr<waiter> w;
    bool handed = false;
    ~place() {
      if (handed) return;
      bool granted = false;
      {
        std::lock_guard lock(q.mu_);
        granted = !q.leave_locked(w);
      }
      if (granted) q.release({});
    }
  } p{*this, w};
  cancel_token::registration reg;
  if (cancel) reg = cancel->on_cancel([w] { w->wake.try_send(boost::system::error_code{}); });
  // A resumed turn (a tool loop's next turn: its tools may have run) is never timed out half-way.
  const bool timed = opt_.timeout.count() > 0 && !resumed;
  const auto deadline = timed ? arrived + opt_.timeout : clock_type::time_point::max();
  asio::steady_timer timer(ex);
  while (true) {
    bool granted = false;
    {
      std::lock_guard lock(mu_);
      granted = w->granted;
    }
    if (granted) break;
    if (cancel && cancel->cancelled()) co_return make_error(errc::cancelled, cancel->reason());
    const auto now = clock_type::now();
    if (now >= deadline) {
      count_rejection(opt_.engine, "queue_timeout");
      const auto waited_s = std::chrono::duration_cast<std::chrono::seconds>(now - arrived).count();
      co_return make_error(errc::upstream_unavailable,
                           "the request waited " + std::to_string(waited_s) + " s in the queue for " + opt_.engine +
                               " without getting a slot (--queue-timeout); retry later",
                           "", "queue_timeout");
    }
    timer.expires_at(std::min(now + opt_.tick, deadline));
    std::variant<std::monostate, std::monostate> which;
    try {
      which = co_await (w->wake.async_receive(asio::use_awaitable) || timer.async_wait(asio::use_awaitable));
    } catch (const asio::multiple_exceptions& e) {
      std::rethrow_exception(e.first_exception());  // both waits aborted: the request is being cancelled
    }
    if (which.index() == 0 || clock_type::now() >= deadline || !keep_alive) continue;
    {
      std::lock_guard lock(mu_);
      granted = w->granted;
    }
    if (granted) break;
    const bool alive = co_await keep_alive();
    if (!alive) co_return make_error(errc::cancelled, "the client went away while its request was queued");
  }
  p.handed = true;
  metrics::global().observe("warden_queue_wait_seconds", {{"engine", opt_.engine}}, seconds(clock_type::now() - arrived));
  co_return handle();
}

admission_queue::snapshot_t admission_queue::snapshot() const {
  std::lock_guard lock(mu_);
  return snapshot_t{capacity_locked(), busy_, static_cast<int>(waiting_.size()), max_queue_locked()};
}

int admission_queue::retry_after_s() const {
  std::lock_guard lock(mu_);
  const double rounds = static_cast<double>(waiting_.size()) / capacity_locked() + 1.0;
  const double s = std::ceil(mean_hold_s_ * rounds);
  return std::clamp(static_cast<int>(s), 1, k_max_retry_after_s);
}

}  // namespace warden::engine

namespace warden::engine {

namespace {

/// A turn that holds its slot until the upstream's answer has ended.
class slot_turn final : public chat_turn {
 public:
  slot_turn(std::unique_ptr<chat_turn> inner, admission_queue::slot s) : inner_(std::move(inner)), slot_(std::move(s)) {}
  asio::awaitable<std::optional<model::stream_event>> next() override {
    auto ev = co_await inner_->next();
    if (!ev) slot_.reset();
    co_return std::move(ev);
  }
  bool poll_ready() override { return inner_->poll_ready(); }
  std::function<void()> canceller() const override { return inner_->canceller(); }

 private:
  std::unique_ptr<chat_turn> inner_;
  admission_queue::slot slot_;
};

}  // namespace

asio::awaitable<result<std::unique_ptr<chat_turn>>> admitting_backend::open_turn(
    const model::chat_request& req, std::shared_ptr<cancel_token> cancel,
    std::function<asio::awaitable<bool>()> on_silence) {
  if (!queue_) co_return co_await inner_.open_turn(req, std::move(cancel), std::move(on_silence));
  auto got = co_await queue_->acquire(key_, resumed_, on_silence, cancel);
  if (!got) {
    const bool refused = got.error().code == errc::too_many_requests || got.error().type_code == "queue_timeout";
    if (refused && on_refused_) on_refused_(queue_->retry_after_s());
    co_return got.error();
  }
  resumed_ = true;
  auto opened = co_await inner_.open_turn(req, std::move(cancel), std::move(on_silence));
  if (!opened) co_return opened.error();
  co_return std::unique_ptr<chat_turn>(std::make_unique<slot_turn>(std::move(*opened), std::move(*got)));
}

}  // namespace warden::engine
