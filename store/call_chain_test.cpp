// The audit log that tells the truth (issue 22): the arguments' hash, redaction of the 20 secret
// shapes through the real table, rows that move forward only, and the hash chain that
// verify() walks — untouched, and after each kind of edit made behind warden's back.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>
#include <vector>

#include "common/json_util.h"
#include "common/testing/temp_dir.h"
#include "secrets/testing/secret_shapes.h"
#include "store/call_records.h"
#include "store/database.h"
#include "store/sha256.h"
#include "store/testing/database.h"

namespace warden::store {
namespace {

using testing::must_open;
using testing::must_open_memory;
using testing::query_text;
using warden::testing::temp_dir;

/// Runs SQL behind the store's back (as `sqlite3 warden.db "…"` would).
void sql(database& db, const std::string& text) {
  auto r = db.with_connection([&](connection& c) { return c.exec(text); });
  ASSERT_TRUE(r.ok()) << r.error().message;
}

call_record terminal_call(const std::string& command, const std::string& session = "s") {
  call_record r;
  r.call_id = "call_" + std::to_string(std::hash<std::string>{}(command) % 100000);
  r.session_id = session;
  r.tool = "terminal";
  r.arguments = dump_safe(json{{"command", command}});
  r.decision = "run";
  r.decided_by = "auto";
  r.mode = "auto";
  r.started_unix_ms = 1700000000000;
  return r;
}

call_record pending(call_record r) {
  r.status = "pending";
  r.allowed = true;
  r.reason = "running";
  return r;
}

call_record ran(call_record r, int exit_status = 0) {
  r.status = "ran";
  r.allowed = true;
  r.reason.clear();
  r.exit_status = exit_status;
  r.finished_unix_ms = r.started_unix_ms + 5;
  return r;
}

call_record row_of(call_log& log, std::int64_t id) {
  auto rows = log.list({});
  EXPECT_TRUE(rows.ok());
  for (auto& [row, r] : *rows) {
    if (row == id) return r;
  }
  ADD_FAILURE() << "no row " << id;
  return {};
}

TEST(Sha256, KnownDigests) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

// Each of the 20 shapes as a tool call's arguments: stored redacted, the secret nowhere in the
// database, the hash of the original arguments next to the redacted text.
TEST(CallLog, TheTwentyShapesAreStoredRedactedWithTheHashOfTheOriginal) {
  auto db = must_open_memory();
  ASSERT_TRUE(db);
  call_log log(*db);
  for (const auto& shape : secrets::testing::twenty_shapes()) {
    const call_record r = terminal_call(shape.in);
    auto id = log.insert(r);
    ASSERT_TRUE(id.ok()) << id.error().message;
    const call_record stored = row_of(log, *id);
    EXPECT_EQ(stored.arguments, dump_safe(json{{"command", shape.out}})) << shape.what;
    EXPECT_EQ(stored.arguments_sha256, sha256_hex(r.arguments)) << shape.what;
    EXPECT_EQ(stored.arguments_sha256.size(), 64u);
  }
  for (const auto& shape : secrets::testing::twenty_shapes()) {
    for (const char* table : {"call_records", "call_events"}) {
      const std::string hits = query_text(*db, std::string("SELECT COUNT(*) FROM ") + table +
                                                   " WHERE instr(CAST(" + (table[5] == 'r' ? "arguments" : "content") +
                                                   " AS BLOB), CAST('" + shape.secret + "' AS BLOB)) > 0");
      EXPECT_EQ(hits, "0") << shape.what << " in " << table;
    }
  }
}

// The commands that made the audit log lie are stored as they ran.
TEST(CallLog, AKeyMarkerAndASubstitutionAreStoredWithTheCommandVisible) {
  auto db = must_open_memory();
  ASSERT_TRUE(db);
  call_log log(*db);
  for (const std::string command : {"echo '-----BEGIN PRIVATE KEY-----' > k; rm -rf /workspace/seeded",
                                    "API_KEY=\"$(cat /workspace/key)\" sh -c 'rm -rf /workspace/seeded'"}) {
    const call_record r = ran(terminal_call(command));
    auto id = log.insert(r);
    ASSERT_TRUE(id.ok());
    const call_record stored = row_of(log, *id);
    EXPECT_EQ(stored.arguments, r.arguments);
    EXPECT_EQ(parse_json(stored.arguments)->at("command"), command);
    EXPECT_EQ(stored.arguments_sha256, sha256_hex(r.arguments));
  }
}

TEST(CallLog, RowsMoveForwardOnly) {
  auto db = must_open_memory();
  ASSERT_TRUE(db);
  call_log log(*db);
  const call_record call = terminal_call("sleep 2; echo done");
  auto id = log.insert(pending(call));
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(row_of(log, *id).status, "pending");
  call_record done = ran(call);
  ASSERT_TRUE(log.update(*id, done).ok());
  // a later write that would say it did not run is refused, and nothing changes
  call_record gone = call;
  gone.status = "not_run";
  gone.allowed = false;
  gone.decided_by = "client_gone";
  gone.notes = {"client_gone"};
  auto refused = log.update(*id, gone);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, errc::forbidden);
  EXPECT_NE(refused.error().message.find("forward only"), std::string::npos);
  call_record now = row_of(log, *id);
  EXPECT_EQ(now.status, "ran");
  EXPECT_TRUE(now.allowed);
  EXPECT_EQ(now.decided_by, "auto");
  EXPECT_TRUE(now.notes.empty());
  EXPECT_FALSE(log.update(*id, pending(call)).ok());  // nor back to pending
  // a write that keeps it ran adds facts; notes are never dropped
  done.notes = {"client_gone"};
  ASSERT_TRUE(log.update(*id, done).ok());
  done.notes = {"cancelled"};
  ASSERT_TRUE(log.update(*id, done).ok());
  now = row_of(log, *id);
  EXPECT_EQ(now.notes, (std::vector<std::string>{"client_gone", "cancelled"}));
  // "ran" is stored with allowed set whatever the writer says
  done.allowed = false;
  ASSERT_TRUE(log.update(*id, done).ok());
  EXPECT_TRUE(row_of(log, *id).allowed);
  // a call that did not run stays not run
  auto other = log.insert(gone);
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(row_of(log, *other).status, "not_run");
  EXPECT_EQ(log.update(*other, done).error().code, errc::forbidden);
  call_record odd = done;
  odd.status = "maybe";
  EXPECT_EQ(log.insert(odd).error().code, errc::invalid_request);
  EXPECT_TRUE(log.verify()->ok);  // refused writes left no trace in the chain
  // the database refuses it too, whoever writes (the triggers of schema 5): no status change,
  // no deletion, no replacement of the row by another with its id
  for (const std::string edit : {"DELETE FROM call_records WHERE id = " + std::to_string(*id),
                                 "INSERT OR REPLACE INTO call_records (id, call_id, session_id, tool, arguments, decision,"
                                 " decided_by, allowed, approval_id, reason, started_unix_ms, finished_unix_ms, duration_ms,"
                                 " is_error, output_bytes, status) VALUES (" + std::to_string(*id) + ", 'x', 's', 'terminal',"
                                 " '{}', 'ask', 'user', 0, '', 'declined by the user', 1, 2, 1, 0, 0, 'not_run')"}) {
    auto r = db->with_connection([&](connection& c) { return c.exec(edit); });
    ASSERT_FALSE(r.ok()) << edit;
    EXPECT_NE(r.error().message.find("the audit log keeps every row"), std::string::npos) << r.error().message;
  }
  auto raw = db->with_connection(
      [&](connection& c) { return c.exec("UPDATE call_records SET status = 'not_run' WHERE id = " + std::to_string(*id)); });
  ASSERT_FALSE(raw.ok());
  EXPECT_NE(raw.error().message.find("rows move forward only"), std::string::npos) << raw.error().message;
  EXPECT_EQ(row_of(log, *id).status, "ran");
}

// Whoever rewrites the chain from some event on with recomputed hashes (they are not keyed)
// still cannot turn a call that ran into one that did not: verify() follows each row's statuses.
TEST(CallChain, ARewrittenChainThatMovesARowBackIsFound) {
  auto db = must_open_memory();
  ASSERT_TRUE(db);
  call_log log(*db);
  const call_record call = terminal_call("rm -rf /workspace/important");
  auto id = log.insert(pending(call));
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(log.update(*id, ran(call)).ok());
  ASSERT_TRUE(log.verify()->ok);
  // the forger: drop the trigger, rewrite the row as declined, and append a well-formed event for it
  sql(*db, "DROP TRIGGER call_records_forward_only; UPDATE call_records SET status = 'not_run', allowed = 0,"
           " decided_by = 'user', reason = 'declined by the user' WHERE id = " + std::to_string(*id));
  const std::string last = query_text(*db, "SELECT hash FROM call_events ORDER BY seq DESC LIMIT 1");
  const std::string old = query_text(*db, "SELECT content FROM call_events ORDER BY seq DESC LIMIT 1");
  auto forged = parse_json(old);
  ASSERT_TRUE(forged && forged->is_object());
  (*forged)["status"] = "not_run";
  (*forged)["allowed"] = 0;
  (*forged)["decided_by"] = "user";
  (*forged)["reason"] = "declined by the user";
  const std::string content = dump_safe(*forged);  // no quote in it to escape for SQL
  const std::string hash = sha256_hex(last + "\n" + content);
  sql(*db, "INSERT INTO call_events (row_id, content, hash) VALUES (" + std::to_string(*id) + ", '" + content + "', '" + hash + "');"
           "UPDATE call_records SET row_hash = '" + hash + "' WHERE id = " + std::to_string(*id));
  auto r = log.verify();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->ok);
  EXPECT_EQ(r->broken_row, *id);
  EXPECT_NE(r->problem.find("moves the row from \"ran\" back to \"not_run\""), std::string::npos) << r->problem;
}

// A call that was allowed but could not start (a sandbox failure) reads as not run, with why.
TEST(CallLog, NotRunHoldsItsReason) {
  auto db = must_open_memory();
  ASSERT_TRUE(db);
  call_log log(*db);
  call_record call = terminal_call("echo hi");
  auto id = log.insert(pending(call));
  ASSERT_TRUE(id.ok());
  call.status = "not_run";
  call.allowed = true;  // the gate let it through; it still did not run
  call.is_error = true;
  call.reason = "not run: the sandbox could not start (bwrap: Creating new namespace failed)";
  ASSERT_TRUE(log.update(*id, call).ok());
  const call_record stored = row_of(log, *id);
  EXPECT_EQ(stored.status, "not_run");
  EXPECT_FALSE(stored.allowed);
  EXPECT_EQ(stored.reason, call.reason);
}

TEST(CallLog, AStatusLeftEmptyFollowsAllowed) {
  auto db = must_open_memory();
  ASSERT_TRUE(db);
  call_log log(*db);
  call_record r = terminal_call("ls");
  r.allowed = true;
  EXPECT_EQ(row_of(log, *log.insert(r)).status, "ran");
  r.allowed = false;
  EXPECT_EQ(row_of(log, *log.insert(r)).status, "not_run");
}

/// A log of `calls` calls: each inserted pending, then completed (one refused call inserted
/// final), as a server writes them.
void fill(call_log& log, int calls) {
  for (int i = 0; i < calls; ++i) {
    call_record c = terminal_call("echo " + std::to_string(i));
    auto id = log.insert(pending(c));
    ASSERT_TRUE(id.ok());
    ASSERT_TRUE(log.update(*id, ran(c, i)).ok());
  }
  call_record refused = terminal_call("rm -rf /");
  refused.decision = "ask";
  refused.decided_by = "user";
  refused.reason = "The user declined to run this tool call.";
  ASSERT_TRUE(log.insert(refused).ok());
}

TEST(CallChain, AnUntouchedLogVerifies) {
  auto db = must_open_memory();
  ASSERT_TRUE(db);
  call_log log(*db);
  auto empty = log.verify();
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->ok);
  EXPECT_EQ(empty->rows, 0);
  fill(log, 3);
  auto r = log.verify();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->ok) << r->problem;
  EXPECT_EQ(r->rows, 4);
  EXPECT_EQ(r->events, 7);
  EXPECT_EQ(r->legacy_rows, 0);
  EXPECT_EQ(r->head, row_of(log, 4).row_hash);  // the refused call was written last
  EXPECT_EQ(r->head.size(), 64u);
  // each hash follows from the one before: recompute the first two by hand
  const std::string c1 = query_text(*db, "SELECT content FROM call_events WHERE seq = 1");
  const std::string c2 = query_text(*db, "SELECT content FROM call_events WHERE seq = 2");
  const std::string h1 = sha256_hex(std::string(64, '0') + "\n" + c1);
  EXPECT_EQ(query_text(*db, "SELECT hash FROM call_events WHERE seq = 1"), h1);
  EXPECT_EQ(query_text(*db, "SELECT hash FROM call_events WHERE seq = 2"), sha256_hex(h1 + "\n" + c2));
  const auto content = parse_json(c2);
  ASSERT_TRUE(content && content->is_object());
  EXPECT_EQ(content->at("id"), 1);
  EXPECT_EQ(content->at("status"), "ran");
  EXPECT_EQ(content->at("arguments").at("sha256"), sha256_hex(terminal_call("echo 0").arguments));
}

struct edit {
  const char* what;
  const char* sql;
  std::int64_t row;
  const char* says;  ///< a part of the problem's text
};

TEST(CallChain, EachEditIsFoundAndTheRowNamed) {
  const edit edits[] = {
      {"a command rewritten", "UPDATE call_records SET arguments = '{\"command\":\"ls\"}' WHERE id = 2", 2, "arguments"},
      {"a refusal turned into a run", "DROP TRIGGER call_records_forward_only; UPDATE call_records SET allowed = 1, status = 'ran' WHERE id = 4", 4, "allowed, status"},
      {"an exit status changed", "UPDATE call_records SET exit_status = 0 WHERE id = 3", 3, "exit_status"},
      {"an event's content edited", "UPDATE call_events SET content = replace(content, '\"ran\"', '\"not_run\"') WHERE seq = 4",
       2, "event 4 does not follow"},
      {"an event removed", "DELETE FROM call_events WHERE seq = 3", 2, "jumps from event 2 to event 4"},
      {"a row deleted", "DROP TRIGGER call_records_kept; DELETE FROM call_records WHERE id = 1", 1, "deleted"},
      {"a row added outside warden",
       "INSERT INTO call_records (call_id, session_id, tool, arguments, decision, decided_by, allowed, approval_id, reason,"
       " started_unix_ms, finished_unix_ms, duration_ms, is_error, output_bytes, status) VALUES ('x', 's', 'terminal',"
       " '{}', 'run', 'auto', 1, '', '', 1, 2, 1, 0, 0, 'ran')", 5, "no chained event"},
      {"the chain's start moved past every row", "UPDATE call_chain_start SET first_row_id = 100", 1, "before the chain's start"},
      {"a row hash replaced", "UPDATE call_records SET row_hash = 'x' WHERE id = 3", 3, "row_hash"},
  };
  for (const auto& e : edits) {
    auto db = must_open_memory();
    ASSERT_TRUE(db);
    call_log log(*db);
    fill(log, 3);
    ASSERT_TRUE(log.verify()->ok);
    sql(*db, e.sql);
    auto r = log.verify();
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_FALSE(r->ok) << e.what;
    EXPECT_EQ(r->broken_row, e.row) << e.what << ": " << r->problem;
    EXPECT_NE(r->problem.find(e.says), std::string::npos) << e.what << ": " << r->problem;
  }
}

TEST(CallChain, AnOwnerIsChainedAndTheSingleUsersRowsHashAsBeforeOwners) {
  auto db = must_open_memory();
  ASSERT_TRUE(db);
  call_log log(*db);
  ASSERT_TRUE(log.insert(ran(terminal_call("echo single"))).ok());
  call_record keyed = ran(terminal_call("echo alice"));
  keyed.owner = "alice";
  ASSERT_TRUE(log.insert(keyed).ok());
  // owner "" is left out of the content, so a chain written before the owner column still verifies
  const auto single = parse_json(query_text(*db, "SELECT content FROM call_events WHERE row_id = 1"));
  ASSERT_TRUE(single && single->is_object());
  EXPECT_FALSE(single->contains("owner"));
  const auto named = parse_json(query_text(*db, "SELECT content FROM call_events WHERE row_id = 2"));
  ASSERT_TRUE(named && named->is_object());
  EXPECT_EQ(named->at("owner"), "alice");
  ASSERT_TRUE(log.verify()->ok);
  for (const char* edit : {"UPDATE call_records SET owner = 'bob' WHERE id = 2", "UPDATE call_records SET owner = 'bob' WHERE id = 1"}) {
    auto copy = must_open_memory();
    ASSERT_TRUE(copy);
    call_log other(*copy);
    ASSERT_TRUE(other.insert(ran(terminal_call("echo single"))).ok());
    ASSERT_TRUE(other.insert(keyed).ok());
    sql(*copy, edit);
    auto r = other.verify();
    ASSERT_TRUE(r.ok());
    EXPECT_FALSE(r->ok) << edit;
    EXPECT_NE(r->problem.find("owner"), std::string::npos) << edit << ": " << r->problem;
  }
}

TEST(CallChain, RowsFromBeforeTheChainAreCountedApart) {
  temp_dir t;
  const std::string path = t.path + "/warden.db";
  {
    auto old = must_open(path, k_migrations().first(3));
    ASSERT_TRUE(old);
    sql(*old,
        "INSERT INTO call_records (call_id, session_id, tool, arguments, decision, decided_by, allowed, approval_id,"
        " reason, started_unix_ms, finished_unix_ms, duration_ms, exit_status, is_error, output_bytes) VALUES"
        " ('c1', 's', 'terminal', '{}', 'run', 'auto', 1, '', '', 1, 2, 1, 0, 0, 0),"
        " ('c2', 's', 'terminal', '{}', 'ask', 'user', 0, 'a', 'declined', 3, 4, 1, NULL, 0, 0)");
  }
  auto db = must_open(path);
  ASSERT_TRUE(db);
  call_log log(*db);
  EXPECT_EQ(row_of(log, 1).status, "ran");
  EXPECT_EQ(row_of(log, 2).status, "not_run");
  fill(log, 1);
  auto r = log.verify();
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->ok) << r->problem;
  EXPECT_EQ(r->legacy_rows, 2);
  EXPECT_EQ(r->rows, 2);
}

}  // namespace
}  // namespace warden::store
