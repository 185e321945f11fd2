// warden::store::response_store — the stored state of OpenAI's Responses API: one row per
// response (so `previous_response_id`, GET /v1/responses/{id}, its input_items, cancel and
// resumption after an approval work across requests and restarts) and the stream events of a
// response (so a background response's SSE stream can be replayed from a sequence number).
// api/responses/ decides what the JSON texts hold; this store keeps them byte for byte and never
// parses them.
//
// Tables (schema version 3, database.cpp):
//   responses: id TEXT PRIMARY KEY ("resp_…"), created_at and updated_at (Unix epoch
//     seconds), status TEXT, previous_id TEXT (NULL when none), background INTEGER (0/1),
//     response_json TEXT (the response object as served), input_items_json TEXT (a JSON array),
//     conversation_json TEXT (opaque), pending_json TEXT (NULL when none; opaque: tool calls
//     parked while they await approval), request_json TEXT (NULL when none; opaque: what is
//     needed to resume the loop), owner TEXT (schema 5: the API key name that created it, "" for
//     the single user; api/responses/ filters by it). Indexed on status.
//   Schema 6: session TEXT (the session the response belongs to, "" for none), bytes INTEGER
//     (the bytes of its texts, written by put()), events_bytes INTEGER (the bytes of its events,
//     kept by triggers on response_events); a covering index (owner, session, bytes,
//     events_bytes) for bytes_used(), an index on updated_at for remove_finished_before().
//   response_events: response_id TEXT REFERENCES responses(id) ON DELETE CASCADE,
//     sequence_number INTEGER, event_json TEXT, created_at INTEGER (Unix epoch seconds, stamped
//     by append_event() from the system clock); PRIMARY KEY (response_id, sequence_number);
//     indexed on created_at. Deleting a response deletes its events (foreign_keys is ON).
// Strings are stored with their length (quotes, NULs and non-UTF-8 bytes survive); an empty
// previous_id / pending_json / request_json is stored as NULL and read back as "".
//
// Retention and quotas are the caller's policy: nothing here expires or refuses on its own. The
// caller reads bytes_used() before storing, and decides when to remove_finished_before() (the
// --responses-ttl sweep) and purge_events_before() a cut-off; likewise after a
// restart it decides what becomes of the rows unfinished_ids() lists (nothing is running them
// any more).
//
// Errors: errc::internal naming the database file, what was being done and sqlite3_errmsg
// (database.h), including a duplicate (id, sequence_number) in append_event() and an
// append_event() for an id with no response row (foreign key). Nothing throws for SQLite errors.
// Thread-safety: thread-safe (it serializes on the database); it only borrows the database,
// which must outlive it. Calls block on disk I/O: run them off the io threads
// (common/blocking_pool.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "store/database.h"

namespace warden::store {

/// One row of `responses`.
struct stored_response {
  std::string id;                ///< "resp_…" (common/ids.h); the primary key
  std::int64_t created_at = 0;   ///< Unix epoch seconds
  std::int64_t updated_at = 0;   ///< Unix epoch seconds
  std::string status;            ///< "queued" | "in_progress" | "completed" | "incomplete" | "failed" | "cancelled"
                                 ///< (api/openai/'s names; not checked here)
  std::string previous_id;       ///< the previous_response_id it continues; "" = none (NULL)
  bool background = false;       ///< created with background: true
  std::string response_json;     ///< the response object as served (JSON text)
  std::string input_items_json = "[]";   ///< its input items (a JSON array text)
  std::string conversation_json = "[]";  ///< opaque JSON text: the conversation to continue from
  std::string pending_json;      ///< opaque JSON text: parked tool calls awaiting approval; "" = none (NULL)
  std::string request_json;      ///< opaque JSON text: what is needed to resume; "" = none (NULL)
  std::string owner;             ///< the API key name that created it ("" = single user; schema 5)
  std::string session;           ///< the session it belongs to ("" = none; schema 6; quotas count by owner+session)
};

class response_store {
 public:
  explicit response_store(database& db);

  /// Inserts the row, or overwrites every column of the row with the same id; the events of
  /// an overwritten row are kept (an upsert, not a delete and insert).
  result<void> put(const stored_response& r);
  /// The row with this id; nullopt when there is none.
  result<std::optional<stored_response>> get(std::string_view id);
  /// Deletes the row and all its events; false when there was no such row.
  result<bool> remove(std::string_view id);
  /// Takes the row's pending_json and clears it in one step (a parked turn is resumed once): the
  /// value, "" when the row has none or does not exist.
  result<std::string> take_pending(std::string_view id);
  /// The id of the response, owned by `owner` (nullopt: any owner, for an admin), whose pending
  /// calls include approval request `approval_request_id`: an id warden made ("mcpr_" and
  /// [A-Za-z0-9_-]) that is an object key of its pending_json (the "requests" map; the caller
  /// still checks the parked turn's requests). nullopt when none does; another owner's row is
  /// never found, so it looks exactly like an unknown id. Reads only rows with pending calls (a
  /// partial index).
  result<std::optional<std::string>> find_pending(std::string_view approval_request_id,
                                                  std::optional<std::string_view> owner);
  /// Appends one stream event of response `id`, stamped with the current time (Unix s). The
  /// response row must exist, and (id, sequence_number) must be new: both are errors otherwise.
  result<void> append_event(std::string_view id, std::int64_t sequence_number, std::string_view event_json);
  /// The same for many events in one transaction (all or none).
  result<void> append_events(std::string_view id, const std::vector<std::pair<std::int64_t, std::string>>& events);
  /// Events of response `id` with sequence_number > after, ascending, at most `limit` of them,
  /// as (sequence_number, event_json). Empty when there are none (or no such response).
  result<std::vector<std::pair<std::int64_t, std::string>>> events_after(std::string_view id, std::int64_t after,
                                                                         std::size_t limit);
  /// Deletes every event, of any response, whose own created_at < before_unix_s (retention;
  /// the rows of `responses` stay); returns how many were deleted.
  result<std::int64_t> purge_events_before(std::int64_t before_unix_s);
  /// Bytes stored (texts of the rows plus their events, as UTF-8 bytes): in all, and of the rows
  /// of `owner` in `session`. Reads only the covering index.
  struct usage {
    std::int64_t total = 0;
    std::int64_t session = 0;
  };
  result<usage> bytes_used(std::string_view owner, std::string_view session);
  /// Deletes the finished rows (status neither "queued" nor "in_progress") last updated before
  /// `before_unix_s`, and their events; returns how many rows.
  result<std::int64_t> remove_finished_before(std::int64_t before_unix_s);
  /// Ids of the rows with status "queued" or "in_progress", oldest first (created_at, then id).
  /// After a restart nothing runs them: the caller decides what they become.
  result<std::vector<std::string>> unfinished_ids();

 private:
  database& db_;
};

}  // namespace warden::store
