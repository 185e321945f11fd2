// call_chain — the hash chain of the audit log (store/call_records.h defines it): the content
// of a row's event, the chaining of one write, and the walk of verify(). Internal to store/:
// call_records.cpp calls it inside its transactions.
// Thread-safety: functions on a connection, called with the database lock held.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"
#include "store/call_records.h"
#include "store/database.h"

namespace warden::store::chain {

/// Whether a row's status may go from `from` to `to` (rows move forward only,
/// store/call_records.h): from "" (before the chain) or "pending" to anything, else only to itself.
bool moves_forward(std::string_view from, std::string_view to);

/// The call_records columns in the order every SELECT of call_records.cpp reads them (after
/// `id`), joined by ", "; row_hash last.
const std::string& columns();
/// The number of columns() (row_hash included).
int column_count();

/// chain_content() of the row that a statement of "SELECT id, <columns()>" stands on.
std::string content_of(sqlite3_stmt* s);

/// Appends the event of row `row_id` as it is stored now and sets its row_hash. Call inside
/// the write's transaction.
result<void> append_event(connection& c, std::int64_t row_id);

/// verify(), inside a read transaction.
result<chain_report> verify(connection& c);

}  // namespace warden::store::chain
