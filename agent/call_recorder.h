// store_recorder — writes every call record to the audit table (store/call_records.h) on the
// blocking pool, so SQLite never blocks an io thread. open() — the row of a call about to run —
// is awaited: when SQLite cannot write it (disk full, database locked past busy_timeout, read
// only) the call is refused rather than run unrecorded (call_runner.h). record() queues the
// completion (or the row of a call that never ran) and returns at once (the stream never waits
// for the disk); queued writes finish before the pool stops. record_now() writes on the calling
// thread (a call torn down without a coroutine). A failed record()/record_now() is logged
// (warning) and the loop goes on: the record is still in loop_result::calls.
// Thread-safety: shared by all loops; call_log serializes the writes.
#pragma once

#include "agent/loop_context.h"
#include "common/blocking_pool.h"
#include "store/call_records.h"

namespace warden::agent {

class store_recorder : public call_recorder {
 public:
  store_recorder(store::call_log& log, blocking_pool& pool) : log_(log), pool_(pool) {}
  boost::asio::awaitable<result<std::int64_t>> open(store::call_record r) override;
  boost::asio::awaitable<void> record(std::int64_t row, store::call_record r) override;
  void record_now(std::int64_t row, const store::call_record& r) override;

 private:
  store::call_log& log_;
  blocking_pool& pool_;
};

}  // namespace warden::agent
