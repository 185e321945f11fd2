// The adapters between agent/ and store/ (store_adapters.h): the rule book over the SQLite
// rule table (these tests lived in agent/rule_book_test.cpp while agent/ linked store/), and
// the call record's row.
#include <gtest/gtest.h>

#include <memory>
#include <utility>

#include "agent/rule_book.h"
#include "agent/testing/rule_fixtures.h"
#include "api/control/store_adapters.h"
#include "store/database.h"
#include "store/permission_rules_store.h"

namespace warden::api::control {
namespace {

using agent::call_verdict;
using agent::decided_by;
using agent::permission_rule;
using agent::rule_book;
using agent::rule_scope;

using agent::testing::args_a;
using agent::testing::args_b;
using agent::testing::exact_rule;
using agent::testing::k_now;

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

TEST(StoredRules, AlwaysRulesMatchEverySessionAndAreStored) {
  auto db = memory_db();
  ASSERT_TRUE(db);
  store::rule_store st(*db);
  stored_rules kept(st);
  rule_book book(&kept);
  ASSERT_TRUE(book.add(exact_rule("rule_a", rule_scope::always, "")).ok());
  ASSERT_TRUE(book.add(exact_rule("rule_s", rule_scope::session, "s1")).ok());
  EXPECT_EQ(book.match("s1", "python", args_a(), k_now, agent::testing::low_risk()), std::optional<std::string>("rule_a"));  // oldest first
  EXPECT_EQ(book.match("s2", "python", args_a(), k_now, agent::testing::low_risk()), std::optional<std::string>("rule_a"));
  EXPECT_EQ(book.match("other-session", "python", args_a(), k_now, agent::testing::low_risk()), std::optional<std::string>("rule_a"));
  EXPECT_EQ(book.match("s2", "python", args_b(), k_now, agent::testing::low_risk()), std::nullopt);

  // Only the always-rule reached the table.
  auto rows = st.list();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].id, "rule_a");
  EXPECT_EQ((*rows)[0].scope, "always");
  EXPECT_EQ((*rows)[0].arguments, std::optional<std::string>(dump_safe(args_a())));

  // A second book over the same database (a restart) loads it, and only it.
  rule_book again(&kept);
  EXPECT_EQ(again.match("s9", "python", args_a(), k_now, agent::testing::low_risk()), std::nullopt);
  ASSERT_TRUE(again.load().ok());
  EXPECT_EQ(again.match("s9", "python", args_a(), k_now, agent::testing::low_risk()), std::optional<std::string>("rule_a"));
  auto loaded = again.list("", k_now);
  ASSERT_EQ(loaded.size(), 1u);
  EXPECT_EQ(loaded[0], exact_rule("rule_a", rule_scope::always, ""));
  // load() twice does not duplicate.
  ASSERT_TRUE(again.load().ok());
  EXPECT_EQ(again.list("", k_now).size(), 1u);
}

TEST(StoredRules, RemoveDeletesFromMemoryAndStore) {
  auto db = memory_db();
  ASSERT_TRUE(db);
  store::rule_store st(*db);
  stored_rules kept(st);
  rule_book book(&kept);
  ASSERT_TRUE(book.add(exact_rule("rule_a", rule_scope::always, "")).ok());
  ASSERT_TRUE(book.add(exact_rule("rule_s", rule_scope::session, "s1")).ok());

  auto gone = book.remove("rule_a");
  ASSERT_TRUE(gone.ok());
  EXPECT_TRUE(*gone);
  EXPECT_EQ(book.match("s2", "python", args_a(), k_now, agent::testing::low_risk()), std::nullopt);
  EXPECT_EQ(book.match("s1", "python", args_a(), k_now, agent::testing::low_risk()), std::optional<std::string>("rule_s"));
  auto rows = st.list();
  ASSERT_TRUE(rows.ok());
  EXPECT_TRUE(rows->empty());

  gone = book.remove("rule_s");
  ASSERT_TRUE(gone.ok());
  EXPECT_TRUE(*gone);
  EXPECT_EQ(book.match("s1", "python", args_a(), k_now, agent::testing::low_risk()), std::nullopt);
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
  rule_book again(&kept);
  ASSERT_TRUE(again.load().ok());
  EXPECT_TRUE(again.list("", k_now).empty());
}

TEST(StoredRules, StoreFailureOnAddLeavesMemoryUnchanged) {
  auto db = memory_db();
  ASSERT_TRUE(db);
  store::rule_store st(*db);
  stored_rules kept(st);
  rule_book book(&kept);
  ASSERT_TRUE(book.add(exact_rule("rule_a", rule_scope::always, "")).ok());
  ASSERT_TRUE(db->with_connection([](store::connection& c) { return c.exec("DROP TABLE permission_rules"); }).ok());

  permission_rule r = exact_rule("rule_b", rule_scope::always, "");
  r.tool = "terminal";
  r.arguments = dump_safe(json{{"command", "ls"}});
  auto added = book.add(r);
  ASSERT_FALSE(added.ok());
  EXPECT_EQ(added.error().code, errc::internal);
  EXPECT_EQ(ids_of(book.list("", k_now)), (std::vector<std::string>{"rule_a"}));
  EXPECT_EQ(book.match("s1", "terminal", json{{"command", "ls"}}, k_now, agent::testing::low_risk()), std::nullopt);

  // A session rule never touches the store, so it is still accepted.
  EXPECT_TRUE(book.add(exact_rule("rule_s", rule_scope::session, "s1")).ok());

  // Removing an always-rule fails the same way and keeps it.
  auto gone = book.remove("rule_a");
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().code, errc::internal);
  EXPECT_EQ(book.match("s2", "python", args_a(), k_now, agent::testing::low_risk()), std::optional<std::string>("rule_a"));
  // And load() reports the error.
  EXPECT_FALSE(book.load().ok());
}

TEST(StoredRules, StoredRowsRoundTrip) {
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

TEST(StoredRules, UnreadableRowsAreSkipped) {
  auto db = memory_db();
  ASSERT_TRUE(db);
  store::rule_store st(*db);
  store::stored_rule bad = to_stored(exact_rule("rule_bad", rule_scope::always, ""));
  bad.scope = "forever";
  ASSERT_TRUE(st.insert(bad).ok());
  ASSERT_TRUE(st.insert(to_stored(exact_rule("rule_ok", rule_scope::always, ""))).ok());
  stored_rules kept(st);
  const auto rules = kept.list();
  ASSERT_TRUE(rules.ok());
  EXPECT_EQ(ids_of(*rules), (std::vector<std::string>{"rule_ok"}));
}

// Every verdict and decider reaches the row under the name the audit log has always used.
TEST(CallRecordRow, MapsEveryFieldAndName) {
  const std::pair<call_verdict, const char*> verdicts[] = {
      {call_verdict::run, "run"},
      {call_verdict::ask, "ask"},
      {call_verdict::refuse, "refuse"},
      {call_verdict::not_enabled, "not_enabled"},
      {call_verdict::sandbox_unavailable, "sandbox_unavailable"},
  };
  for (const auto& [v, name] : verdicts) {
    agent::call_record one;
    one.decision = v;
    EXPECT_EQ(to_row(one).decision, name);
  }
  const std::pair<decided_by, const char*> deciders[] = {
      {decided_by::policy, "policy"},
      {decided_by::user, "user"},
      {decided_by::rule, "rule"},
      {decided_by::auto_classifier, "auto"},
      {decided_by::bypass, "bypass"},
      {decided_by::expired, "expired"},
      {decided_by::client_gone, "client_gone"},
      {decided_by::cancel, "cancel"},
  };
  for (const auto& [b, name] : deciders) {
    agent::call_record one;
    one.by = b;
    EXPECT_EQ(to_row(one).decided_by, name);
  }
  agent::call_record r;
  r.call_id = "call_1";
  r.session_id = "s1";
  r.tool = "terminal";
  r.arguments = R"({"command":"ls"})";
  r.surface = "openai.chat";
  r.mode = "auto";
  r.risk_level = "high";
  r.risk_reasons = {"runs rm (destructive)"};
  r.decision = call_verdict::ask;
  r.by = decided_by::rule;
  r.rule_id = "rule_1";
  r.allowed = true;
  r.approval_id = "ap1";
  r.reason = "why";
  r.started_unix_ms = 10;
  r.finished_unix_ms = 30;
  r.duration_ms = 20;
  r.approval_latency_ms = 5;
  r.exit_status = 3;
  r.is_error = true;
  r.output_bytes = 42;
  const store::call_record s = to_row(r);
  EXPECT_EQ(s.call_id, r.call_id);
  EXPECT_EQ(s.session_id, r.session_id);
  EXPECT_EQ(s.tool, r.tool);
  EXPECT_EQ(s.arguments, r.arguments);
  EXPECT_EQ(s.surface, r.surface);
  EXPECT_EQ(s.mode, r.mode);
  EXPECT_EQ(s.risk_level, r.risk_level);
  EXPECT_EQ(s.risk_reasons, r.risk_reasons);
  EXPECT_EQ(s.decision, "ask");
  EXPECT_EQ(s.decided_by, "rule");
  EXPECT_EQ(s.rule_id, r.rule_id);
  EXPECT_EQ(s.allowed, r.allowed);
  EXPECT_EQ(s.approval_id, r.approval_id);
  EXPECT_EQ(s.reason, r.reason);
  EXPECT_EQ(s.status, "pending");
  r.status = agent::run_status::ran;
  r.notes = {agent::k_note_client_gone};
  EXPECT_EQ(to_row(r).status, "ran");
  EXPECT_EQ(to_row(r).notes, std::vector<std::string>{"client_gone"});
  r.status = agent::run_status::not_run;
  EXPECT_EQ(to_row(r).status, "not_run");
  EXPECT_EQ(s.started_unix_ms, r.started_unix_ms);
  EXPECT_EQ(s.finished_unix_ms, r.finished_unix_ms);
  EXPECT_EQ(s.duration_ms, r.duration_ms);
  EXPECT_EQ(s.approval_latency_ms, r.approval_latency_ms);
  EXPECT_EQ(s.exit_status, r.exit_status);
  EXPECT_EQ(s.is_error, r.is_error);
  EXPECT_EQ(s.output_bytes, r.output_bytes);
}

}  // namespace
}  // namespace warden::api::control
