// rule_book — the remembered approvals (issue 10): "allow_session" rules in memory, for one
// session, and "allow_always" rules kept by a rule_persistence (in SQLite: the adapter of
// api/control/store_adapters.h over store/permission_rules_store.h), for every session,
// surviving restarts. The call policy asks match() for every call that would otherwise
// be asked about (agent/call_policy.h); a rule only ever turns an "ask" into a "run": it never
// turns the sandbox off or widens a call's isolation.
//
// Matching is agent/permission_rules.h's rule_matches(): exact arguments, or a command prefix
// that every segment of the tokenized command must start with, or a path prefix; expired rules
// never match and are dropped from list().
// Owners: a rule covers only the calls of its owner (permission_rule::owner, the API key name;
// "" for the single user); match() takes the caller's.
// At most k_max_rules rules are held, and k_max_session_rules per session of one owner (add() refuses more:
// errc::invalid_request); add() first drops expired rules (from the store too).
// Errors: store errors (errc::internal) from add/remove/load of an always-rule; the memory
// state is changed only when the store write succeeded.
// Thread-safety: every member is thread-safe. add/remove/load block on SQLite for always-rules:
// call them on the blocking pool; match/list never touch the disk.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/permission_rules.h"
#include "common/json_util.h"
#include "common/result.h"
#include "risk/risk.h"

namespace warden::agent {

inline constexpr std::size_t k_max_rules = 10000;
inline constexpr std::size_t k_max_session_rules = 1000;

/// Where the always-rules are kept across restarts. Errors: errc::internal when the storage
/// fails. Thread-safety: implementations must be thread-safe; calls may block.
class rule_persistence {
 public:
  virtual ~rule_persistence() = default;
  /// Adds a rule; an existing id is an error.
  virtual result<void> insert(const permission_rule& r) = 0;
  /// Every kept rule that can be read back, oldest first (rows that cannot are skipped).
  virtual result<std::vector<permission_rule>> list() const = 0;
  /// Deletes the rule with this id; false when there was none.
  virtual result<bool> remove(std::string_view id) = 0;
  /// Deletes the rules with 0 < expires_unix_ms <= now_ms; returns how many.
  virtual result<std::size_t> remove_expired(std::int64_t now_ms) = 0;
};

class rule_book {
 public:
  /// `store` may be null (memory only: always-rules are then forgotten at exit).
  explicit rule_book(rule_persistence* store) : store_(store) {}

  /// Loads the stored always-rules (start-up).
  result<void> load();
  /// The id of a rule that allows this call now; nullopt when none does. `risk` is the auto
  /// classifier's verdict on this very call (risk/risk.h), which a rule never overrides: a
  /// prefix rule (command_prefix / path_prefix) covers a call only when risk.hazard is false —
  /// high only because it is not known to be safe, never because of a named danger; a rule for
  /// exactly these arguments covers it either way (the person saw that very call).
  /// `session_id`: the session the request named; "" or k_shared_session (the request named
  /// none) matches no session rule. Only rules of `owner` (the request's API key name, "" for
  /// the single user) cover its calls.
  std::optional<std::string> match(std::string_view session_id, std::string_view tool, const json& args,
                                   std::int64_t now_ms, const risk::risk_assessment& risk,
                                   std::string_view owner = {}) const;
  /// The rule with this id, expired or not; nullopt when none.
  std::optional<permission_rule> find(std::string_view id) const;
  result<void> add(permission_rule r);
  /// Unexpired rules, oldest first; with a session id: that session's rules and the always-rules.
  std::vector<permission_rule> list(std::string_view session_id, std::int64_t now_ms) const;
  /// False when no such rule.
  result<bool> remove(std::string_view id);

 private:
  rule_persistence* store_;
  mutable std::mutex mu_;
  std::vector<permission_rule> rules_;
};

}  // namespace warden::agent
