#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "store/call_records.h"
#include "store/database.h"

namespace warden::store {
namespace {

using namespace std::string_literals;

/// A fresh folder under /tmp, removed afterwards.
struct temp_dir {
  std::string path;
  temp_dir() {
    char tmpl[] = "/tmp/warden-store-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~temp_dir() { std::filesystem::remove_all(path); }
};

std::unique_ptr<database> must_open(const std::string& path) {
  auto db = database::open(path);
  if (!db) ADD_FAILURE() << db.error().message;
  return db ? std::move(*db) : nullptr;
}

/// One text value of a single-row query.
std::string query_text(database& db, const std::string& sql) {
  return db.with_connection([&](connection& c) -> std::string {
    auto st = c.prepare(sql);
    if (!st || sqlite3_step(st->get()) != SQLITE_ROW) return "<error>";
    const auto* p = sqlite3_column_text(st->get(), 0);
    return p != nullptr ? reinterpret_cast<const char*>(p) : "";
  });
}

call_record full_record() {
  call_record r;
  r.call_id = "call_abc";
  r.session_id = "sess-1";
  r.tool = "python";
  r.arguments = R"j({"code":"print(1)"})j";
  r.decision = call_decision::ask;
  r.by = decided_by::user;
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
  EXPECT_EQ(a.decision, b.decision);
  EXPECT_EQ(a.by, b.by);
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
  b.decision = call_decision::sandbox_unavailable;
  b.by = decided_by::bypass;
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

TEST(CallLog, EnumNames) {
  EXPECT_STREQ(to_string(call_decision::not_enabled), "not_enabled");
  EXPECT_STREQ(to_string(call_decision::sandbox_unavailable), "sandbox_unavailable");
  EXPECT_STREQ(to_string(decided_by::timeout), "timeout");
  EXPECT_STREQ(to_string(decided_by::bypass), "bypass");
}

}  // namespace
}  // namespace warden::store
