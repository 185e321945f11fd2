#include "common/blocking_pool.h"

#include <algorithm>

namespace warden {

blocking_pool::blocking_pool(std::size_t threads) : pool_(std::max<std::size_t>(threads, 1)) {}

blocking_pool::~blocking_pool() { stop(); }

void blocking_pool::stop() {
  {
    std::lock_guard lk(mu_);
    stopped_ = true;
  }
  // Queued jobs still run and post their completions before the threads end. A second caller
  // waits here until the first join is done.
  std::call_once(joined_, [this] { pool_.join(); });
}

}  // namespace warden
