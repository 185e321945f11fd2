#include "agent/call_recorder.h"

#include <spdlog/spdlog.h>

namespace warden::agent {

boost::asio::awaitable<void> store_recorder::record(store::call_record r) {
  // Queued, not awaited: the stream never waits for SQLite; the pool finishes queued writes
  // before it stops (app/serve.cpp stops it last).
  auto write = [this, rec = std::move(r)]() noexcept {
    try {
      record_now(rec);
    } catch (const std::exception& e) {
      spdlog::warn("the call record could not be written: {}", e.what());
    }
  };
  if (!pool_.post(std::move(write))) spdlog::warn("the call record was not written: warden is stopping");
  co_return;
}

void store_recorder::record_now(const store::call_record& r) {
  auto written = log_.insert(r);
  if (!written) spdlog::warn("the call record could not be written: {}", written.error().message);
}

}  // namespace warden::agent
