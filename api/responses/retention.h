// The --responses-ttl sweep: finished stored responses (and, by cascade, their events) whose
// last update is older than the retention period are deleted, every quarter of the period
// (at least every second, at most every 10 minutes), from start-up on. Queued and in-progress
// rows are never swept (a live background run, or one a restart failed at start-up).
// Thread-safety: a coroutine on any executor; the store is called on the blocking pool. It
// runs until its executor stops.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>

#include "common/blocking_pool.h"
#include "store/responses_store.h"

namespace warden::api::responses {

/// How often the sweep runs for a retention period `ttl`: ttl/4 within [1 s, 600 s].
std::chrono::seconds sweep_interval(std::chrono::seconds ttl) noexcept;

/// Sweeps once now, then every sweep_interval(ttl). `ttl` must be positive; `pool` null runs
/// the store inline (tests).
boost::asio::awaitable<void> sweep_expired(store::response_store& db, blocking_pool* pool, std::chrono::seconds ttl);

}  // namespace warden::api::responses
