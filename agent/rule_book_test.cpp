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

std::vector<std::string> ids_of(const std::vector<permission_rule>& rules) {
  std::vector<std::string> out;
  for (const auto& r : rules) out.push_back(r.id);
  return out;
}

TEST(RuleBook, SessionRulesMatchOnlyTheirSession) {
  rule_book book(nullptr);
  ASSERT_TRUE(book.add(exact_rule("rule_s1", rule_scope::session, "s1")).ok());
  EXPECT_EQ(book.match("s1", "python", args_a(), k_now), std::optional<std::string>("rule_s1"));
  EXPECT_EQ(book.match("s2", "python", args_a(), k_now), std::nullopt);
  EXPECT_EQ(book.match("", "python", args_a(), k_now), std::nullopt);
  EXPECT_EQ(book.match("s1", "python", args_b(), k_now), std::nullopt);   // other arguments
  EXPECT_EQ(book.match("s1", "terminal", args_a(), k_now), std::nullopt); // other tool
}

TEST(RuleBook, LoadWithoutStoreIsANoOp) {
  rule_book book(nullptr);
  EXPECT_TRUE(book.load().ok());
  EXPECT_TRUE(book.list("", k_now).empty());
  // An always-rule without a store lives in memory only.
  ASSERT_TRUE(book.add(exact_rule("rule_a", rule_scope::always, "")).ok());
  EXPECT_EQ(book.match("s1", "python", args_a(), k_now), std::optional<std::string>("rule_a"));
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
  EXPECT_EQ(book.match("s1", "python", args_a(), k_now), std::optional<std::string>("rule_soon"));
  EXPECT_EQ(book.match("s1", "python", args_a(), k_now + 9), std::optional<std::string>("rule_soon"));
  EXPECT_EQ(book.match("s1", "python", args_a(), k_now + 10), std::nullopt);
  EXPECT_EQ(book.match("s1", "python", args_a(), k_now + 11), std::nullopt);

  // A later, unexpired rule for the same call still matches after the first expired.
  ASSERT_TRUE(book.add(exact_rule("rule_fresh", rule_scope::always, "", k_now + 100)).ok());
  EXPECT_EQ(book.match("s1", "python", args_a(), k_now + 50), std::optional<std::string>("rule_fresh"));
  EXPECT_EQ(book.match("s1", "python", args_a(), k_now + 100), std::nullopt);
}

TEST(RuleBook, CommandPrefixRulesMatchThroughTheBook) {
  rule_book book(nullptr);
  permission_rule r;
  r.id = "rule_git";
  r.scope = rule_scope::session;
  r.session_id = "s1";
  r.tool = "terminal";
  r.command_prefix = "git status";
  r.created_unix_ms = k_now;
  ASSERT_TRUE(book.add(r).ok());
  EXPECT_EQ(book.match("s1", "terminal", json{{"command", "git status -s"}}, k_now), std::optional<std::string>("rule_git"));
  EXPECT_EQ(book.match("s1", "terminal", json{{"command", "git status; rm -rf ~"}}, k_now), std::nullopt);
  EXPECT_EQ(book.match("s2", "terminal", json{{"command", "git status"}}, k_now), std::nullopt);
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
  EXPECT_EQ(book.match("s1", "python", args_a(), k_now), std::nullopt);  // the refused rule is not there
  // Removing one makes room again.
  auto gone = book.remove("rule_0");
  ASSERT_TRUE(gone.ok());
  EXPECT_TRUE(*gone);
  EXPECT_TRUE(book.add(exact_rule("rule_over", rule_scope::session, "s1")).ok());
  EXPECT_EQ(book.match("s1", "python", args_a(), k_now), std::optional<std::string>("rule_over"));
}

}  // namespace
}  // namespace warden::agent
