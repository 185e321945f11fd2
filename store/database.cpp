#include "store/database.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace warden::store {
namespace {

constexpr migration k_steps[] = {
    {1,
     "CREATE TABLE call_records ("
     "  id INTEGER PRIMARY KEY,"
     "  call_id TEXT NOT NULL,"
     "  session_id TEXT NOT NULL,"
     "  tool TEXT NOT NULL,"
     "  arguments TEXT NOT NULL,"
     "  decision TEXT NOT NULL,"
     "  decided_by TEXT NOT NULL,"
     "  allowed INTEGER NOT NULL,"
     "  approval_id TEXT NOT NULL,"
     "  reason TEXT NOT NULL,"
     "  started_unix_ms INTEGER NOT NULL,"
     "  finished_unix_ms INTEGER NOT NULL,"
     "  duration_ms INTEGER NOT NULL,"
     "  exit_status INTEGER,"
     "  is_error INTEGER NOT NULL,"
     "  output_bytes INTEGER NOT NULL"
     ");"
     "CREATE INDEX call_records_session ON call_records(session_id);"
     "CREATE INDEX call_records_started ON call_records(started_unix_ms);"},
    // 2: the audit log's new fields (issue 10), "timeout" renamed "expired", remembered rules.
    {2,
     "ALTER TABLE call_records ADD COLUMN surface TEXT NOT NULL DEFAULT '';"
     "ALTER TABLE call_records ADD COLUMN mode TEXT NOT NULL DEFAULT '';"
     "ALTER TABLE call_records ADD COLUMN risk_level TEXT NOT NULL DEFAULT '';"
     "ALTER TABLE call_records ADD COLUMN risk_reasons TEXT NOT NULL DEFAULT '[]';"
     "ALTER TABLE call_records ADD COLUMN rule_id TEXT NOT NULL DEFAULT '';"
     "ALTER TABLE call_records ADD COLUMN approval_latency_ms INTEGER;"
     "UPDATE call_records SET decided_by = 'expired' WHERE decided_by = 'timeout';"
     "CREATE TABLE permission_rules ("
     "  id TEXT PRIMARY KEY,"
     "  scope TEXT NOT NULL,"
     "  session_id TEXT NOT NULL,"
     "  tool TEXT NOT NULL,"
     "  command_prefix TEXT,"
     "  path_prefix TEXT,"
     "  arguments TEXT,"
     "  created_unix_ms INTEGER NOT NULL,"
     "  expires_unix_ms INTEGER NOT NULL"
     ");"},
    // 3: the stored state of OpenAI's Responses API and its replayable stream events
    // (store/responses_store.h).
    {3,
     "CREATE TABLE responses ("
     "  id TEXT PRIMARY KEY,"
     "  created_at INTEGER NOT NULL,"
     "  updated_at INTEGER NOT NULL,"
     "  status TEXT NOT NULL,"
     "  previous_id TEXT,"
     "  background INTEGER NOT NULL,"
     "  response_json TEXT NOT NULL,"
     "  input_items_json TEXT NOT NULL,"
     "  conversation_json TEXT NOT NULL,"
     "  pending_json TEXT,"
     "  request_json TEXT"
     ");"
     "CREATE INDEX responses_status ON responses(status);"
     "CREATE TABLE response_events ("
     "  response_id TEXT NOT NULL REFERENCES responses(id) ON DELETE CASCADE,"
     "  sequence_number INTEGER NOT NULL,"
     "  event_json TEXT NOT NULL,"
     "  created_at INTEGER NOT NULL,"
     "  PRIMARY KEY (response_id, sequence_number)"
     ");"
     "CREATE INDEX response_events_created ON response_events(created_at);"},
    // 4: an audit log that tells the truth (issue 22, store/call_records.h): the SHA-256 of each
    // call's canonical arguments, the row's status (pending / ran / not_run) and notes, and
    // the hash chain: one call_events row per write of a call_records row, chained by hash;
    // rows written before this step are outside the chain (call_chain_start).
    {4,
     "ALTER TABLE call_records ADD COLUMN arguments_sha256 TEXT NOT NULL DEFAULT '';"
     "ALTER TABLE call_records ADD COLUMN status TEXT NOT NULL DEFAULT '';"
     "ALTER TABLE call_records ADD COLUMN notes TEXT NOT NULL DEFAULT '[]';"
     "ALTER TABLE call_records ADD COLUMN row_hash TEXT NOT NULL DEFAULT '';"
     "UPDATE call_records SET status = CASE WHEN allowed != 0 THEN 'ran' ELSE 'not_run' END;"
     "CREATE TABLE call_events ("
     "  seq INTEGER PRIMARY KEY,"
     "  row_id INTEGER NOT NULL,"
     "  content TEXT NOT NULL,"
     "  hash TEXT NOT NULL"
     ");"
     "CREATE INDEX call_events_row ON call_events(row_id);"
     "CREATE TABLE call_chain_start (first_row_id INTEGER NOT NULL);"
     "INSERT INTO call_chain_start SELECT COALESCE(MAX(id), 0) + 1 FROM call_records;"},
    // 5: owners (issue 22, part 3): the API key name that made each audit row, remembered rule and
    // stored response ("" = the single user, and every row written before named keys); the
    // forward-only trigger.
    {5,
     "ALTER TABLE call_records ADD COLUMN owner TEXT NOT NULL DEFAULT '';"
     "CREATE INDEX call_records_owner ON call_records(owner);"
     "ALTER TABLE permission_rules ADD COLUMN owner TEXT NOT NULL DEFAULT '';"
     "ALTER TABLE responses ADD COLUMN owner TEXT NOT NULL DEFAULT '';"
     // and rows that move forward only, held by the database too (store/call_records.h): a
     // final status never changes, whoever writes
     "CREATE TRIGGER call_records_forward_only BEFORE UPDATE OF status ON call_records"
     " WHEN OLD.status IN ('ran', 'not_run') AND NEW.status IS NOT OLD.status"
     " BEGIN SELECT RAISE(ABORT, 'call_records: rows move forward only'); END;"
     // nor is a row deleted or replaced (INSERT OR REPLACE deletes without a DELETE trigger)
     "CREATE TRIGGER call_records_kept BEFORE DELETE ON call_records"
     " BEGIN SELECT RAISE(ABORT, 'call_records: the audit log keeps every row'); END;"
     "CREATE TRIGGER call_records_not_replaced BEFORE INSERT ON call_records"
     " WHEN NEW.id IS NOT NULL AND EXISTS (SELECT 1 FROM call_records WHERE id = NEW.id)"
     " BEGIN SELECT RAISE(ABORT, 'call_records: the audit log keeps every row'); END;"},
    // 6: budgets of the Responses store (issue 23, part 1): the session a response belongs to,
    // the bytes its texts take (written by put()) and the bytes its events take (kept by the
    // triggers), with a covering index so the quota sums read no row; updated_at indexed for
    // the retention sweep.
    {6,
     "ALTER TABLE responses ADD COLUMN session TEXT NOT NULL DEFAULT '';"
     "ALTER TABLE responses ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0;"
     "ALTER TABLE responses ADD COLUMN events_bytes INTEGER NOT NULL DEFAULT 0;"
     "UPDATE responses SET bytes = length(CAST(response_json AS BLOB)) + length(CAST(input_items_json AS BLOB))"
     " + length(CAST(conversation_json AS BLOB)) + COALESCE(length(CAST(pending_json AS BLOB)), 0)"
     " + COALESCE(length(CAST(request_json AS BLOB)), 0);"
     "UPDATE responses SET events_bytes = (SELECT COALESCE(SUM(length(CAST(event_json AS BLOB))), 0)"
     " FROM response_events WHERE response_id = responses.id);"
     "CREATE INDEX responses_usage ON responses(owner, session, bytes, events_bytes);"
     "CREATE INDEX responses_updated ON responses(updated_at);"
     "CREATE TRIGGER response_events_added AFTER INSERT ON response_events BEGIN"
     " UPDATE responses SET events_bytes = events_bytes + length(CAST(NEW.event_json AS BLOB))"
     " WHERE id = NEW.response_id; END;"
     "CREATE TRIGGER response_events_removed AFTER DELETE ON response_events BEGIN"
     " UPDATE responses SET events_bytes = events_bytes - length(CAST(OLD.event_json AS BLOB))"
     " WHERE id = OLD.response_id; END;"},
    // 7: a parked response found by one of its approval request ids (issue 24: a client that
    // resends the history instead of chaining, response_store::find_pending): only the few rows
    // with pending calls are read.
    {7, "CREATE INDEX responses_pending ON responses(id) WHERE pending_json IS NOT NULL;"},
    // 8: knowledge bases (store/knowledge_base.h): the bases, their documents, the documents'
    // chunks with optional embeddings, and an FTS5 index over the chunk text (external content,
    // kept in sync by triggers; a cascaded delete fires them too).
    {8,
     "CREATE TABLE knowledge_bases ("
     "  id TEXT PRIMARY KEY,"
     "  name TEXT NOT NULL,"
     "  owner TEXT NOT NULL DEFAULT '',"
     "  created_unix_ms INTEGER NOT NULL"
     ");"
     "CREATE INDEX knowledge_bases_owner ON knowledge_bases(owner);"
     "CREATE TABLE kb_documents ("
     "  id TEXT PRIMARY KEY,"
     "  kb_id TEXT NOT NULL REFERENCES knowledge_bases(id) ON DELETE CASCADE,"
     "  name TEXT NOT NULL,"
     "  kind TEXT NOT NULL,"    // text | markdown | html | pdf | url
     "  source TEXT NOT NULL,"  // the file name or URL
     "  bytes INTEGER NOT NULL,"
     "  chunks INTEGER NOT NULL,"
     "  created_unix_ms INTEGER NOT NULL"
     ");"
     "CREATE INDEX kb_documents_kb ON kb_documents(kb_id);"
     "CREATE TABLE kb_chunks ("
     "  id INTEGER PRIMARY KEY,"
     "  document_id TEXT NOT NULL REFERENCES kb_documents(id) ON DELETE CASCADE,"
     "  kb_id TEXT NOT NULL,"
     "  ordinal INTEGER NOT NULL,"
     "  text TEXT NOT NULL,"
     "  embedding BLOB"  // float32 little-endian; NULL when none
     ");"
     "CREATE INDEX kb_chunks_kb ON kb_chunks(kb_id);"
     "CREATE INDEX kb_chunks_document ON kb_chunks(document_id);"
     "CREATE VIRTUAL TABLE kb_chunks_fts USING fts5(text, content='kb_chunks', content_rowid='id',"
     " tokenize='unicode61 remove_diacritics 2');"
     "CREATE TRIGGER kb_chunks_fts_insert AFTER INSERT ON kb_chunks BEGIN"
     " INSERT INTO kb_chunks_fts(rowid, text) VALUES (NEW.id, NEW.text); END;"
     "CREATE TRIGGER kb_chunks_fts_delete AFTER DELETE ON kb_chunks BEGIN"
     " INSERT INTO kb_chunks_fts(kb_chunks_fts, rowid, text) VALUES ('delete', OLD.id, OLD.text); END;"
     "CREATE TRIGGER kb_chunks_fts_update AFTER UPDATE OF id, text ON kb_chunks BEGIN"
     " INSERT INTO kb_chunks_fts(kb_chunks_fts, rowid, text) VALUES ('delete', OLD.id, OLD.text);"
     " INSERT INTO kb_chunks_fts(rowid, text) VALUES (NEW.id, NEW.text); END;"},
    // 9: the MCP server registry (issue 26, store/mcp_server_store.h): one row per entry, its
    // JSON as the control surface shows it.
    {9,
     "CREATE TABLE mcp_servers ("
     "  id TEXT PRIMARY KEY,"
     "  owner TEXT NOT NULL DEFAULT '',"
     "  config TEXT NOT NULL,"
     "  created_unix_ms INTEGER NOT NULL,"
     "  updated_unix_ms INTEGER NOT NULL"
     ");"},
    // 10: the external providers (issue 28, store/provider_store.h): one row per provider, its
    // JSON (the key sealed or named, never in clear).
    {10,
     "CREATE TABLE providers ("
     "  id TEXT PRIMARY KEY,"
     "  owner TEXT NOT NULL DEFAULT '',"
     "  config TEXT NOT NULL,"
     "  created_unix_ms INTEGER NOT NULL,"
     "  updated_unix_ms INTEGER NOT NULL"
     ");"},
};

constexpr const char* k_memory_name = ":memory:";

error os_error(const std::string& path, const std::string& what) {
  return make_error(errc::internal, path + ": " + what + ": " + std::strerror(errno));
}

/// Creates the missing parent folders (0700) and the file (0600); tightens an existing file.
result<void> prepare_file(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::filesystem::path prefix;
  for (const auto& part : parent) {
    prefix /= part;
    if (::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) {
      return os_error(path, "cannot create folder " + prefix.string());
    }
  }
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return os_error(path, "cannot open database file");
  const bool chmod_ok = ::fchmod(fd, 0600) == 0;
  ::close(fd);
  if (!chmod_ok) return os_error(path, "cannot set mode 0600");
  return {};
}

/// Steps must be numbered 1, 2, 3, … in order.
result<void> check_steps(std::span<const migration> steps) {
  int expected = 1;
  for (const auto& s : steps) {
    if (s.version != expected) {
      return make_error(errc::internal, "schema migrations out of order: expected version " +
                                            std::to_string(expected) + ", got " + std::to_string(s.version));
    }
    ++expected;
  }
  return {};
}

result<int> read_user_version(connection& c) {
  auto st = c.prepare("PRAGMA user_version");
  if (!st) return st.error();
  if (sqlite3_step(st->get()) != SQLITE_ROW) return c.fail("reading PRAGMA user_version");
  return sqlite3_column_int(st->get(), 0);
}

/// Runs one step and its user_version bump in one transaction; skips it when another process
/// already applied it.
result<void> apply_step(connection& c, const migration& step) {
  const std::string label = "migration to schema version " + std::to_string(step.version);
  if (auto r = c.exec("BEGIN IMMEDIATE"); !r) return r;
  auto current = read_user_version(c);
  result<void> outcome;
  if (!current) {
    outcome = current.error();
  } else if (*current < step.version) {
    outcome = c.exec(step.sql);
    if (outcome) outcome = c.exec("PRAGMA user_version = " + std::to_string(step.version));
    if (outcome) outcome = c.exec("COMMIT");
    if (outcome) return {};
  }
  (void)c.exec("ROLLBACK");
  if (outcome) return {};  // already at this version: nothing to do
  return make_error(errc::internal, label + " failed: " + outcome.error().message);
}

}  // namespace

std::span<const migration> k_migrations() noexcept { return k_steps; }

int bind_text(sqlite3_stmt* s, int i, std::string_view v) {
  // an empty view with no data binds "" (SQLite would bind a null pointer as NULL)
  return sqlite3_bind_text64(s, i, v.data() != nullptr ? v.data() : "", v.size(), SQLITE_STATIC, SQLITE_UTF8);
}

std::string column_string(sqlite3_stmt* s, int i) {
  const auto* p = sqlite3_column_text(s, i);  // before column_bytes, as SQLite requires
  const int n = sqlite3_column_bytes(s, i);
  if (p == nullptr || n <= 0) return {};
  return std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(n));
}

statement::~statement() {
  if (s_ == nullptr) return;
  sqlite3_reset(s_);
  sqlite3_clear_bindings(s_);
}

result<statement> connection::prepare(const std::string& sql) {
  auto it = cache_.find(sql);
  if (it != cache_.end()) return statement(it->second);
  sqlite3_stmt* s = nullptr;
  const int rc = sqlite3_prepare_v3(db_, sql.c_str(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &s,
                                    nullptr);
  if (rc != SQLITE_OK || s == nullptr) {
    sqlite3_finalize(s);
    return fail("preparing \"" + sql + "\"");
  }
  cache_.emplace(sql, s);
  return statement(s);
}

result<void> connection::exec(const std::string& sql) {
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK) return {};
  constexpr std::size_t k_shown = 60;  // long schema SQL is cut in the message
  return fail("running \"" + (sql.size() > k_shown ? sql.substr(0, k_shown) + "…" : sql) + "\"");
}

error connection::fail(std::string_view what) const {
  return make_error(errc::internal, path_ + ": " + std::string(what) + ": " + sqlite3_errmsg(db_));
}

result<std::unique_ptr<database>> database::open(const std::string& path) { return open(path, k_migrations()); }

result<std::unique_ptr<database>> database::open(const std::string& path, std::span<const migration> steps) {
  if (path.empty() || path == k_memory_name) {
    return make_error(errc::internal, "database path \"" + path + "\" is not a file (use open_memory())");
  }
  return open_with(path, false, steps);
}

result<std::unique_ptr<database>> database::open_memory() { return open_with(k_memory_name, true, k_migrations()); }

result<std::unique_ptr<database>> database::open_with(const std::string& path, bool memory,
                                                      std::span<const migration> steps) {
  if (auto r = check_steps(steps); !r) return r.error();
  if (!memory) {
    if (auto r = prepare_file(path); !r) return r.error();
  }
  sqlite3* raw = nullptr;
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  if (sqlite3_open_v2(path.c_str(), &raw, flags, nullptr) != SQLITE_OK) {
    std::string msg = raw != nullptr ? sqlite3_errmsg(raw) : "out of memory";
    sqlite3_close(raw);
    return make_error(errc::internal, path + ": cannot open database: " + msg);
  }
  std::unique_ptr<database> db(new database(raw, path));
  if (auto r = db->configure(memory); !r) return r.error();
  if (auto r = db->migrate(steps); !r) return r.error();
  return db;
}

database::~database() {
  for (auto& [sql, s] : cache_) sqlite3_finalize(s);
  sqlite3_close(db_);
}

result<void> database::configure(bool memory) {
  return with_connection([&](connection& c) -> result<void> {
    sqlite3_busy_timeout(db_, 5000);  // ms; before anything that may wait for another writer
    auto st = c.prepare("PRAGMA journal_mode=WAL");
    if (!st) return st.error();
    if (sqlite3_step(st->get()) != SQLITE_ROW) return c.fail("setting journal_mode=WAL");
    const auto* mode = reinterpret_cast<const char*>(sqlite3_column_text(st->get(), 0));
    const std::string got = mode != nullptr ? mode : "";
    if (!memory && got != "wal") {
      return make_error(errc::internal, path_ + ": journal_mode=WAL not available (got \"" + got + "\")");
    }
    // journal_size_limit: the write-ahead log is cut back to 4 MiB when it restarts, so one large
    // write does not leave its size on disk for good.
    return c.exec(
        "PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON; PRAGMA busy_timeout=5000; "
        "PRAGMA journal_size_limit=4194304;");
  });
}

result<void> database::migrate(std::span<const migration> steps) {
  return with_connection([&](connection& c) -> result<void> {
    const int known = steps.empty() ? 0 : steps.back().version;
    auto on_disk = read_user_version(c);
    if (!on_disk) return on_disk.error();
    if (*on_disk > known) {
      return make_error(errc::internal, path_ + ": database schema version " + std::to_string(*on_disk) +
                                            " is newer than version " + std::to_string(known) +
                                            ", the newest this warden knows; use a newer warden");
    }
    for (const auto& step : steps) {
      if (step.version <= *on_disk) continue;
      if (auto r = apply_step(c, step); !r) return r;
    }
    return {};
  });
}

result<int> database::schema_version() {
  return with_connection([](connection& c) { return read_user_version(c); });
}

}  // namespace warden::store
