// warden::store::rule_store — the table of remembered permission rules ("allow always" answers
// to approval questions, issue 10), so they survive restarts. api/control/store_adapters.h
// converts rows to and from agent's permission_rule (agent/rule_book.h decides what they
// match); this table only keeps them.
//
// Table `permission_rules` (schema version 2, database.cpp): id TEXT PRIMARY KEY, scope,
// session_id, tool, command_prefix / path_prefix / arguments (NULL when absent),
// created_unix_ms, expires_unix_ms, and owner (schema 5; "" = the single user). Strings are
// stored byte for byte with their length.
// Times are Unix epoch milliseconds; expires_unix_ms 0 means the rule never expires.
// Errors: errc::internal naming the database file and sqlite3_errmsg (database.h), inserting
// an id that exists included. Nothing throws for SQLite errors.
// Thread-safety: thread-safe (it serializes on the database); it only borrows the database,
// which must outlive it. Calls block: run them off the io threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "store/database.h"

namespace warden::store {

/// One row of `permission_rules`, as the adapter hands it over.
struct stored_rule {
  std::string id;          ///< unique ("rule_…", common/ids.h)
  std::string scope;       ///< "session" | "always" (agent/'s names; not checked here)
  std::string session_id;  ///< "" for a rule of every session
  std::string tool;
  std::optional<std::string> command_prefix, path_prefix;
  std::optional<std::string> arguments;  ///< the exact arguments object as JSON text
  std::int64_t created_unix_ms = 0;
  std::int64_t expires_unix_ms = 0;      ///< 0 = never
  std::string owner;                     ///< the API key name whose calls it covers ("" = single user)
};

class rule_store {
 public:
  explicit rule_store(database& db);

  /// Adds a rule; an existing id is an error.
  result<void> insert(const stored_rule& r);
  /// Every rule, oldest first (created_unix_ms, then id).
  result<std::vector<stored_rule>> list() const;
  /// Deletes the rule with this id; false when there was none.
  result<bool> remove(std::string_view id);
  /// Deletes the rules with 0 < expires_unix_ms <= now_ms; returns how many.
  result<std::size_t> remove_expired(std::int64_t now_ms);

 private:
  database& db_;
};

}  // namespace warden::store
