// store_adapters — the one place where agent/'s records and rules meet store/'s tables (agent/
// includes nothing of store/, DESIGN §3; store/ keeps its own row types):
//   to_row()         agent::call_record (the policy's verdict types, agent/call_policy.h) →
//                    store::call_record (a call_records row, store/call_records.h); the verdict
//                    and decider go in as their agent::to_string() names, the text the row holds
//   to_stored() / from_stored()
//                    agent::permission_rule ↔ store::stored_rule (a permission_rules row);
//                    from_stored() is nullopt for a row whose scope agent/ does not know
//   store_recorder   agent::call_recorder over store::call_log: writes every call record to the
//                    audit table on the blocking pool, so SQLite never blocks an io thread.
//                    open() — the row of a call about to run — is awaited: when SQLite cannot
//                    write it (disk full, database locked past busy_timeout, read only) the call
//                    is refused rather than run unrecorded (agent/call_runner.h). record() queues
//                    the completion (or the row of a call that never ran) and returns at once
//                    (the stream never waits for the disk); queued writes finish before the pool
//                    stops. record_now() writes on the calling thread (a call torn down without a
//                    coroutine). A failed record()/record_now() is logged (warning) and the loop
//                    goes on: the record is still in loop_result::calls.
//   stored_rules     agent::rule_persistence over store::rule_store (rows it cannot read are
//                    skipped by list(), as the rule book always did).
// Thread-safety: the conversions are pure; store_recorder and stored_rules are shared by all
// loops (call_log and rule_store serialize on the database) and only borrow what they are given.
#pragma once

#include <optional>

#include "agent/call_record.h"
#include "agent/loop_context.h"
#include "agent/rule_book.h"
#include "common/blocking_pool.h"
#include "store/call_records.h"
#include "store/permission_rules_store.h"

namespace warden::api::control {

store::call_record to_row(const agent::call_record& r);

store::stored_rule to_stored(const agent::permission_rule& r);
std::optional<agent::permission_rule> from_stored(const store::stored_rule& s);

class store_recorder : public agent::call_recorder {
 public:
  store_recorder(store::call_log& log, blocking_pool& pool) : log_(log), pool_(pool) {}
  boost::asio::awaitable<result<std::int64_t>> open(agent::call_record r) override;
  boost::asio::awaitable<void> record(std::int64_t row, agent::call_record r) override;
  void record_now(std::int64_t row, const agent::call_record& r) override;

 private:
  store::call_log& log_;
  blocking_pool& pool_;
};

class stored_rules : public agent::rule_persistence {
 public:
  explicit stored_rules(store::rule_store& rows) : rows_(rows) {}
  result<void> insert(const agent::permission_rule& r) override;
  result<std::vector<agent::permission_rule>> list() const override;
  result<bool> remove(std::string_view id) override;
  result<std::size_t> remove_expired(std::int64_t now_ms) override;

 private:
  store::rule_store& rows_;
};

}  // namespace warden::api::control
