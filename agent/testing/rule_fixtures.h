// Test support (header-only, for *_test.cpp): the remembered-rule fixtures that agent/'s rule
// book tests and api/control's SQLite adapter tests share.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "agent/permission_rules.h"
#include "common/json_util.h"
#include "risk/risk.h"

namespace warden::agent::testing {

/// A fixed "now" (unix ms) the rules are created at.
inline constexpr std::int64_t k_now = 1'700'000'000'000;

/// The classifier's "low" verdict (no hazard), for rule_book::match where the risk does not matter.
inline risk::risk_assessment low_risk() { return {risk::risk_level::low, {}, false}; }

inline json args_a() { return json{{"code", "print(1)"}}; }
inline json args_b() { return json{{"code", "print(2)"}}; }

/// A rule for python with exactly args_a(), named `id`.
inline permission_rule exact_rule(std::string id, rule_scope scope, std::string session, std::int64_t expires = 0) {
  permission_rule r;
  r.id = std::move(id);
  r.scope = scope;
  r.session_id = std::move(session);
  r.tool = "python";
  r.arguments = dump_safe(args_a());
  r.created_unix_ms = k_now;
  r.expires_unix_ms = expires;
  return r;
}

}  // namespace warden::agent::testing
