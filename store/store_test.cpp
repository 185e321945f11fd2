#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "common/testing/temp_dir.h"
#include "store/call_records.h"
#include "store/testing/database.h"
#include "store/database.h"
#include "store/permission_rules_store.h"

namespace warden::store {
namespace {

using namespace std::string_literals;

using warden::testing::temp_dir;  // a fresh folder under /tmp, removed afterwards
using testing::must_open;
using testing::query_text;  // SQL NULL reads ""

call_record full_record() {
  call_record r;
  r.call_id = "call_abc";
  r.session_id = "sess-1";
  r.tool = "python";
  r.arguments = R"j({"code":"print(1)"})j";
  r.surface = "openai.chat";
  r.mode = "ask";
  r.risk_level = "high";
  r.risk_reasons = {"deletes files", "quote \" and \\ inside"};
  r.decision = "ask";
  r.decided_by = "user";
  r.rule_id = "rule_x";
  r.approval_latency_ms = 4200;
  r.allowed = true;
  r.approval_id = "appr-9";
  r.reason = "declined \"politely\"";
  r.started_unix_ms = 1700000000123;
  r.finished_unix_ms = 1700000001456;
  r.duration_ms = 1333;
  r.exit_status = 3;
  r.is_error = true;
  r.output_bytes = 0xFFFF'FFFF'FFFF'FFF0ULL;  // above INT64_MAX: survives as a bit pattern
  return r;
}

void expect_same(const call_record& a, const call_record& b) {
  EXPECT_EQ(a.call_id, b.call_id);
  EXPECT_EQ(a.session_id, b.session_id);
  EXPECT_EQ(a.tool, b.tool);
  EXPECT_EQ(a.arguments, b.arguments);
  EXPECT_EQ(a.surface, b.surface);
  EXPECT_EQ(a.mode, b.mode);
  EXPECT_EQ(a.risk_level, b.risk_level);
  EXPECT_EQ(a.risk_reasons, b.risk_reasons);
  EXPECT_EQ(a.decision, b.decision);
  EXPECT_EQ(a.decided_by, b.decided_by);
  EXPECT_EQ(a.rule_id, b.rule_id);
  EXPECT_EQ(a.approval_latency_ms, b.approval_latency_ms);
  EXPECT_EQ(a.allowed, b.allowed);
  EXPECT_EQ(a.approval_id, b.approval_id);
  EXPECT_EQ(a.reason, b.reason);
  EXPECT_EQ(a.started_unix_ms, b.started_unix_ms);
  EXPECT_EQ(a.finished_unix_ms, b.finished_unix_ms);
  EXPECT_EQ(a.duration_ms, b.duration_ms);
  EXPECT_EQ(a.exit_status, b.exit_status);
  EXPECT_EQ(a.is_error, b.is_error);
  EXPECT_EQ(a.output_bytes, b.output_bytes);
}

TEST(Database, OpensInWalModeWithPrivateFileAndFolder) {
  temp_dir t;
  const std::string path = t.path + "/state/db/warden.db";
  auto db = must_open(path);
  ASSERT_TRUE(db);
  EXPECT_EQ(query_text(*db, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(query_text(*db, "PRAGMA foreign_keys"), "1");
  EXPECT_EQ(query_text(*db, "PRAGMA synchronous"), "1");  // NORMAL
  EXPECT_EQ(query_text(*db, "PRAGMA busy_timeout"), "5000");
  EXPECT_EQ(query_text(*db, "PRAGMA journal_size_limit"), "4194304");
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat((t.path + "/state/db").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  auto v = db->schema_version();
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, k_migrations().back().version);
}

TEST(Database, MemoryDatabaseHasTheSchema) {
  auto db = database::open_memory();
  ASSERT_TRUE(db.ok()) << db.error().message;
  call_log log(**db);
  auto n = log.count();
  ASSERT_TRUE(n.ok()) << n.error().message;
  EXPECT_EQ(*n, 0);
}

TEST(Database, RefusesNewerSchemaNamingBothVersions) {
  temp_dir t;
  const std::string path = t.path + "/warden.db";
  {
    auto db = must_open(path);
    ASSERT_TRUE(db);
    ASSERT_TRUE(db->with_connection([](connection& c) { return c.exec("PRAGMA user_version = 99"); }).ok());
  }
  auto db = database::open(path);
  ASSERT_FALSE(db.ok());
  const std::string msg = db.error().message;
  EXPECT_EQ(db.error().code, errc::internal);
  EXPECT_NE(msg.find("99"), std::string::npos) << msg;
  EXPECT_NE(msg.find("version " + std::to_string(k_migrations().back().version)), std::string::npos) << msg;
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
}

TEST(Database, FailingMigrationKeepsTheOldVersion) {
  temp_dir t;
  const std::string path = t.path + "/warden.db";
  const migration good[] = {{1, "CREATE TABLE a (x INTEGER)"}};
  const migration bad[] = {{1, "CREATE TABLE a (x INTEGER)"},
                           {2, "CREATE TABLE b (y INTEGER); INSERT INTO a VALUES (1); THIS IS NOT SQL"}};
  ASSERT_TRUE(database::open(path, good).ok());
  auto failed = database::open(path, bad);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.error().message.find("schema version 2"), std::string::npos) << failed.error().message;
  EXPECT_NE(failed.error().message.find("syntax error"), std::string::npos) << failed.error().message;
  auto db = database::open(path, good);
  ASSERT_TRUE(db.ok()) << db.error().message;
  EXPECT_EQ(*(*db)->schema_version(), 1);
  EXPECT_EQ(query_text(**db, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'b'"), "0");
  EXPECT_EQ(query_text(**db, "SELECT COUNT(*) FROM a"), "0");
}

TEST(Database, ErrorsNameTheFileAndSqliteMessage) {
  temp_dir t;
  const std::string path = t.path + "/warden.db";
  auto db = must_open(path);
  ASSERT_TRUE(db);
  auto r = db->with_connection([](connection& c) { return c.prepare("SELECT * FROM no_such_table"); });
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find(path), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("no such table"), std::string::npos) << r.error().message;
}

TEST(CallLog, RoundTripsEveryField) {
  auto db = database::open_memory();
  ASSERT_TRUE(db.ok());
  call_log log(**db);
  call_record a = full_record();
  call_record b = full_record();
  b.call_id = "call_def";
  b.started_unix_ms += 1;
  b.exit_status.reset();
  b.decision = "sandbox_unavailable";
  b.decided_by = "bypass";
  b.allowed = false;
  b.is_error = false;
  ASSERT_TRUE(log.insert(a).ok());
  ASSERT_TRUE(log.insert(b).ok());
  auto rows = log.recent(10);
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  ASSERT_EQ(rows->size(), 2u);
  expect_same((*rows)[0], b);
  expect_same((*rows)[1], a);
  EXPECT_FALSE((*rows)[0].exit_status.has_value());
  EXPECT_EQ((*rows)[1].exit_status, 3);
}

TEST(CallLog, RecentOrdersNewestFirstAndFiltersBySession) {
  auto db = database::open_memory();
  ASSERT_TRUE(db.ok());
  call_log log(**db);
  const std::int64_t starts[] = {300, 100, 200, 200, 50};
  for (int i = 0; i < 5; ++i) {
    call_record r;
    r.call_id = "c" + std::to_string(i);
    r.session_id = i % 2 == 0 ? "even" : "odd";
    r.started_unix_ms = starts[i];
    ASSERT_TRUE(log.insert(r).ok());
  }
  auto ids = [](const std::vector<call_record>& rows) {
    std::vector<std::string> out;
    for (const auto& r : rows) out.push_back(r.call_id);
    return out;
  };
  EXPECT_EQ(ids(*log.recent(10)), (std::vector<std::string>{"c0", "c3", "c2", "c1", "c4"}));  // ties: later insert first
  EXPECT_EQ(ids(*log.recent(2)), (std::vector<std::string>{"c0", "c3"}));
  EXPECT_EQ(ids(*log.recent(10, "even")), (std::vector<std::string>{"c0", "c2", "c4"}));
  EXPECT_EQ(ids(*log.recent(10, "odd")), (std::vector<std::string>{"c3", "c1"}));
  EXPECT_TRUE(log.recent(10, "none")->empty());
  EXPECT_TRUE(log.recent(0)->empty());
}

TEST(CallLog, ReopeningKeepsRowsAndVersion) {
  temp_dir t;
  const std::string path = t.path + "/warden.db";
  {
    auto db = must_open(path);
    ASSERT_TRUE(db);
    call_log log(*db);
    ASSERT_TRUE(log.insert(full_record()).ok());
  }
  auto db = must_open(path);
  ASSERT_TRUE(db);
  EXPECT_EQ(*db->schema_version(), k_migrations().back().version);
  call_log log(*db);
  EXPECT_EQ(*log.count(), 1);
  auto rows = log.recent(5);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  expect_same((*rows)[0], full_record());
}

std::string session_of(int thread) { return std::string("t").append(std::to_string(thread)); }

TEST(CallLog, ConcurrentInsertsFromEightThreads) {
  temp_dir t;
  auto db = must_open(t.path + "/warden.db");
  ASSERT_TRUE(db);
  call_log log(*db);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int th = 0; th < 8; ++th) {
    threads.emplace_back([&, th] {
      for (int i = 0; i < 200; ++i) {
        call_record r = full_record();
        r.session_id = session_of(th);
        r.call_id = r.session_id + "-" + std::to_string(i);
        if (!log.insert(r).ok()) failures.fetch_add(1);
        if (i % 50 == 0 && !log.recent(3, r.session_id).ok()) failures.fetch_add(1);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(*log.count(), 1600);
  EXPECT_EQ(log.recent(1000, session_of(5))->size(), 200u);
}

TEST(CallLog, StoresQuotesNulsAndOddBytesIntact) {
  auto db = database::open_memory();
  ASSERT_TRUE(db.ok());
  call_log log(**db);
  call_record r;
  r.call_id = "id'); DROP TABLE call_records; --"s;
  r.session_id = "s\0ession"s;
  r.tool = "\"tool\"";
  r.arguments = "{\"a\":\"x\0y\\\"z\"}\0"s;
  r.reason = "\xff\xfe not utf-8 \0 end"s;
  ASSERT_TRUE(log.insert(r).ok());
  EXPECT_EQ(*log.count(), 1);
  auto rows = log.recent(1, "s\0ession"s);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  expect_same((*rows)[0], r);
  EXPECT_EQ((*rows)[0].arguments.size(), r.arguments.size());
  EXPECT_TRUE(log.recent(1, "s"s)->empty());  // no truncation at the NUL
}

/// The schema as version 1 created it, with one row decided by "timeout".
void make_v1_database(const std::string& path) {
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  const std::string sql = std::string(k_migrations()[0].sql) +
                          "INSERT INTO call_records (call_id, session_id, tool, arguments, decision, decided_by, allowed,"
                          " approval_id, reason, started_unix_ms, finished_unix_ms, duration_ms, exit_status, is_error,"
                          " output_bytes) VALUES ('c1', 's1', 'terminal', '{}', 'ask', 'timeout', 0, 'a1',"
                          " 'nobody answered', 10, 20, 10, NULL, 0, 0);"
                          "INSERT INTO call_records (call_id, session_id, tool, arguments, decision, decided_by, allowed,"
                          " approval_id, reason, started_unix_ms, finished_unix_ms, duration_ms, exit_status, is_error,"
                          " output_bytes) VALUES ('c2', 's1', 'python', '{}', 'run', 'policy', 1, '', '', 30, 40, 10, 0,"
                          " 0, 7);"
                          "PRAGMA user_version = 1;";
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(raw);
}

TEST(Migration, Version1BecomesVersion2) {
  temp_dir t;
  const std::string path = t.path + "/warden.db";
  make_v1_database(path);
  auto db = must_open(path);
  ASSERT_TRUE(db);
  EXPECT_EQ(*db->schema_version(), k_migrations().back().version);  // 2, then the later steps
  call_log log(*db);
  auto rows = log.list({});
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  ASSERT_EQ(rows->size(), 2u);
  const auto& [id1, timed_out] = (*rows)[0];
  EXPECT_EQ(id1, 1);
  EXPECT_EQ(timed_out.call_id, "c1");
  EXPECT_EQ(timed_out.decided_by, "expired");
  EXPECT_EQ(timed_out.reason, "nobody answered");
  EXPECT_EQ(timed_out.surface, "");
  EXPECT_EQ(timed_out.mode, "");
  EXPECT_EQ(timed_out.risk_level, "");
  EXPECT_TRUE(timed_out.risk_reasons.empty());
  EXPECT_EQ(timed_out.rule_id, "");
  EXPECT_FALSE(timed_out.approval_latency_ms.has_value());
  EXPECT_EQ((*rows)[1].second.decided_by, "policy");
  EXPECT_EQ((*rows)[1].second.exit_status, 0);
  EXPECT_EQ(query_text(*db, "SELECT decided_by FROM call_records WHERE call_id = 'c1'"), "expired");
  EXPECT_EQ(query_text(*db, "SELECT COUNT(*) FROM permission_rules"), "0");
  // New rows go on after the old ones.
  auto id = log.insert(full_record());
  ASSERT_TRUE(id.ok()) << id.error().message;
  EXPECT_EQ(*id, 3);
}

TEST(CallLog, InsertThenUpdateEveryField) {
  auto db = database::open_memory();
  ASSERT_TRUE(db.ok());
  call_log log(**db);
  call_record started;
  started.call_id = "call_1";
  started.session_id = "s";
  started.tool = "terminal";
  started.arguments = R"({"command":"ls"})";
  started.decision = "ask";
  started.started_unix_ms = 5;
  started.status = "pending";  // completed below: a row moves forward only (call_records.h)
  auto id = log.insert(started);
  ASSERT_TRUE(id.ok()) << id.error().message;
  EXPECT_GT(*id, 0);
  auto other = log.insert(started);
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(*other, *id + 1);
  const call_record done = full_record();
  ASSERT_TRUE(log.update(*id, done).ok());
  auto rows = log.list({});
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].first, *id);
  expect_same((*rows)[0].second, done);
  expect_same((*rows)[1].second, started);  // the other row is untouched
  call_record cleared = done;                // optional fields go back to NULL
  cleared.exit_status.reset();
  cleared.approval_latency_ms.reset();
  cleared.risk_reasons.clear();
  ASSERT_TRUE(log.update(*id, cleared).ok());
  expect_same((*log.list({}))[0].second, cleared);
  auto missing = log.update(999, done);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, errc::not_found);
  EXPECT_EQ(*log.count(), 2);
}

TEST(CallLog, ListFiltersOrdersAndPages) {
  auto db = database::open_memory();
  ASSERT_TRUE(db.ok());
  call_log log(**db);
  const std::int64_t starts[] = {300, 100, 200, 200, 50, 400};
  for (int i = 0; i < 6; ++i) {
    call_record r;
    r.call_id = "c" + std::to_string(i);
    r.session_id = i % 2 == 0 ? "even" : "odd";
    r.started_unix_ms = starts[i];
    ASSERT_TRUE(log.insert(r).ok());
  }
  auto ids = [&](const audit_query& q) {
    std::vector<std::string> out;
    auto rows = log.list(q);
    EXPECT_TRUE(rows.ok());
    if (rows) {
      for (const auto& [id, r] : *rows) out.push_back(std::to_string(id) + ":" + r.call_id);
    }
    return out;
  };
  using v = std::vector<std::string>;
  EXPECT_EQ(ids({}), (v{"1:c0", "2:c1", "3:c2", "4:c3", "5:c4", "6:c5"}));  // insert order, not time order
  EXPECT_EQ(ids({"even", 0, 100, 0}), (v{"1:c0", "3:c2", "5:c4"}));
  EXPECT_EQ(ids({"", 200, 100, 0}), (v{"1:c0", "3:c2", "4:c3", "6:c5"}));
  EXPECT_EQ(ids({"odd", 200, 100, 0}), (v{"4:c3", "6:c5"}));
  EXPECT_EQ(ids({"", 0, 2, 0}), (v{"1:c0", "2:c1"}));
  EXPECT_EQ(ids({"", 0, 2, 2}), (v{"3:c2", "4:c3"}));
  EXPECT_EQ(ids({"", 0, 2, 4}), (v{"5:c4", "6:c5"}));
  EXPECT_TRUE(ids({"", 0, 2, 6}).empty());
  EXPECT_TRUE(ids({"", 0, 0, 0}).empty());
  EXPECT_TRUE(ids({"none", 0, 100, 0}).empty());
  EXPECT_TRUE(ids({"", 401, 100, 0}).empty());
}

TEST(CallLog, ListCapsTheLimit) {
  auto db = database::open_memory();
  ASSERT_TRUE(db.ok());
  call_log log(**db);
  call_record r;
  for (std::size_t i = 0; i < k_max_audit_page + 5; ++i) ASSERT_TRUE(log.insert(r).ok());
  auto rows = log.list({"", 0, 1'000'000, 0});
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->size(), k_max_audit_page);
}

TEST(CallLog, RedactsArgumentsAndReason) {
  auto db = database::open_memory();
  ASSERT_TRUE(db.ok());
  call_log log(**db);
  call_record r = full_record();
  r.arguments = R"({"command":"export OPENAI_API_KEY=abc123 && python x.py","env":{"DB_PASSWORD":"p w"}})";
  r.reason = "declined: the command sets TOKEN=xyz";
  auto id = log.insert(r);
  ASSERT_TRUE(id.ok());
  auto rows = log.list({});
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].second.arguments,
            R"({"command":"export OPENAI_API_KEY=[REDACTED] && python x.py","env":{"DB_PASSWORD":"[REDACTED]"}})");
  EXPECT_EQ((*rows)[0].second.reason, "declined: the command sets TOKEN=[REDACTED]");
  EXPECT_EQ(query_text(**db, "SELECT COUNT(*) FROM call_records WHERE arguments LIKE '%abc123%'"), "0");
  r.arguments = R"({"command":"curl -u x:y https://u:s3cret@h.io"})";
  ASSERT_TRUE(log.update(*id, r).ok());
  EXPECT_EQ((*log.list({}))[0].second.arguments, R"({"command":"curl -u x:[REDACTED] https://u:[REDACTED]@h.io"})");
}

TEST(CallLog, RedactsEveryRiskReason) {
  auto db = database::open_memory();
  ASSERT_TRUE(db.ok());
  call_log log(**db);
  call_record r = full_record();
  r.risk_reasons = {"escapes the workspace with .. (https://admin:Hunter2Secret@example.com/a/../b)",
                    "sets PASSWORD=Hunter2Secret", "deletes files"};
  auto id = log.insert(r);
  ASSERT_TRUE(id.ok());
  const std::vector<std::string> want = {"escapes the workspace with .. (https://admin:[REDACTED]@example.com/a/../b)",
                                         "sets PASSWORD=[REDACTED]", "deletes files"};
  EXPECT_EQ((*log.list({}))[0].second.risk_reasons, want);
  EXPECT_EQ(query_text(**db, "SELECT COUNT(*) FROM call_records WHERE risk_reasons LIKE '%Hunter2%'"), "0");
  r.risk_reasons = {"token=\"Hunter2Secret\""};
  ASSERT_TRUE(log.update(*id, r).ok());
  EXPECT_EQ((*log.list({}))[0].second.risk_reasons, std::vector<std::string>{"token=\"[REDACTED]\""});
  EXPECT_EQ(query_text(**db, "SELECT COUNT(*) FROM call_records WHERE risk_reasons LIKE '%Hunter2%'"), "0");
}

stored_rule make_rule(std::string id, std::int64_t created, std::int64_t expires) {
  stored_rule r;
  r.id = std::move(id);
  r.scope = "always";
  r.tool = "terminal";
  r.created_unix_ms = created;
  r.expires_unix_ms = expires;
  return r;
}

TEST(RuleStore, InsertListRemove) {
  temp_dir t;
  const std::string path = t.path + "/warden.db";
  stored_rule full = make_rule("rule_b", 20, 0);
  full.scope = "session";
  full.session_id = "s1";
  full.command_prefix = "git status";
  full.path_prefix = "/work/'quoted'";
  full.arguments = R"({"command":"git status"})";
  {
    auto db = must_open(path);
    ASSERT_TRUE(db);
    rule_store rules(*db);
    ASSERT_TRUE(rules.insert(full).ok());
    ASSERT_TRUE(rules.insert(make_rule("rule_a", 10, 0)).ok());
    auto dup = rules.insert(make_rule("rule_a", 30, 0));
    ASSERT_FALSE(dup.ok());
    EXPECT_EQ(dup.error().code, errc::internal);
  }
  auto db = must_open(path);  // they survive a reopen
  ASSERT_TRUE(db);
  rule_store rules(*db);
  auto all = rules.list();
  ASSERT_TRUE(all.ok()) << all.error().message;
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].id, "rule_a");  // oldest first
  EXPECT_FALSE((*all)[0].command_prefix.has_value());
  EXPECT_FALSE((*all)[0].path_prefix.has_value());
  EXPECT_FALSE((*all)[0].arguments.has_value());
  const stored_rule& b = (*all)[1];
  EXPECT_EQ(b.id, full.id);
  EXPECT_EQ(b.scope, "session");
  EXPECT_EQ(b.session_id, "s1");
  EXPECT_EQ(b.tool, "terminal");
  EXPECT_EQ(b.command_prefix, full.command_prefix);
  EXPECT_EQ(b.path_prefix, full.path_prefix);
  EXPECT_EQ(b.arguments, full.arguments);
  EXPECT_EQ(b.created_unix_ms, 20);
  EXPECT_EQ(b.expires_unix_ms, 0);
  auto gone = rules.remove("rule_a");
  ASSERT_TRUE(gone.ok());
  EXPECT_TRUE(*gone);
  gone = rules.remove("rule_a");
  ASSERT_TRUE(gone.ok());
  EXPECT_FALSE(*gone);
  EXPECT_EQ(rules.list()->size(), 1u);
}

TEST(RuleStore, RemoveExpired) {
  auto db = database::open_memory();
  ASSERT_TRUE(db.ok());
  rule_store rules(**db);
  ASSERT_TRUE(rules.insert(make_rule("never", 1, 0)).ok());
  ASSERT_TRUE(rules.insert(make_rule("at_100", 2, 100)).ok());
  ASSERT_TRUE(rules.insert(make_rule("at_200", 3, 200)).ok());
  auto n = rules.remove_expired(99);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 0u);
  n = rules.remove_expired(100);  // expiring at 100 means gone at 100
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 1u);
  n = rules.remove_expired(1'000'000);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 1u);
  auto left = rules.list();
  ASSERT_TRUE(left.ok());
  ASSERT_EQ(left->size(), 1u);
  EXPECT_EQ((*left)[0].id, "never");
}

}  // namespace
}  // namespace warden::store
