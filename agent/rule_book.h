// rule_book — the remembered approvals (issue 10): "allow_session" rules in memory, for one
// session, and "allow_always" rules stored in SQLite (store/permission_rules_store.h), for every
// session, surviving restarts. The call policy asks match() for every call that would otherwise
// be asked about (agent/call_policy.h); a rule only ever turns an "ask" into a "run": it never
// turns the sandbox off or widens a call's isolation.
//
// Matching is agent/permission_rules.h's rule_matches(): exact arguments, or a command prefix
// that every segment of the tokenized command must start with, or a path prefix; expired rules
// never match and are dropped from list().
// At most k_max_rules rules are held, and k_max_session_rules per session (add() refuses more:
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
#include "store/permission_rules_store.h"

namespace warden::agent {

inline constexpr std::size_t k_max_rules = 10000;
inline constexpr std::size_t k_max_session_rules = 1000;

class rule_book {
 public:
  /// `store` may be null (memory only: always-rules are then forgotten at exit).
  explicit rule_book(store::rule_store* store) : store_(store) {}

  /// Loads the stored always-rules (start-up).
  result<void> load();
  /// The id of a rule that allows this call now; nullopt when none does. A prefix rule
  /// (command_prefix / path_prefix) never covers a call the classifier rates high risk: only a
  /// rule for exactly these arguments does (the person saw that very call).
  std::optional<std::string> match(std::string_view session_id, std::string_view tool, const json& args,
                                   std::int64_t now_ms, bool high_risk = false) const;
  result<void> add(permission_rule r);
  /// Unexpired rules, oldest first; with a session id: that session's rules and the always-rules.
  std::vector<permission_rule> list(std::string_view session_id, std::int64_t now_ms) const;
  /// False when no such rule.
  result<bool> remove(std::string_view id);

 private:
  store::rule_store* store_;
  mutable std::mutex mu_;
  std::vector<permission_rule> rules_;
};

/// Conversions between the store's row and the rule.
store::stored_rule to_stored(const permission_rule& r);
std::optional<permission_rule> from_stored(const store::stored_rule& s);

}  // namespace warden::agent
