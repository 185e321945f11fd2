#include "store/responses_store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <span>
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
using events = std::vector<std::pair<std::int64_t, std::string>>;

using warden::testing::temp_dir;  // a fresh folder under /tmp, removed afterwards
using testing::must_open;
using testing::must_open_memory;

/// One text value of a single-row query ("<null>" for SQL NULL).
std::string query_text(database& db, const std::string& sql) { return testing::query_text(db, sql, "<null>"); }

std::int64_t now_unix_s() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

/// A row with every field set, including bytes that break naive SQL.
stored_response full_response(std::string id = "resp_full") {
  stored_response r;
  r.id = std::move(id);
  r.created_at = 1'700'000'000;
  r.updated_at = 1'700'000'042;
  r.status = "requires_action'); DROP TABLE responses; --";
  r.previous_id = "resp_prev";
  r.background = true;
  r.response_json = R"({"id":"resp_full","object":"response","output":[{"text":"quote \" and \\"}]})";
  r.input_items_json = "[{\"type\":\"message\",\"content\":\"a\0b\"}]"s;
  r.conversation_json = R"([{"role":"user","content":"hi"}])";
  r.pending_json = "[{\"call_id\":\"call_1\",\"odd\":\"\xff\xfe\"}]"s;
  r.request_json = R"({"model":"m","tools":[]})";
  r.owner = "alice";
  r.session = "s'1";
  return r;
}

stored_response minimal_response(std::string id, std::string status, std::int64_t created_at = 1) {
  stored_response r;
  r.id = std::move(id);
  r.status = std::move(status);
  r.created_at = created_at;
  r.updated_at = created_at;
  r.response_json = "{}";
  return r;
}

void expect_same(const stored_response& a, const stored_response& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.created_at, b.created_at);
  EXPECT_EQ(a.updated_at, b.updated_at);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.previous_id, b.previous_id);
  EXPECT_EQ(a.background, b.background);
  EXPECT_EQ(a.response_json, b.response_json);
  EXPECT_EQ(a.input_items_json, b.input_items_json);
  EXPECT_EQ(a.conversation_json, b.conversation_json);
  EXPECT_EQ(a.pending_json, b.pending_json);
  EXPECT_EQ(a.request_json, b.request_json);
  EXPECT_EQ(a.owner, b.owner);
  EXPECT_EQ(a.session, b.session);
}

/// The stored response `id`, or a failed test.
stored_response must_get(response_store& s, std::string_view id) {
  auto r = s.get(id);
  if (!r) ADD_FAILURE() << r.error().message;
  if (r && !r->has_value()) ADD_FAILURE() << "no response " << id;
  return r && r->has_value() ? **r : stored_response{};
}

events must_events(response_store& s, std::string_view id, std::int64_t after, std::size_t limit) {
  auto r = s.events_after(id, after, limit);
  if (!r) ADD_FAILURE() << r.error().message;
  return r ? *r : events{};
}

TEST(ResponseStore, RoundTripsEveryField) {
  auto db = must_open_memory();
  ASSERT_TRUE(db);
  response_store store(*db);
  const stored_response full = full_response();
  ASSERT_TRUE(store.put(full).ok());
  const stored_response got = must_get(store, full.id);
  expect_same(got, full);
  EXPECT_EQ(got.input_items_json.size(), full.input_items_json.size());  // the NUL survives
  auto missing = store.get("resp_none");
  ASSERT_TRUE(missing.ok()) << missing.error().message;
  EXPECT_FALSE(missing->has_value());
}

TEST(ResponseStore, TakePendingReturnsItOnceAndClearsIt) {
  auto db = must_open_memory();
  ASSERT_TRUE(db);
  response_store store(*db);
  stored_response r = minimal_response("resp_parked", "completed");
  r.pending_json = R"({"calls":[]})";
  ASSERT_TRUE(store.put(r).ok());
  auto first = store.take_pending("resp_parked");
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(*first, r.pending_json);
  auto second = store.take_pending("resp_parked");
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*second, "");
  EXPECT_EQ(must_get(store, "resp_parked").pending_json, "");
  auto unknown = store.take_pending("resp_none");
  ASSERT_TRUE(unknown.ok());
  EXPECT_EQ(*unknown, "");
}

TEST(ResponseStore, FindPendingFindsTheResponseByItsApprovalRequestIdOnly) {
  auto db = must_open_memory();
  ASSERT_TRUE(db);
  response_store store(*db);
  stored_response a = minimal_response("resp_a", "completed");
  a.owner = "alice";
  a.pending_json = R"({"requests":{"mcpr_abc":"call_1","mcpr_abcd":"call_2"},"calls":[{"id":"call_1",)"
                   R"("card":{"command":"cat \"mcpr_zzz\": secret"}}],"loop":{"session_id":"mcpr_sess"}})";
  stored_response b = minimal_response("resp_b", "completed");
  b.owner = "bob";
  b.pending_json = R"({"requests":{"mcpr_xyz":"call_9"}})";
  stored_response done = minimal_response("resp_done", "completed");  // answered: no pending calls
  for (const auto* r : {&a, &b, &done}) ASSERT_TRUE(store.put(*r).ok());
  const std::optional<std::string_view> any;
  EXPECT_EQ(*store.find_pending("mcpr_abc", any), std::optional<std::string>("resp_a"));
  EXPECT_EQ(*store.find_pending("mcpr_abc", "alice"), std::optional<std::string>("resp_a"));
  EXPECT_EQ(*store.find_pending("mcpr_xyz", "bob"), std::optional<std::string>("resp_b"));
  // another owner's row is never found (as unknown), and only request ids match, as keys
  EXPECT_EQ(*store.find_pending("mcpr_abc", "bob"), std::nullopt);
  EXPECT_EQ(*store.find_pending("mcpr_ab", any), std::nullopt);    // never a part of another id
  EXPECT_EQ(*store.find_pending("mcpr_zzz", any), std::nullopt);   // inside a string value
  EXPECT_EQ(*store.find_pending("mcpr_sess", any), std::nullopt);  // a value, not a key
  EXPECT_EQ(*store.find_pending("call_1", any), std::nullopt);     // not a request id
  EXPECT_EQ(*store.find_pending("mcpr_abc\",\"", any), std::nullopt);
  EXPECT_EQ(*store.find_pending("", any), std::nullopt);
  ASSERT_TRUE(store.take_pending("resp_b").ok());
  EXPECT_EQ(*store.find_pending("mcpr_xyz", any), std::nullopt);  // taken: nothing waits
}

TEST(ResponseStore, AppendEventsIsAllOrNothing) {
  auto db = must_open_memory();
  ASSERT_TRUE(db);
  response_store store(*db);
  ASSERT_TRUE(store.put(minimal_response("resp_ev", "completed")).ok());
  ASSERT_TRUE(store.append_events("resp_ev", {{0, "{\"a\":0}"}, {1, "{\"a\":1}"}}).ok());
  EXPECT_EQ(must_events(store, "resp_ev", -1, 10).size(), 2u);
  auto dup = store.append_events("resp_ev", {{2, "{}"}, {1, "{}"}});  // 1 exists: nothing of it is kept
  EXPECT_FALSE(dup.ok());
  EXPECT_EQ(must_events(store, "resp_ev", -1, 10).size(), 2u);
}

TEST(ResponseStore, EmptyOptionalFieldsAreNull) {
  auto db = must_open_memory();
  ASSERT_TRUE(db);
  response_store store(*db);
  const stored_response r = minimal_response("resp_min", "completed");
  ASSERT_TRUE(store.put(r).ok());
  const stored_response got = must_get(store, "resp_min");
  expect_same(got, r);
  EXPECT_EQ(got.input_items_json, "[]");
  EXPECT_EQ(got.conversation_json, "[]");
  EXPECT_FALSE(got.background);
  EXPECT_EQ(query_text(*db, "SELECT COUNT(*) FROM responses WHERE previous_id IS NULL AND pending_json IS NULL"
                            " AND request_json IS NULL AND background = 0"),
            "1");
}

TEST(ResponseStore, PutReplacesTheRowAndKeepsItsEvents) {
  auto db = must_open_memory();
  ASSERT_TRUE(db);
  response_store store(*db);
  ASSERT_TRUE(store.put(full_response("resp_1")).ok());
  ASSERT_TRUE(store.append_event("resp_1", 1, R"({"type":"response.created"})").ok());
  ASSERT_TRUE(store.append_event("resp_1", 2, R"({"type":"response.in_progress"})").ok());
  stored_response replaced = minimal_response("resp_1", "completed", 5);
  replaced.updated_at = 9;
  replaced.input_items_json = R"([{"type":"message"}])";
  ASSERT_TRUE(store.put(replaced).ok());
  expect_same(must_get(store, "resp_1"), replaced);  // cleared optional fields are cleared
  EXPECT_EQ(query_text(*db, "SELECT COUNT(*) FROM responses"), "1");
  EXPECT_EQ(must_events(store, "resp_1", 0, 10),
            (events{{1, R"({"type":"response.created"})"}, {2, R"({"type":"response.in_progress"})"}}));
}

TEST(ResponseStore, RemoveDeletesTheRowAndItsEvents) {
  auto db = must_open_memory();
  ASSERT_TRUE(db);
  response_store store(*db);
  ASSERT_TRUE(store.put(full_response("resp_a")).ok());
  ASSERT_TRUE(store.put(full_response("resp_b")).ok());
  for (std::int64_t i = 1; i <= 3; ++i) {
    ASSERT_TRUE(store.append_event("resp_a", i, "{}").ok());
    ASSERT_TRUE(store.append_event("resp_b", i, "{}").ok());
  }
  auto gone = store.remove("resp_a");
  ASSERT_TRUE(gone.ok()) << gone.error().message;
  EXPECT_TRUE(*gone);
  auto a = store.get("resp_a");
  ASSERT_TRUE(a.ok());
  EXPECT_FALSE(a->has_value());
  EXPECT_EQ(query_text(*db, "SELECT COUNT(*) FROM response_events WHERE response_id = 'resp_a'"), "0");
  EXPECT_EQ(query_text(*db, "SELECT COUNT(*) FROM response_events WHERE response_id = 'resp_b'"), "3");
  EXPECT_TRUE(must_events(store, "resp_a", 0, 10).empty());
  EXPECT_EQ(must_events(store, "resp_b", 0, 10).size(), 3u);
  gone = store.remove("resp_a");
  ASSERT_TRUE(gone.ok());
  EXPECT_FALSE(*gone);
  gone = store.remove("resp_unknown");
  ASSERT_TRUE(gone.ok());
  EXPECT_FALSE(*gone);
}

TEST(ResponseStore, EventsAfterOrdersFiltersAndLimits) {
  auto db = must_open_memory();
  ASSERT_TRUE(db);
  response_store store(*db);
  ASSERT_TRUE(store.put(minimal_response("resp_x", "in_progress")).ok());
  ASSERT_TRUE(store.put(minimal_response("resp_y", "in_progress")).ok());
  for (std::int64_t seq : {3, 0, 4, 1, 2}) {  // appended out of order
    ASSERT_TRUE(store.append_event("resp_x", seq, "x" + std::to_string(seq)).ok());
  }
  ASSERT_TRUE(store.append_event("resp_y", 7, "y7").ok());
  EXPECT_EQ(must_events(store, "resp_x", -1, 100), (events{{0, "x0"}, {1, "x1"}, {2, "x2"}, {3, "x3"}, {4, "x4"}}));
  EXPECT_EQ(must_events(store, "resp_x", 0, 100), (events{{1, "x1"}, {2, "x2"}, {3, "x3"}, {4, "x4"}}));
  EXPECT_EQ(must_events(store, "resp_x", 2, 100), (events{{3, "x3"}, {4, "x4"}}));
  EXPECT_EQ(must_events(store, "resp_x", 0, 2), (events{{1, "x1"}, {2, "x2"}}));
  EXPECT_EQ(must_events(store, "resp_x", 2, 1), (events{{3, "x3"}}));
  EXPECT_TRUE(must_events(store, "resp_x", 4, 100).empty());
  EXPECT_TRUE(must_events(store, "resp_x", 0, 0).empty());
  EXPECT_EQ(must_events(store, "resp_x", -1, static_cast<std::size_t>(-1)).size(), 5u);  // no overflow
  EXPECT_EQ(must_events(store, "resp_y", 0, 100), (events{{7, "y7"}}));
  EXPECT_TRUE(must_events(store, "resp_none", -1, 100).empty());
}

TEST(ResponseStore, EventTextsAreKeptByteForByte) {
  auto db = must_open_memory();
  ASSERT_TRUE(db);
  response_store store(*db);
  ASSERT_TRUE(store.put(minimal_response("resp_e", "in_progress")).ok());
  const std::string odd = "{\"delta\":\"a'b\\\"c\0d\xff\"}"s;
  ASSERT_TRUE(store.append_event("resp_e", 1, odd).ok());
  ASSERT_TRUE(store.append_event("resp_e", 2, std::string_view()).ok());  // empty, not NULL
  EXPECT_EQ(must_events(store, "resp_e", 0, 10), (events{{1, odd}, {2, ""}}));
}

TEST(ResponseStore, DuplicateOrOrphanEventIsAnError) {
  auto db = must_open_memory();
  ASSERT_TRUE(db);
  response_store store(*db);
  ASSERT_TRUE(store.put(minimal_response("resp_d", "in_progress")).ok());
  ASSERT_TRUE(store.append_event("resp_d", 1, "first").ok());
  auto dup = store.append_event("resp_d", 1, "second");
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.error().code, errc::internal);
  EXPECT_NE(dup.error().message.find("UNIQUE"), std::string::npos) << dup.error().message;
  EXPECT_NE(dup.error().message.find(":memory:"), std::string::npos) << dup.error().message;
  EXPECT_EQ(must_events(store, "resp_d", 0, 10), (events{{1, "first"}}));  // the first one stays
  auto orphan = store.append_event("resp_missing", 1, "{}");
  ASSERT_FALSE(orphan.ok());
  EXPECT_EQ(orphan.error().code, errc::internal);
  EXPECT_NE(orphan.error().message.find("FOREIGN KEY"), std::string::npos) << orphan.error().message;
  ASSERT_TRUE(store.append_event("resp_d", 2, "next").ok());  // the store still works afterwards
}

TEST(ResponseStore, PurgeEventsBeforeACutOff) {
  auto db = must_open_memory();
  ASSERT_TRUE(db);
  response_store store(*db);
  ASSERT_TRUE(store.put(minimal_response("resp_p", "completed")).ok());
  ASSERT_TRUE(store.put(minimal_response("resp_q", "completed")).ok());
  const std::int64_t before = now_unix_s();
  for (std::int64_t i = 1; i <= 4; ++i) ASSERT_TRUE(store.append_event("resp_p", i, "{}").ok());
  ASSERT_TRUE(store.append_event("resp_q", 1, "{}").ok());
  const std::int64_t after = now_unix_s();
  auto stamped = query_text(*db, "SELECT MIN(created_at) || ' ' || MAX(created_at) FROM response_events");
  EXPECT_GE(std::stoll(stamped.substr(0, stamped.find(' '))), before) << stamped;
  EXPECT_LE(std::stoll(stamped.substr(stamped.find(' ') + 1)), after) << stamped;
  // Back-date two events of resp_p and the one of resp_q.
  ASSERT_TRUE(db->with_connection([](connection& c) {
                  return c.exec("UPDATE response_events SET created_at = 100 WHERE response_id = 'resp_p' AND"
                                " sequence_number <= 2; UPDATE response_events SET created_at = 200"
                                " WHERE response_id = 'resp_q'");
                }).ok());
  auto n = store.purge_events_before(100);  // strictly older only
  ASSERT_TRUE(n.ok()) << n.error().message;
  EXPECT_EQ(*n, 0);
  n = store.purge_events_before(101);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 2);
  EXPECT_EQ(must_events(store, "resp_p", 0, 10), (events{{3, "{}"}, {4, "{}"}}));
  n = store.purge_events_before(before);  // resp_q's (200); the fresh ones are not older than `before`
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 1);
  n = store.purge_events_before(after + 1);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 2);
  EXPECT_EQ(query_text(*db, "SELECT COUNT(*) FROM response_events"), "0");
  EXPECT_EQ(query_text(*db, "SELECT COUNT(*) FROM responses"), "2");  // the rows stay
}

TEST(ResponseStore, UnfinishedIdsOldestFirst) {
  auto db = must_open_memory();
  ASSERT_TRUE(db);
  response_store store(*db);
  auto ids = store.unfinished_ids();
  ASSERT_TRUE(ids.ok()) << ids.error().message;
  EXPECT_TRUE(ids->empty());
  const char* statuses[] = {"queued", "in_progress", "completed", "incomplete", "failed", "cancelled", "in_progress"};
  const std::int64_t created[] = {30, 10, 5, 6, 7, 8, 20};
  for (int i = 0; i < 7; ++i) {
    ASSERT_TRUE(store.put(minimal_response("resp_" + std::to_string(i), statuses[i], created[i])).ok());
  }
  ids = store.unfinished_ids();
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(*ids, (std::vector<std::string>{"resp_1", "resp_6", "resp_0"}));
  ASSERT_TRUE(store.put(minimal_response("resp_1", "cancelled", 10)).ok());  // a restart marks one
  EXPECT_EQ(*store.unfinished_ids(), (std::vector<std::string>{"resp_6", "resp_0"}));
}

TEST(ResponseStore, SurvivesReopeningTheFile) {
  temp_dir t;
  const std::string path = t.path + "/warden.db";
  {
    auto db = must_open(path);
    ASSERT_TRUE(db);
    response_store store(*db);
    ASSERT_TRUE(store.put(full_response("resp_keep")).ok());
    ASSERT_TRUE(store.put(minimal_response("resp_run", "in_progress")).ok());
    ASSERT_TRUE(store.append_event("resp_keep", 1, "e1").ok());
    ASSERT_TRUE(store.append_event("resp_keep", 2, "e2").ok());
  }
  auto db = must_open(path);
  ASSERT_TRUE(db);
  EXPECT_EQ(*db->schema_version(), k_migrations().back().version);
  EXPECT_EQ(query_text(*db, "PRAGMA foreign_keys"), "1");
  response_store store(*db);
  expect_same(must_get(store, "resp_keep"), full_response("resp_keep"));
  EXPECT_EQ(must_events(store, "resp_keep", 0, 10), (events{{1, "e1"}, {2, "e2"}}));
  EXPECT_EQ(*store.unfinished_ids(), std::vector<std::string>{"resp_run"});
  auto gone = store.remove("resp_keep");  // the cascade works on a reopened file too
  ASSERT_TRUE(gone.ok());
  EXPECT_TRUE(*gone);
  EXPECT_EQ(query_text(*db, "SELECT COUNT(*) FROM response_events"), "0");
}

TEST(ResponseStore, ConcurrentAppendsFromFourThreads) {
  temp_dir t;
  auto db = must_open(t.path + "/warden.db");
  ASSERT_TRUE(db);
  response_store store(*db);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int th = 0; th < 4; ++th) {
    threads.emplace_back([&, th] {
      const std::string id = "resp_t" + std::to_string(th);
      if (!store.put(minimal_response(id, "in_progress")).ok()) failures.fetch_add(1);
      for (std::int64_t i = 0; i < 100; ++i) {
        if (!store.append_event(id, i, "{}").ok()) failures.fetch_add(1);
        if (i % 25 == 0 && !store.events_after(id, -1, 5).ok()) failures.fetch_add(1);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(query_text(*db, "SELECT COUNT(*) FROM response_events"), "400");
  EXPECT_EQ(must_events(store, "resp_t2", 97, 10).size(), 2u);
}

/// bytes_used(owner, session) or a failed test.
response_store::usage must_usage(response_store& s, std::string_view owner, std::string_view session) {
  auto u = s.bytes_used(owner, session);
  if (!u) ADD_FAILURE() << u.error().message;
  return u ? *u : response_store::usage{-1, -1};
}

TEST(ResponseStoreUsage, CountsTextsAndEventsInAllAndPerOwnerSession) {
  auto db = must_open_memory();
  ASSERT_TRUE(db);
  response_store store(*db);
  EXPECT_EQ(must_usage(store, "", "").total, 0);
  stored_response a = minimal_response("resp_a", "completed");
  a.owner = "alice";
  a.session = "s1";
  a.conversation_json = std::string(1000, 'x');  // 1000 + "{}" + "[]"
  ASSERT_TRUE(store.put(a).ok());
  stored_response b = minimal_response("resp_b", "completed");
  b.owner = "bob";
  b.session = "s1";
  b.response_json = "\xE2\x82\xAC";  // bytes, not characters
  b.pending_json = "12345";
  ASSERT_TRUE(store.put(b).ok());
  auto u = must_usage(store, "alice", "s1");
  EXPECT_EQ(u.session, 1004);
  EXPECT_EQ(u.total, 1004 + 3 + 2 + 2 + 5);
  EXPECT_EQ(must_usage(store, "bob", "s1").session, 12);
  EXPECT_EQ(must_usage(store, "alice", "s2").session, 0);
  // events count toward their response, and leave with it
  ASSERT_TRUE(store.append_events("resp_a", {{0, std::string(100, 'e')}, {1, "ab"}}).ok());
  EXPECT_EQ(must_usage(store, "alice", "s1").session, 1106);
  ASSERT_TRUE(store.purge_events_before(now_unix_s() + 10).ok());
  EXPECT_EQ(must_usage(store, "alice", "s1").session, 1004);
  ASSERT_TRUE(store.append_event("resp_a", 2, "abcd").ok());
  // an overwrite counts the new texts and keeps the events' bytes
  a.conversation_json = "[]";
  ASSERT_TRUE(store.put(a).ok());
  EXPECT_EQ(must_usage(store, "alice", "s1").session, 2 + 2 + 2 + 4);
  ASSERT_TRUE(store.remove("resp_a").ok());
  u = must_usage(store, "alice", "s1");
  EXPECT_EQ(u.session, 0);
  EXPECT_EQ(u.total, 12);
}

TEST(ResponseStoreUsage, TheSumReadsOnlyTheCoveringIndex) {
  auto db = must_open_memory();
  ASSERT_TRUE(db);
  auto text = db->with_connection([](connection& c) -> result<std::string> {
    auto st = c.prepare("EXPLAIN QUERY PLAN SELECT COALESCE(SUM(bytes + events_bytes), 0), COALESCE(SUM(CASE WHEN "
                        "owner = ?1 AND session = ?2 THEN bytes + events_bytes ELSE 0 END), 0) FROM responses "
                        "INDEXED BY responses_usage");
    if (!st) return st.error();
    std::string out;
    while (sqlite3_step(st->get()) == SQLITE_ROW) {
      out += reinterpret_cast<const char*>(sqlite3_column_text(st->get(), 3));
      out += ';';
    }
    return out;
  });
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_NE(text->find("COVERING INDEX responses_usage"), std::string::npos) << *text;
}

TEST(ResponseStoreSweep, RemovesFinishedRowsPastTheCutOffAndTheirEventsOnly) {
  auto db = must_open_memory();
  ASSERT_TRUE(db);
  response_store store(*db);
  ASSERT_TRUE(store.put(minimal_response("resp_old", "completed", 100)).ok());
  ASSERT_TRUE(store.put(minimal_response("resp_old_failed", "failed", 100)).ok());
  ASSERT_TRUE(store.put(minimal_response("resp_old_running", "in_progress", 100)).ok());
  ASSERT_TRUE(store.put(minimal_response("resp_old_queued", "queued", 100)).ok());
  ASSERT_TRUE(store.put(minimal_response("resp_edge", "completed", 200)).ok());
  ASSERT_TRUE(store.put(minimal_response("resp_new", "completed", 300)).ok());
  ASSERT_TRUE(store.append_events("resp_old", {{0, "a"}, {1, "b"}}).ok());
  ASSERT_TRUE(store.append_event("resp_new", 0, "c").ok());
  auto swept = store.remove_finished_before(200);
  ASSERT_TRUE(swept) << swept.error().message;
  EXPECT_EQ(*swept, 2);
  EXPECT_FALSE(store.get("resp_old")->has_value());
  EXPECT_FALSE(store.get("resp_old_failed")->has_value());
  EXPECT_TRUE(store.get("resp_old_running")->has_value());
  EXPECT_TRUE(store.get("resp_old_queued")->has_value());
  EXPECT_TRUE(store.get("resp_edge")->has_value());  // updated_at == cut-off: kept
  EXPECT_EQ(query_text(*db, "SELECT COUNT(*) FROM response_events"), "1");
  EXPECT_EQ(*store.remove_finished_before(200), 0);
}

TEST(ResponsesMigration, PreviousVersionGainsTheTablesAndKeepsItsRows) {
  temp_dir t;
  const std::string path = t.path + "/warden.db";
  const auto all = k_migrations();
  ASSERT_GE(all.size(), 3u);
  const auto previous = all.first(2);  // the schema before the responses tables (version 3)
  {
    auto db = must_open(path, previous);
    ASSERT_TRUE(db);
    EXPECT_EQ(*db->schema_version(), previous.back().version);
    EXPECT_EQ(query_text(*db, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'responses'"), "0");
    // Rows as a schema 2 warden wrote them (today's call_log and rule_store write later columns).
    ASSERT_TRUE(db->with_connection([](connection& c) {
      return c.exec(
          "INSERT INTO call_records (call_id, session_id, tool, arguments, decision, decided_by, allowed, approval_id,"
          " reason, started_unix_ms, finished_unix_ms, duration_ms, is_error, output_bytes)"
          " VALUES ('call_old', '', '', '', 'run', 'policy', 0, '', '', 0, 0, 0, 0, 0);"
          "INSERT INTO permission_rules (id, scope, session_id, tool, created_unix_ms, expires_unix_ms)"
          " VALUES ('rule_old', '', '', '', 0, 0);");
    }).ok());
  }
  auto db = must_open(path);
  ASSERT_TRUE(db);
  EXPECT_EQ(*db->schema_version(), all.back().version);
  EXPECT_GE(all.back().version, 3);
  EXPECT_EQ(*call_log(*db).count(), 1);
  EXPECT_EQ(rule_store(*db).list()->size(), 1u);
  response_store store(*db);
  ASSERT_TRUE(store.put(full_response()).ok());
  ASSERT_TRUE(store.append_event(full_response().id, 1, "{}").ok());
  expect_same(must_get(store, full_response().id), full_response());
  EXPECT_EQ(must_events(store, full_response().id, 0, 10).size(), 1u);
}

TEST(ResponsesMigration, Version6CountsTheBytesOfRowsWrittenBefore) {
  temp_dir t;
  const std::string path = t.path + "/warden.db";
  const auto all = k_migrations();
  ASSERT_GE(all.size(), 6u);
  {
    auto db = must_open(path, all.first(5));
    ASSERT_TRUE(db);
    ASSERT_TRUE(db->with_connection([](connection& c) {
      return c.exec(
          "INSERT INTO responses (id, created_at, updated_at, status, background, response_json, input_items_json,"
          " conversation_json, pending_json, owner) VALUES ('resp_v5', 1, 1, 'completed', 0, '{}', '[]', 'abcdef',"
          " 'pp', 'alice');"
          "INSERT INTO response_events (response_id, sequence_number, event_json, created_at)"
          " VALUES ('resp_v5', 0, '123', 1), ('resp_v5', 1, '4567', 1);");
    }).ok());
  }
  auto db = must_open(path);
  ASSERT_TRUE(db);
  response_store store(*db);
  EXPECT_EQ(must_usage(store, "alice", "").session, 2 + 2 + 6 + 2 + 3 + 4);
  EXPECT_EQ(must_get(store, "resp_v5").session, "");
}

}  // namespace
}  // namespace warden::store
