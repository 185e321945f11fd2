#include "engine/engine_pool.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

#include "common/metrics.h"

#include <algorithm>
#include <stdexcept>

namespace warden::engine {

namespace asio = boost::asio;
using clock_type = std::chrono::steady_clock;

namespace {
constexpr const char* k_requests_metric = "warden_engine_requests_total";
/// How often a member's stream checks its head timeout while the head is awaited.
constexpr std::chrono::milliseconds k_head_tick{250};
void count_request(const std::string& engine, const char* outcome) {
  metrics::global().add(k_requests_metric, {{"engine", engine}, {"outcome", outcome}});
}
}  // namespace

struct engine_pool::member {
  pool_member_spec spec;
  chat_service chat;
  int outstanding = 0;
  int failures_in_row = 0;
  clock_type::time_point ejected_until{};
  std::uint64_t requests = 0;
  std::uint64_t failovers = 0;
  member(pool_member_spec s, http_client& client, std::chrono::milliseconds ping)
      : spec(std::move(s)), chat(*spec.up, client, ping) {}
};

/// The pool seen as one upstream (engine_pool::front()).
class engine_pool::front_upstream final : public upstream {
 public:
  explicit front_upstream(engine_pool& p) : p_(p) {}
  result<void> start() override { return {}; }
  void stop() override {}
  upstream_state state() const override {
    bool starting = false;
    for (const auto& m : p_.members_) {
      const upstream_state s = m->spec.up->state();
      if (s == upstream_state::ready) return s;
      starting = starting || s == upstream_state::starting;
    }
    return starting ? upstream_state::starting : upstream_state::failed;
  }
  std::string status_message() const override {
    if (state() == upstream_state::ready) return "ready";
    return p_.unavailable().message;
  }
  std::string model_id() const override { return lead().model_id(); }
  std::string url_for(std::string_view api_path) const override { return lead().url_for(api_path); }
  std::vector<std::string> request_headers() const override { return lead().request_headers(); }
  bool is_local() const override {
    return std::all_of(p_.members_.begin(), p_.members_.end(), [](const auto& m) { return m->spec.up->is_local(); });
  }
  model_caps caps() const override { return lead().caps(); }
  void begin() override {
    for (auto& m : p_.members_) m->spec.up->begin();
  }

 private:
  const upstream& lead() const {
    for (const auto& m : p_.members_) {
      if (m->spec.up->state() == upstream_state::ready) return *m->spec.up;
    }
    return *p_.members_.front()->spec.up;
  }
  engine_pool& p_;
};

engine_pool::engine_pool(std::vector<pool_member_spec> members, http_client& client, std::chrono::milliseconds ping,
                         pool_options o)
    : front_(std::make_unique<front_upstream>(*this)), opt_(o) {
  if (members.empty()) throw std::logic_error("engine_pool: no members");
  metrics::global().describe(k_requests_metric, "counter",
                             "Model requests an engine of the pool took, by outcome (answered; failed_over: it "
                             "failed before its first byte and another engine answered; failed: it failed and no "
                             "engine answered)");
  for (auto& s : members) {
    if (!s.up) throw std::logic_error("engine_pool: a member without an upstream");
    for (const char* outcome : {"answered", "failed_over", "failed"}) {  // every series exists from the start, at 0
      metrics::global().add(k_requests_metric, {{"engine", s.name}, {"outcome", outcome}}, 0);
    }
    members_.push_back(std::make_unique<member>(std::move(s), client, ping));
    // The head timeout is checked this often (a newcomer saw it fire at the next 15 s ping).
    if (opt_.head_timeout.count() > 0) members_.back()->chat.set_head_tick(k_head_tick);
  }
}

engine_pool::~engine_pool() = default;

upstream& engine_pool::front() { return *front_; }
const std::string& engine_pool::name(std::size_t i) const { return members_.at(i)->spec.name; }
chat_service& engine_pool::chat(std::size_t i) { return members_.at(i)->chat; }

bool engine_pool::healthy(const member& m, clock_type::time_point now) const {
  return m.spec.up->state() == upstream_state::ready && now >= m.ejected_until;
}

std::vector<std::size_t> engine_pool::candidates(std::string_view model, const std::vector<std::size_t>& tried) const {
  bool any_serves = false;
  for (const auto& m : members_) any_serves = any_serves || (!model.empty() && m->spec.up->model_id() == model);
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < members_.size(); ++i) {
    if (std::find(tried.begin(), tried.end(), i) != tried.end()) continue;
    if (any_serves && members_[i]->spec.up->model_id() != model) continue;
    out.push_back(i);
  }
  return out;
}

std::optional<engine_pool::choice> engine_pool::pick(std::string_view model, std::string_view follow,
                                                     const std::vector<std::size_t>& tried) {
  const std::vector<std::size_t> cands = candidates(model, tried);  // model ids: outside the lock
  const auto now = clock_type::now();
  std::lock_guard lock(mu_);
  std::vector<std::size_t> ok;
  for (std::size_t i : cands) {
    if (healthy(*members_[i], now)) ok.push_back(i);
  }
  if (ok.empty()) {  // every ready one is ejected: try them anyway rather than refuse (a pool-wide blip)
    for (std::size_t i : cands) {
      if (members_[i]->spec.up->state() == upstream_state::ready) ok.push_back(i);
    }
  }
  if (ok.empty()) return std::nullopt;
  if (!follow.empty()) {
    auto it = affinity_.find(std::string(follow));
    if (it != affinity_.end() && std::find(ok.begin(), ok.end(), it->second) != ok.end()) {
      return choice{it->second, hold_locked(it->second)};
    }
  }
  // Least outstanding; among equals, the first at or after the rotating start, which turns over
  // the candidates (over all members, two engines of a model among four took 3 requests in 4 to 1:
  // a newcomer run).
  const std::size_t start = rotate_++ % ok.size();
  std::optional<std::size_t> best;
  std::size_t best_rank = 0;
  for (std::size_t pos = 0; pos < ok.size(); ++pos) {
    const std::size_t i = ok[pos];
    const std::size_t rank = (pos + ok.size() - start) % ok.size();
    if (!best || members_[i]->outstanding < members_[*best]->outstanding ||
        (members_[i]->outstanding == members_[*best]->outstanding && rank < best_rank)) {
      best = i;
      best_rank = rank;
    }
  }
  return choice{*best, hold_locked(*best)};
}

asio::awaitable<std::optional<engine_pool::choice>> engine_pool::wait_pick(std::string model, std::string follow,
                                                                          std::vector<std::size_t> tried) {
  const auto deadline = clock_type::now() + opt_.load_wait;
  asio::steady_timer timer(co_await asio::this_coro::executor);
  while (true) {
    auto got = pick(model, follow, tried);
    if (got || clock_type::now() >= deadline) co_return got;
    bool starting = false;
    for (std::size_t i : candidates(model, tried)) starting = starting || members_[i]->spec.up->state() == upstream_state::starting;
    if (!starting) co_return std::nullopt;
    timer.expires_after(std::chrono::milliseconds(50));
    auto [ec] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    if (ec) co_return std::nullopt;
  }
}

std::shared_ptr<void> engine_pool::hold_locked(std::size_t i) {
  ++members_.at(i)->outstanding;
  return std::shared_ptr<void>(nullptr, [this, i](void*) {
    std::lock_guard lock(mu_);
    --members_[i]->outstanding;
  });
}

void engine_pool::remember_locked(const std::string& key, std::size_t i) {
  auto [it, fresh] = affinity_.insert_or_assign(key, i);
  if (!fresh) return;
  affinity_order_.push_back(key);
  while (affinity_order_.size() > opt_.affinity_capacity) {
    affinity_.erase(affinity_order_.front());
    affinity_order_.pop_front();
  }
}

void engine_pool::succeeded(std::size_t i, const std::vector<std::string>& keys) {
  {
    std::lock_guard lock(mu_);
    member& m = *members_.at(i);
    ++m.requests;
    m.failures_in_row = 0;
    m.ejected_until = {};
    for (const std::string& k : keys) {
      if (!k.empty()) remember_locked(k, i);
    }
  }
  count_request(name(i), "answered");
}

void engine_pool::failed(std::size_t i, const error& why, bool eject, const char* outcome) {
  std::chrono::milliseconds for_ms{0};
  {
    std::lock_guard lock(mu_);
    member& m = *members_.at(i);
    ++m.failovers;
    if (eject) {
      const int shift = std::min(m.failures_in_row, 15);
      ++m.failures_in_row;
      for_ms = std::min(opt_.eject_max, std::chrono::milliseconds(opt_.eject_base.count() << shift));
      m.ejected_until = clock_type::now() + for_ms;
    }
  }
  count_request(name(i), outcome);
  const std::string& where = members_[i]->spec.where;
  if (eject) {
    spdlog::warn("engine {}{}{} failed before answering ({}); ejected for {} ms", name(i), where.empty() ? "" : " at ",
                 where, why.message, for_ms.count());
  }
}

void engine_pool::settle(const std::vector<std::pair<std::size_t, error>>& failures, bool answered) {
  for (const auto& [i, why] : failures) {
    failed(i, why, answered || why.code == errc::upstream_unavailable, answered ? "failed_over" : "failed");
  }
}

error engine_pool::give_up(const std::vector<std::pair<std::size_t, error>>& failures, std::string_view model) {
  settle(failures, false);
  if (failures.empty()) return unavailable(model);
  error last = failures.back().second;
  // Which engine said it (a bare "Failed to connect to 127.0.0.1 port …" names none: a newcomer run).
  const std::string& name = members_.at(failures.back().first)->spec.name;
  if (!last.message.starts_with("engine " + name)) last.message = "engine " + name + ": " + last.message;
  return last;
}

bool engine_pool::fails_over(const error& e) {
  return e.code == errc::upstream_unavailable || e.code == errc::upstream_error || e.code == errc::too_many_requests;
}

error engine_pool::unavailable(std::string_view model) const {
  const std::vector<std::size_t> cands = candidates(model, {});
  const bool by_model = cands.size() < members_.size();  // some engine serves the model: only those
  std::string msg = by_model ? "no engine of the pool serving '" + std::string(model) + "' can take the request:"
                             : std::string("no engine of the pool can take the request:");
  const auto now = clock_type::now();
  std::lock_guard lock(mu_);
  for (std::size_t i : cands) {
    const auto& m = members_[i];
    msg.append(" ").append(m->spec.name).append(" (");
    if (m->spec.up->state() != upstream_state::ready) msg.append(m->spec.up->status_message());
    else msg.append(now < m->ejected_until ? "ejected after failing" : "ready");
    msg.append(");");
  }
  msg.pop_back();
  return make_error(errc::upstream_unavailable, msg);
}

std::vector<engine_pool::member_status> engine_pool::status() const {
  std::vector<member_status> out;
  const auto now = clock_type::now();
  for (const auto& m : members_) {
    const upstream& u = *m->spec.up;
    member_status s{m->spec.name, m->spec.where, u.model_id(), u.state(), u.status_message(), false, 0,
                    m->spec.slots, 0, 0, 0};
    std::lock_guard lock(mu_);
    s.healthy = healthy(*m, now);
    s.outstanding = m->outstanding;
    s.requests = m->requests;
    s.failovers = m->failovers;
    if (now < m->ejected_until) {
      s.ejected_ms = std::chrono::duration_cast<std::chrono::milliseconds>(m->ejected_until - now).count();
    }
    out.push_back(std::move(s));
  }
  return out;
}

int engine_pool::slots_now() const {
  if (total_slots() <= 0) return 0;
  int sum = 0;
  int smallest = 0;
  const auto now = clock_type::now();
  std::lock_guard lock(mu_);
  for (const auto& m : members_) {
    if (healthy(*m, now)) sum += m->spec.slots;
    smallest = smallest == 0 ? m->spec.slots : std::min(smallest, m->spec.slots);
  }
  return std::max(sum, smallest);
}

int engine_pool::total_slots() const {
  int sum = 0;
  for (const auto& m : members_) {
    if (m->spec.slots <= 0) return 0;
    sum += m->spec.slots;
  }
  return sum;
}

}  // namespace warden::engine
