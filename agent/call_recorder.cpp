#include "agent/call_recorder.h"

#include <spdlog/spdlog.h>

namespace warden::agent {

boost::asio::awaitable<void> store_recorder::record(store::call_record r) {
  // A named closure: GCC 12 destroys a temporary with captures inside a co_await twice.
  auto write = [this, rec = std::move(r)] { return log_.insert(rec); };
  auto written = co_await pool_.run_blocking(std::move(write));
  if (!written) spdlog::warn("the call record could not be written: {}", written.error().message);
}

void store_recorder::record_now(const store::call_record& r) {
  auto written = log_.insert(r);
  if (!written) spdlog::warn("the call record could not be written: {}", written.error().message);
}

}  // namespace warden::agent
