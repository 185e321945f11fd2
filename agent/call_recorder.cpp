#include "agent/call_recorder.h"

#include <spdlog/spdlog.h>

namespace warden::agent {

boost::asio::awaitable<result<std::int64_t>> store_recorder::open(store::call_record r) {
  auto write = [this, rec = std::move(r)]() -> result<std::int64_t> { return log_.insert(rec); };
  result<std::int64_t> row = make_error(errc::internal, "warden is stopping");
  try {
    row = co_await pool_.run_blocking(write);
  } catch (const std::exception& e) {
    row = make_error(errc::internal, e.what());
  }
  co_return row;
}

boost::asio::awaitable<void> store_recorder::record(std::int64_t row, store::call_record r) {
  // Queued, not awaited: the stream never waits for SQLite; the pool finishes queued writes
  // before it stops (app/serve.cpp stops it last).
  auto write = [this, row, rec = std::move(r)]() noexcept {
    try {
      record_now(row, rec);
    } catch (const std::exception& e) {
      spdlog::warn("the call record could not be written: {}", e.what());
    }
  };
  if (!pool_.post(std::move(write))) spdlog::warn("the call record was not written: warden is stopping");
  co_return;
}

void store_recorder::record_now(std::int64_t row, const store::call_record& r) {
  if (row > 0) {
    if (auto w = log_.update(row, r); !w) spdlog::warn("the call record could not be written: {}", w.error().message);
  } else if (auto w = log_.insert(r); !w) {
    spdlog::warn("the call record could not be written: {}", w.error().message);
  }
}

}  // namespace warden::agent
