// Test support (header-only, for *_test.cpp files only): opening a database and reading one value,
// with gtest failures instead of error handling.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <memory>
#include <span>
#include <string>

#include "store/database.h"

namespace warden::store::testing {

/// The database at `path` brought up to date by `steps`; nullptr (and a test failure) when it
/// cannot be opened.
inline std::unique_ptr<database> must_open(const std::string& path,
                                           std::span<const migration> steps = k_migrations()) {
  auto db = database::open(path, steps);
  if (!db) ADD_FAILURE() << db.error().message;
  return db ? std::move(*db) : nullptr;
}

/// An in-memory database with the schema; nullptr (and a test failure) when it cannot be opened.
inline std::unique_ptr<database> must_open_memory() {
  auto db = database::open_memory();
  if (!db) ADD_FAILURE() << db.error().message;
  return db ? std::move(*db) : nullptr;
}

/// The first column of the first row of `sql` as text: `null_text` for SQL NULL, "<error>" when the
/// query fails or returns no row.
inline std::string query_text(database& db, const std::string& sql, const std::string& null_text = "") {
  return db.with_connection([&](connection& c) -> std::string {
    auto st = c.prepare(sql);
    if (!st || sqlite3_step(st->get()) != SQLITE_ROW) return "<error>";
    const auto* p = sqlite3_column_text(st->get(), 0);
    return p != nullptr ? reinterpret_cast<const char*>(p) : null_text;
  });
}

}  // namespace warden::store::testing
