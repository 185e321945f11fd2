#include "agent/rule_book.h"

#include <algorithm>

namespace warden::agent {

result<void> rule_book::load() {
  if (!store_) return {};
  auto rows = store_->list();
  if (!rows) return rows.error();
  std::lock_guard lk(mu_);
  for (auto& r : *rows) {
    if (r.scope != rule_scope::always) continue;
    if (std::none_of(rules_.begin(), rules_.end(), [&](const permission_rule& x) { return x.id == r.id; })) {
      rules_.push_back(std::move(r));
    }
  }
  return {};
}

std::optional<std::string> rule_book::match(std::string_view session, std::string_view tool, const json& args,
                                            std::int64_t now_ms, const risk::risk_assessment& risk,
                                            std::string_view owner) const {
  std::lock_guard lk(mu_);
  for (const auto& r : rules_) {
    if (r.owner != owner) continue;  // another key's rule never covers this caller's calls
    if (risk.hazard && !r.arguments) continue;  // prefixes never widen into a named danger
    if (r.tool == tool && rule_matches(r, session, tool, args, now_ms)) return r.id;
  }
  return std::nullopt;
}

result<void> rule_book::add(permission_rule r) {
  const std::int64_t now = r.created_unix_ms;
  if (store_) (void)store_->remove_expired(now);  // best effort: expired rows never match anyway
  {
    std::lock_guard lk(mu_);
    std::erase_if(rules_, [now](const permission_rule& x) { return x.expires_unix_ms != 0 && x.expires_unix_ms <= now; });
    const auto in_session = std::count_if(rules_.begin(), rules_.end(), [&](const permission_rule& x) {
      return x.scope == rule_scope::session && x.session_id == r.session_id && x.owner == r.owner;
    });
    const bool session_full = r.scope == rule_scope::session && static_cast<std::size_t>(in_session) >= k_max_session_rules;
    if (rules_.size() >= k_max_rules || session_full) {
      return make_error(errc::invalid_request,
                        "too many remembered rules (at most " + std::to_string(k_max_session_rules) + " per session, " +
                            std::to_string(k_max_rules) + " in all); revoke some with DELETE /api/permissions/rules/{id}",
                        "decision", "too_many_rules");
    }
  }
  if (r.scope == rule_scope::always && store_) {
    if (auto w = store_->insert(r); !w) return w.error();
  }
  std::lock_guard lk(mu_);
  rules_.push_back(std::move(r));
  return {};
}

std::vector<permission_rule> rule_book::list(std::string_view session, std::int64_t now_ms) const {
  std::vector<permission_rule> out;
  std::lock_guard lk(mu_);
  for (const auto& r : rules_) {
    if (r.expires_unix_ms != 0 && r.expires_unix_ms <= now_ms) continue;
    if (!session.empty() && r.scope == rule_scope::session && r.session_id != session) continue;
    out.push_back(r);
  }
  return out;
}

std::optional<permission_rule> rule_book::find(std::string_view id) const {
  std::lock_guard lk(mu_);
  auto it = std::find_if(rules_.begin(), rules_.end(), [&](const permission_rule& r) { return r.id == id; });
  if (it == rules_.end()) return std::nullopt;
  return *it;
}

result<bool> rule_book::remove(std::string_view id) {
  bool stored = false;
  {
    std::lock_guard lk(mu_);
    auto it = std::find_if(rules_.begin(), rules_.end(), [&](const permission_rule& r) { return r.id == id; });
    if (it == rules_.end()) return false;
    stored = it->scope == rule_scope::always;
  }
  if (stored && store_) {
    auto gone = store_->remove(id);
    if (!gone) return gone.error();
  }
  std::lock_guard lk(mu_);
  const auto before = rules_.size();
  std::erase_if(rules_, [&](const permission_rule& r) { return r.id == id; });
  return rules_.size() != before;
}

}  // namespace warden::agent
