#include <gtest/gtest.h>

#include <chrono>

#include "agent/rule_book.h"
#include "agent/testing/rule_fixtures.h"

namespace warden::agent {
namespace {

using testing::args_a;
using testing::args_b;
using testing::exact_rule;
using testing::k_now;

/// The classifier's verdicts a rule may meet: low; high only because not known to be safe; high
/// because of a named danger (risk.h's hazard).
risk::risk_assessment low() { return testing::low_risk(); }
risk::risk_assessment unknown() { return {risk::risk_level::high, {"runs mytool (not known to be safe)"}, false}; }
risk::risk_assessment hazard() { return {risk::risk_level::high, {"runs rm (destructive)"}, true}; }

std::vector<std::string> ids_of(const std::vector<permission_rule>& rules) {
  std::vector<std::string> out;
  for (const auto& r : rules) out.push_back(r.id);
  return out;
}

TEST(RuleBook, SessionRulesMatchOnlyTheirSession) {
  rule_book book(nullptr);
  ASSERT_TRUE(book.add(exact_rule("rule_s1", rule_scope::session, "s1")).ok());
  EXPECT_EQ(book.match("s1", "python", args_a(), k_now, low()), std::optional<std::string>("rule_s1"));
  EXPECT_EQ(book.match("s2", "python", args_a(), k_now, low()), std::nullopt);
  EXPECT_EQ(book.match("", "python", args_a(), k_now, low()), std::nullopt);
  EXPECT_EQ(book.match("s1", "python", args_b(), k_now, low()), std::nullopt);   // other arguments
  EXPECT_EQ(book.match("s1", "terminal", args_a(), k_now, low()), std::nullopt); // other tool
}

TEST(RuleBook, LoadWithoutStoreIsANoOp) {
  rule_book book(nullptr);
  EXPECT_TRUE(book.load().ok());
  EXPECT_TRUE(book.list("", k_now).empty());
  // An always-rule without a store lives in memory only.
  ASSERT_TRUE(book.add(exact_rule("rule_a", rule_scope::always, "")).ok());
  EXPECT_EQ(book.match("s1", "python", args_a(), k_now, low()), std::optional<std::string>("rule_a"));
}

TEST(RuleBook, ListDropsExpiredRulesAndFiltersBySession) {
  rule_book book(nullptr);
  ASSERT_TRUE(book.add(exact_rule("rule_s1", rule_scope::session, "s1")).ok());
  ASSERT_TRUE(book.add(exact_rule("rule_s2", rule_scope::session, "s2")).ok());
  ASSERT_TRUE(book.add(exact_rule("rule_all", rule_scope::always, "")).ok());
  ASSERT_TRUE(book.add(exact_rule("rule_old", rule_scope::session, "s1", k_now)).ok());        // expires now
  ASSERT_TRUE(book.add(exact_rule("rule_later", rule_scope::always, "", k_now + 1000)).ok());

  using v = std::vector<std::string>;
  EXPECT_EQ(ids_of(book.list("", k_now)), (v{"rule_s1", "rule_s2", "rule_all", "rule_later"}));
  EXPECT_EQ(ids_of(book.list("s1", k_now)), (v{"rule_s1", "rule_all", "rule_later"}));
  EXPECT_EQ(ids_of(book.list("s2", k_now)), (v{"rule_s2", "rule_all", "rule_later"}));
  EXPECT_EQ(ids_of(book.list("s3", k_now)), (v{"rule_all", "rule_later"}));
  // add() dropped rule_old: it had expired when rule_later was added (created at k_now).
  EXPECT_EQ(ids_of(book.list("s1", k_now - 1)), (v{"rule_s1", "rule_all", "rule_later"}));
  EXPECT_EQ(ids_of(book.list("", k_now + 1000)), (v{"rule_s1", "rule_s2", "rule_all"}));
}

TEST(RuleBook, ExpiredRulesDoNotMatch) {
  rule_book book(nullptr);
  ASSERT_TRUE(book.add(exact_rule("rule_soon", rule_scope::session, "s1", k_now + 10)).ok());
  EXPECT_EQ(book.match("s1", "python", args_a(), k_now, low()), std::optional<std::string>("rule_soon"));
  EXPECT_EQ(book.match("s1", "python", args_a(), k_now + 9, low()), std::optional<std::string>("rule_soon"));
  EXPECT_EQ(book.match("s1", "python", args_a(), k_now + 10, low()), std::nullopt);
  EXPECT_EQ(book.match("s1", "python", args_a(), k_now + 11, low()), std::nullopt);

  // A later, unexpired rule for the same call still matches after the first expired.
  ASSERT_TRUE(book.add(exact_rule("rule_fresh", rule_scope::always, "", k_now + 100)).ok());
  EXPECT_EQ(book.match("s1", "python", args_a(), k_now + 50, low()), std::optional<std::string>("rule_fresh"));
  EXPECT_EQ(book.match("s1", "python", args_a(), k_now + 100, low()), std::nullopt);
}

TEST(RuleBook, CommandPrefixRulesMatchThroughTheBook) {
  rule_book book(nullptr);
  permission_rule r;
  r.id = "rule_ls";
  r.scope = rule_scope::session;
  r.session_id = "s1";
  r.tool = "terminal";
  r.command_prefix = "ls -la";
  r.created_unix_ms = k_now;
  ASSERT_TRUE(book.add(r).ok());
  EXPECT_EQ(book.match("s1", "terminal", json{{"command", "ls -la -s"}}, k_now, low()), std::optional<std::string>("rule_ls"));
  EXPECT_EQ(book.match("s1", "terminal", json{{"command", "ls -la; rm -rf ~"}}, k_now, low()), std::nullopt);
  EXPECT_EQ(book.match("s2", "terminal", json{{"command", "ls -la"}}, k_now, low()), std::nullopt);
}

TEST(RuleBook, APrefixRuleNeverCoversANamedDanger) {
  rule_book book(nullptr);
  permission_rule r;
  r.id = "rule_tool";
  r.scope = rule_scope::always;
  r.tool = "terminal";
  r.command_prefix = "mytool";
  r.created_unix_ms = k_now;
  ASSERT_TRUE(book.add(r).ok());
  const json call = {{"command", "mytool --all"}};
  EXPECT_EQ(book.match("s1", "terminal", call, k_now, low()), std::optional<std::string>("rule_tool"));
  EXPECT_EQ(book.match("s1", "terminal", call, k_now, unknown()), std::optional<std::string>("rule_tool"));
  EXPECT_EQ(book.match("s1", "terminal", call, k_now, hazard()), std::nullopt);

  permission_rule p;
  p.id = "rule_path";
  p.scope = rule_scope::always;
  p.tool = "edit_file";
  p.path_prefix = "/workspace/src";
  p.created_unix_ms = k_now;
  ASSERT_TRUE(book.add(p).ok());
  const json edit = {{"path", "/workspace/src/a.txt"}, {"content", "x"}};
  EXPECT_EQ(book.match("s1", "edit_file", edit, k_now, unknown()), std::optional<std::string>("rule_path"));
  EXPECT_EQ(book.match("s1", "edit_file", edit, k_now, hazard()), std::nullopt);

  // A rule for exactly these arguments covers the very call the person saw, hazard or not.
  ASSERT_TRUE(book.add(exact_rule("rule_exact", rule_scope::always, "")).ok());
  EXPECT_EQ(book.match("s1", "python", args_a(), k_now, hazard()), std::optional<std::string>("rule_exact"));
  EXPECT_EQ(book.match("s1", "python", args_b(), k_now, hazard()), std::nullopt);
}

TEST(RuleBook, ARequestWithoutASessionUsesNoSessionRule) {
  rule_book book(nullptr);
  permission_rule shared = exact_rule("rule_shared", rule_scope::session, std::string(k_shared_session));
  ASSERT_TRUE(book.add(shared).ok());  // as if stored by an older warden
  ASSERT_TRUE(book.add(exact_rule("rule_s1", rule_scope::session, "s1")).ok());
  EXPECT_EQ(book.match("", "python", args_a(), k_now, low()), std::nullopt);
  EXPECT_EQ(book.match(k_shared_session, "python", args_a(), k_now, low()), std::nullopt);
  EXPECT_EQ(book.match("s1", "python", args_a(), k_now, low()), std::optional<std::string>("rule_s1"));
  // always-rules still apply to it
  ASSERT_TRUE(book.add(exact_rule("rule_all", rule_scope::always, "")).ok());
  EXPECT_EQ(book.match("", "python", args_a(), k_now, low()), std::optional<std::string>("rule_all"));
}

TEST(RuleBook, OneSessionCannotTakeEveryoneElsesRules) {
  rule_book book(nullptr);
  for (std::size_t i = 0; i < k_max_session_rules; ++i) {
    permission_rule r;
    r.id = "rule_" + std::to_string(i);
    r.session_id = "greedy";
    r.tool = "python";
    ASSERT_TRUE(book.add(std::move(r)).ok()) << i;
  }
  auto over = book.add(exact_rule("rule_over", rule_scope::session, "greedy"));
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.error().message.find("per session"), std::string::npos);
  EXPECT_TRUE(book.add(exact_rule("rule_other", rule_scope::session, "s2")).ok());
}

TEST(RuleBook, RefusesMoreThanTheCap) {
  rule_book book(nullptr);
  for (std::size_t i = 0; i < k_max_rules; ++i) {
    permission_rule r;
    r.id = "rule_" + std::to_string(i);
    r.session_id = "s" + std::to_string(i / k_max_session_rules + 1);  // each session at its own cap
    r.tool = "python";
    ASSERT_TRUE(book.add(std::move(r)).ok()) << i;
  }
  auto over = book.add(exact_rule("rule_over", rule_scope::session, "s-new"));
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().code, errc::invalid_request);
  EXPECT_FALSE(over.error().message.empty());
  EXPECT_EQ(book.list("", k_now).size(), k_max_rules);
  EXPECT_EQ(book.match("s1", "python", args_a(), k_now, low()), std::nullopt);  // the refused rule is not there
  // Removing one makes room again.
  auto gone = book.remove("rule_0");
  ASSERT_TRUE(gone.ok());
  EXPECT_TRUE(*gone);
  EXPECT_TRUE(book.add(exact_rule("rule_over", rule_scope::session, "s1")).ok());
  EXPECT_EQ(book.match("s1", "python", args_a(), k_now, low()), std::optional<std::string>("rule_over"));
}

}  // namespace
}  // namespace warden::agent
