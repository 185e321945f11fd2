#include <gtest/gtest.h>

#include <chrono>
#include <memory>

#include "agent/rule_book.h"
#include "store/database.h"
#include "store/permission_rules_store.h"

namespace warden::agent {
namespace {

constexpr std::int64_t k_now = 1'700'000'000'000;

json args_a() { return json{{"code", "print(1)"}}; }
json args_b() { return json{{"code", "print(2)"}}; }

/// A rule for python with exactly args_a(), named `id`.
permission_rule exact_rule(std::string id, rule_scope scope, std::string session, std::int64_t expires = 0) {
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

std::unique_ptr<store::database> memory_db() {
  auto db = store::database::open_memory();
  EXPECT_TRUE(db.ok()) << (db.ok() ? "" : db.error().message);
  return db.ok() ? std::move(*db) : nullptr;
}

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

TEST(RuleBook, AlwaysRulesMatchEverySessionAndAreStored) {
  auto db = memory_db();
  ASSERT_TRUE(db);
  store::rule_store st(*db);
  rule_book book(&st);
  ASSERT_TRUE(book.add(exact_rule("rule_a", rule_scope::always, "")).ok());
  ASSERT_TRUE(book.add(exact_rule("rule_s", rule_scope::session, "s1")).ok());
  EXPECT_EQ(book.match("s1", "python", args_a(), k_now), std::optional<std::string>("rule_a"));  // oldest first
  EXPECT_EQ(book.match("s2", "python", args_a(), k_now), std::optional<std::string>("rule_a"));
  EXPECT_EQ(book.match("other-session", "python", args_a(), k_now), std::optional<std::string>("rule_a"));
  EXPECT_EQ(book.match("s2", "python", args_b(), k_now), std::nullopt);

  // Only the always-rule reached the table.
  auto rows = st.list();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].id, "rule_a");
  EXPECT_EQ((*rows)[0].scope, "always");
  EXPECT_EQ((*rows)[0].arguments, std::optional<std::string>(dump_safe(args_a())));

  // A second book over the same database (a restart) loads it, and only it.
  rule_book again(&st);
  EXPECT_EQ(again.match("s9", "python", args_a(), k_now), std::nullopt);
  ASSERT_TRUE(again.load().ok());
  EXPECT_EQ(again.match("s9", "python", args_a(), k_now), std::optional<std::string>("rule_a"));
  auto loaded = again.list("", k_now);
  ASSERT_EQ(loaded.size(), 1u);
  EXPECT_EQ(loaded[0], exact_rule("rule_a", rule_scope::always, ""));
  // load() twice does not duplicate.
  ASSERT_TRUE(again.load().ok());
  EXPECT_EQ(again.list("", k_now).size(), 1u);
}

TEST(RuleBook, LoadWithoutStoreIsANoOp) {
  rule_book book(nullptr);
  EXPECT_TRUE(book.load().ok());
  EXPECT_TRUE(book.list("", k_now).empty());
  // An always-rule without a store lives in memory only.
  ASSERT_TRUE(book.add(exact_rule("rule_a", rule_scope::always, "")).ok());
  EXPECT_EQ(book.match("s1", "python", args_a(), k_now), std::optional<std::string>("rule_a"));
}

TEST(RuleBook, RemoveDeletesFromMemoryAndStore) {
  auto db = memory_db();
  ASSERT_TRUE(db);
  store::rule_store st(*db);
  rule_book book(&st);
  ASSERT_TRUE(book.add(exact_rule("rule_a", rule_scope::always, "")).ok());
  ASSERT_TRUE(book.add(exact_rule("rule_s", rule_scope::session, "s1")).ok());

  auto gone = book.remove("rule_a");
  ASSERT_TRUE(gone.ok());
  EXPECT_TRUE(*gone);
  EXPECT_EQ(book.match("s2", "python", args_a(), k_now), std::nullopt);
  EXPECT_EQ(book.match("s1", "python", args_a(), k_now), std::optional<std::string>("rule_s"));
  auto rows = st.list();
  ASSERT_TRUE(rows.ok());
  EXPECT_TRUE(rows->empty());

  gone = book.remove("rule_s");
  ASSERT_TRUE(gone.ok());
  EXPECT_TRUE(*gone);
  EXPECT_EQ(book.match("s1", "python", args_a(), k_now), std::nullopt);
  EXPECT_TRUE(book.list("", k_now).empty());

  // Unknown (or already removed) ids: false, no error.
  gone = book.remove("rule_s");
  ASSERT_TRUE(gone.ok());
  EXPECT_FALSE(*gone);
  gone = book.remove("rule_nope");
  ASSERT_TRUE(gone.ok());
  EXPECT_FALSE(*gone);
  gone = book.remove("");
  ASSERT_TRUE(gone.ok());
  EXPECT_FALSE(*gone);

  // A restart does not bring the removed always-rule back.
  rule_book again(&st);
  ASSERT_TRUE(again.load().ok());
  EXPECT_TRUE(again.list("", k_now).empty());
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

TEST(RuleBook, StoreFailureOnAddLeavesMemoryUnchanged) {
  auto db = memory_db();
  ASSERT_TRUE(db);
  store::rule_store st(*db);
  rule_book book(&st);
  ASSERT_TRUE(book.add(exact_rule("rule_a", rule_scope::always, "")).ok());
  ASSERT_TRUE(db->with_connection([](store::connection& c) { return c.exec("DROP TABLE permission_rules"); }).ok());

  permission_rule r = exact_rule("rule_b", rule_scope::always, "");
  r.tool = "terminal";
  r.arguments = dump_safe(json{{"command", "ls"}});
  auto added = book.add(r);
  ASSERT_FALSE(added.ok());
  EXPECT_EQ(added.error().code, errc::internal);
  EXPECT_EQ(ids_of(book.list("", k_now)), (std::vector<std::string>{"rule_a"}));
  EXPECT_EQ(book.match("s1", "terminal", json{{"command", "ls"}}, k_now), std::nullopt);

  // A session rule never touches the store, so it is still accepted.
  EXPECT_TRUE(book.add(exact_rule("rule_s", rule_scope::session, "s1")).ok());

  // Removing an always-rule fails the same way and keeps it.
  auto gone = book.remove("rule_a");
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().code, errc::internal);
  EXPECT_EQ(book.match("s2", "python", args_a(), k_now), std::optional<std::string>("rule_a"));
  // And load() reports the error.
  EXPECT_FALSE(book.load().ok());
}

TEST(RuleBook, StoredRowsRoundTrip) {
  permission_rule r = exact_rule("rule_x", rule_scope::always, "");
  r.arguments.reset();
  r.command_prefix = "git log";
  r.path_prefix = "/workspace/a";
  r.expires_unix_ms = k_now + 5;
  const store::stored_rule s = to_stored(r);
  EXPECT_EQ(s.scope, "always");
  EXPECT_EQ(s.command_prefix, std::optional<std::string>("git log"));
  EXPECT_EQ(from_stored(s), std::optional<permission_rule>(r));
  store::stored_rule bad = s;
  bad.scope = "forever";
  EXPECT_EQ(from_stored(bad), std::nullopt);
}

}  // namespace
}  // namespace warden::agent
