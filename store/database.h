// warden::store::database — one SQLite database file with warden's schema.
//
// open() creates the parent folder (0700, only the folders it creates) and the file (0600;
// an existing file is tightened to 0600), then sets
//   PRAGMA journal_mode=WAL, synchronous=NORMAL, foreign_keys=ON, busy_timeout=5000 (ms)
// and brings the schema up to date: `k_migrations` is an ordered list of SQL steps, step N
// brings the schema to version N, and `PRAGMA user_version` holds the version on disk. Each
// step runs in its own transaction together with its user_version bump, so a failing step
// leaves the database at the previous version. A file whose version is newer than this code
// knows is refused (errc::internal, naming both versions).
//
// Access goes through with_connection(): the callback runs with the connection lock held and
// gets a `connection` for cached prepared statements; bind parameters, never build SQL from
// data. SQLite's own errors never throw: every failure is an errc::internal error whose message
// names the database file, what was being done, and sqlite3_errmsg().
// Thread-safety: every member is thread-safe (one connection guarded by a mutex; calls
// serialize). Run it off the io threads (common/blocking_pool.h): calls block on disk I/O and
// on other writers for up to busy_timeout.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "common/result.h"

struct sqlite3;
struct sqlite3_stmt;

namespace warden::store {

/// One schema step: running `sql` brings the schema from version-1 to `version`.
struct migration {
  int version;      ///< 1, 2, 3, … in order, no gaps
  const char* sql;  ///< one or more statements
};

/// The schema steps this code knows, in order (database.cpp).
std::span<const migration> k_migrations() noexcept;

/// Binds `v`'s bytes with their length (quotes and NULs go in intact) to parameter `i` as UTF-8
/// text ("" for an empty view, never NULL); `v` must outlive the statement's use (SQLITE_STATIC).
/// SQLite's result code.
int bind_text(sqlite3_stmt* s, int i, std::string_view v);
/// Column `i` of the current row as its bytes ("" for NULL).
std::string column_string(sqlite3_stmt* s, int i);

/// A prepared statement borrowed from the connection's cache; on destruction it is reset and its
/// bindings cleared, ready for the next use. Valid only inside with_connection().
class statement {
 public:
  explicit statement(sqlite3_stmt* s) noexcept : s_(s) {}
  statement(statement&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  statement& operator=(statement&&) = delete;
  statement(const statement&) = delete;
  statement& operator=(const statement&) = delete;
  ~statement();
  sqlite3_stmt* get() const noexcept { return s_; }

 private:
  sqlite3_stmt* s_;
};

/// The connection as seen inside with_connection(), with the lock held.
class connection {
 public:
  connection(sqlite3* db, const std::string& path, std::map<std::string, sqlite3_stmt*>& cache) noexcept
      : db_(db), path_(path), cache_(cache) {}
  sqlite3* handle() const noexcept { return db_; }
  /// The cached prepared statement for `sql` (prepared on first use).
  result<statement> prepare(const std::string& sql);
  /// Runs statements without parameters (schema, pragmas, BEGIN/COMMIT).
  result<void> exec(const std::string& sql);
  /// errc::internal: "<path>: <what>: <sqlite3_errmsg>".
  warden::error fail(std::string_view what) const;

 private:
  sqlite3* db_;
  const std::string& path_;
  std::map<std::string, sqlite3_stmt*>& cache_;
};

class database {
 public:
  /// Opens (or creates) the database at `path` and migrates it with k_migrations().
  static result<std::unique_ptr<database>> open(const std::string& path);
  /// Same with explicit steps (tests use failing or newer steps).
  static result<std::unique_ptr<database>> open(const std::string& path, std::span<const migration> steps);
  /// A private in-memory database with the full schema, for tests.
  static result<std::unique_ptr<database>> open_memory();

  ~database();
  database(const database&) = delete;
  database& operator=(const database&) = delete;

  /// Runs fn(connection&) with the connection lock held and returns what it returns.
  /// fn must not call back into this database (the lock is not recursive).
  template <class F>
  std::invoke_result_t<F, connection&> with_connection(F&& fn) {
    std::lock_guard lk(mu_);
    connection c(db_, path_, cache_);
    return std::forward<F>(fn)(c);
  }

  /// The schema version on disk (PRAGMA user_version).
  result<int> schema_version();
  /// The file path (":memory:" for an in-memory database).
  const std::string& path() const noexcept { return path_; }

 private:
  database(sqlite3* db, std::string path) noexcept : db_(db), path_(std::move(path)) {}
  static result<std::unique_ptr<database>> open_with(const std::string& path, bool memory,
                                                     std::span<const migration> steps);
  result<void> configure(bool memory);
  result<void> migrate(std::span<const migration> steps);

  std::mutex mu_;
  sqlite3* db_;
  std::string path_;
  std::map<std::string, sqlite3_stmt*> cache_;
};

}  // namespace warden::store
