// store_recorder — writes every call record to the audit table (store/call_records.h) on the
// blocking pool, so SQLite never blocks an io thread: record() queues the write and returns at
// once (the stream never waits for the disk); queued writes finish before the pool stops.
// record_now() writes on the calling thread (a call torn down without a coroutine). A failed
// write is logged (warning) and the loop goes on: the record is still in loop_result::calls.
// Thread-safety: shared by all loops; call_log serializes the writes.
#pragma once

#include "agent/loop_context.h"
#include "common/blocking_pool.h"
#include "store/call_records.h"

namespace warden::agent {

class store_recorder : public call_recorder {
 public:
  store_recorder(store::call_log& log, blocking_pool& pool) : log_(log), pool_(pool) {}
  boost::asio::awaitable<void> record(store::call_record r) override;
  void record_now(const store::call_record& r) override;

 private:
  store::call_log& log_;
  blocking_pool& pool_;
};

}  // namespace warden::agent
