#include "engine/upstream_registry.h"

#include <spdlog/spdlog.h>

#include <stdexcept>

namespace warden::engine {

on_demand_upstream::on_demand_upstream(std::unique_ptr<upstream> inner) : inner_(std::move(inner)) {}

on_demand_upstream::~on_demand_upstream() { stop(); }

void on_demand_upstream::begin() {
  std::lock_guard lock(mu_);
  if (begun_ || stopping_) return;
  begun_ = true;
  keeper_ = std::thread([this] {
    auto started = inner_->start();  // blocks until ready or failed
    if (!started) spdlog::error("{}", started.error().message);
    std::unique_lock lk(mu_);
    outcome_ = std::move(started);
    cv_.notify_all();
    // Stay alive as long as the child may: its PR_SET_PDEATHSIG is tied to this thread.
    cv_.wait(lk, [this] { return stopping_; });
  });
}

result<void> on_demand_upstream::start() {
  begin();
  std::unique_lock lock(mu_);
  cv_.wait(lock, [this] { return outcome_.has_value() || stopping_; });
  if (outcome_) return *outcome_;
  return make_error(errc::upstream_unavailable, "stopped before it was started");
}

void on_demand_upstream::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  inner_->stop();  // also ends a start() still loading (it polls the stop flag)
  if (keeper_.joinable()) keeper_.join();
}

upstream_state on_demand_upstream::state() const {
  std::lock_guard lock(mu_);
  if (!begun_) return upstream_state::stopped;
  if (!outcome_) return upstream_state::starting;
  return inner_->state();
}

std::string on_demand_upstream::status_message() const {
  std::lock_guard lock(mu_);
  if (!begun_) return "the model server for " + inner_->model_id() + " starts on first use";
  if (!outcome_) return "loading model " + inner_->model_id();
  return inner_->status_message();
}

upstream_registry::~upstream_registry() { stop_all(); }

upstream& upstream_registry::add(std::string name, std::unique_ptr<upstream> u, start_policy policy) {
  if (name.empty() || !u) throw std::logic_error("upstream_registry::add: an entry needs a name and an upstream");
  if (lookup(name)) throw std::logic_error("upstream_registry::add: '" + name + "' added twice");
  entry e{std::move(name), policy, nullptr, nullptr};
  switch (policy) {
    case start_policy::at_start_up: e.owned = std::move(u); break;
    case start_policy::on_first_use: {
      auto lazy = std::make_unique<on_demand_upstream>(std::move(u));
      e.lazy = lazy.get();
      e.owned = std::move(lazy);
      break;
    }
  }
  entries_.push_back(std::move(e));
  return *entries_.back().owned;
}

const upstream_registry::entry* upstream_registry::lookup(std::string_view name) const {
  for (const auto& e : entries_) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

upstream* upstream_registry::find(std::string_view name) const {
  const entry* e = lookup(name);
  return e ? e->owned.get() : nullptr;
}

on_demand_upstream* upstream_registry::on_demand(std::string_view name) const {
  const entry* e = lookup(name);
  return e ? e->lazy : nullptr;
}

result<void> upstream_registry::start_all() {
  for (auto& e : entries_) {
    if (e.policy != start_policy::at_start_up) continue;
    if (stopped_.load()) return make_error(errc::upstream_unavailable, e.name + ": stopped before it was started");
    if (auto started = e.owned->start(); !started) return started;
  }
  return {};
}

void upstream_registry::stop_all() {
  std::lock_guard lock(stop_mu_);
  stopped_.store(true);
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) it->owned->stop();
}

std::vector<upstream_registry::status> upstream_registry::statuses() const {
  std::vector<status> out;
  out.reserve(entries_.size());
  for (const auto& e : entries_) {
    const upstream& u = *e.owned;
    out.push_back({e.name, e.policy, u.state(), u.status_message(), u.model_id()});
  }
  return out;
}

}  // namespace warden::engine
