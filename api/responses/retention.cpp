#include "api/responses/retention.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "api/responses/run_state.h"

namespace warden::api::responses {

namespace asio = boost::asio;

std::chrono::seconds sweep_interval(std::chrono::seconds ttl) noexcept {
  return std::clamp(ttl / 4, std::chrono::seconds(1), std::chrono::seconds(600));
}

asio::awaitable<void> sweep_expired(store::response_store& db, blocking_pool* pool, std::chrono::seconds ttl) {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  store::response_store* store = &db;
  for (;;) {
    const std::int64_t cutoff = unix_s_now() - ttl.count();
    auto sweep = [store, cutoff]() { return store->remove_finished_before(cutoff); };  // named: blocking_pool.h
    auto swept = co_await off_thread(pool, sweep);
    if (!swept) spdlog::warn("responses sweep: {}", swept.error().message);
    else if (*swept > 0) spdlog::info("responses sweep: deleted {} stored responses older than {} s", *swept, ttl.count());
    timer.expires_after(sweep_interval(ttl));
    boost::system::error_code ec;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (ec) co_return;
  }
}

}  // namespace warden::api::responses
