#include "store/call_chain.h"

#include <iterator>
#include <optional>
#include <unordered_map>
#include <string_view>
#include <vector>

#include "common/json_util.h"
#include "store/sha256.h"

namespace warden::store::chain {
namespace {

/// How a column enters the event content.
enum class kind {
  text,              ///< a JSON string; {"sha256": hex} when not valid UTF-8
  integer,           ///< a JSON number
  optional_integer,  ///< a JSON number, or null
  digest,            ///< always {"sha256": hex of the stored bytes}
  text_if_set,       ///< as text, but left out of the content when empty
};

struct column {
  const char* name;
  kind k;
};

/// Every call_records column but id and row_hash, in the order of the SELECTs (call_records.cpp
/// binds ?1..?25 in this order). A new column of the table belongs here.
constexpr column k_columns[] = {
    {"call_id", kind::text},
    {"session_id", kind::text},
    {"tool", kind::text},
    {"arguments", kind::digest},
    {"decision", kind::text},
    {"decided_by", kind::text},
    {"allowed", kind::integer},
    {"approval_id", kind::text},
    {"reason", kind::text},
    {"started_unix_ms", kind::integer},
    {"finished_unix_ms", kind::integer},
    {"duration_ms", kind::integer},
    {"exit_status", kind::optional_integer},
    {"is_error", kind::integer},
    {"output_bytes", kind::integer},
    {"surface", kind::text},
    {"mode", kind::text},
    {"risk_level", kind::text},
    {"risk_reasons", kind::text},
    {"rule_id", kind::text},
    {"approval_latency_ms", kind::optional_integer},
    {"arguments_sha256", kind::text},
    {"status", kind::text},
    {"notes", kind::text},
    {"owner", kind::text_if_set},
};
constexpr int k_content_columns = static_cast<int>(std::size(k_columns));

const std::string k_genesis(64, '0');

json digest_of(const std::string& bytes) { return json{{"sha256", sha256_hex(bytes)}}; }

json value_of(sqlite3_stmt* s, int i, kind k) {
  switch (k) {
    case kind::text:
    case kind::text_if_set: {
      std::string v = column_string(s, i);
      return is_valid_utf8(v) ? json(std::move(v)) : digest_of(v);
    }
    case kind::integer: return json(static_cast<std::int64_t>(sqlite3_column_int64(s, i)));
    case kind::optional_integer:
      return sqlite3_column_type(s, i) == SQLITE_NULL ? json(nullptr)
                                                      : json(static_cast<std::int64_t>(sqlite3_column_int64(s, i)));
    case kind::digest: return digest_of(column_string(s, i));
  }
  return json(nullptr);
}

std::string link(const std::string& previous, const std::string& content) {
  return sha256_hex(previous + "\n" + content);
}

/// The hash of the last event, or the genesis value when there is none.
result<std::string> last_hash(connection& c) {
  auto st = c.prepare("SELECT hash FROM call_events ORDER BY seq DESC LIMIT 1");
  if (!st) return st.error();
  const int rc = sqlite3_step(st->get());
  if (rc == SQLITE_DONE) return k_genesis;
  if (rc != SQLITE_ROW) return c.fail("reading the last audit event");
  return column_string(st->get(), 0);
}

const std::string& select_row() {
  static const std::string sql = "SELECT id, " + columns() + " FROM call_records WHERE id = ?1";
  return sql;
}

// ---------------------------------------------------------------------------------------------
// verify()

/// A break found by verify(): sets the report's verdict and returns true.
bool broken(chain_report& r, std::int64_t row, std::string problem) {
  r.ok = false;
  r.broken_row = row;
  r.problem = std::move(problem);
  return true;
}

/// The keys whose values differ between two contents, in words ("arguments, reason").
std::string differing_fields(const std::string& now, const std::string& chained) {
  const auto a = parse_json(now), b = parse_json(chained);
  if (!a || !b || !a->is_object() || !b->is_object()) return "the chained content (unreadable)";
  std::string out;
  auto note = [&out](const std::string& key) { out += (out.empty() ? "" : ", ") + key; };
  for (const auto& [key, value] : a->items()) {
    if (!b->contains(key) || (*b)[key] != value) note(key);
  }
  for (const auto& [key, value] : b->items()) {
    if (!a->contains(key)) note(key);
  }
  return out.empty() ? "its content" : out;
}

/// The status an event's content gives its row ("" when it has none).
std::string status_in(const std::string& content) {
  const auto j = parse_json(content);
  if (!j || !j->is_object()) return {};
  const auto it = j->find("status");
  return it != j->end() && it->is_string() ? it->get<std::string>() : std::string();
}

/// 1. The events in seq order: contiguous from 1, each hash following from the previous one,
/// and each row's statuses moving forward only (a chain rewritten with recomputed hashes still
/// cannot turn a call that ran into one that did not).
result<bool> walk_events(connection& c, chain_report& r) {
  auto st = c.prepare("SELECT seq, row_id, content, hash FROM call_events ORDER BY seq");
  if (!st) return st.error();
  std::unordered_map<std::int64_t, std::string> status_of;
  std::string previous = k_genesis;
  int rc = SQLITE_OK;
  while ((rc = sqlite3_step(st->get())) == SQLITE_ROW) {
    const std::int64_t seq = sqlite3_column_int64(st->get(), 0), row = sqlite3_column_int64(st->get(), 1);
    const std::string content = column_string(st->get(), 2), hash = column_string(st->get(), 3);
    if (seq != r.events + 1) {
      return broken(r, row, "the chain jumps from event " + std::to_string(r.events) + " to event " +
                                std::to_string(seq) + " (events were removed)");
    }
    if (link(previous, content) != hash) {
      return broken(r, row, "event " + std::to_string(seq) +
                                " does not follow from the event before it and its content (an event was edited)");
    }
    std::string status = status_in(content);
    auto [was, fresh] = status_of.try_emplace(row, status);
    if (!fresh && !moves_forward(was->second, status)) {
      return broken(r, row, "event " + std::to_string(seq) + " moves the row from \"" + was->second + "\" back to \"" +
                                status + "\" (rows move forward only)");
    }
    was->second = std::move(status);
    previous = hash;
    ++r.events;
  }
  if (rc != SQLITE_DONE) return c.fail("reading the audit events");
  if (r.events > 0) r.head = previous;
  return false;
}

/// 2. Every event's row still exists, and is not older than the chain.
result<bool> find_orphans(connection& c, chain_report& r, std::int64_t first_row) {
  auto st = c.prepare(
      "SELECT e.row_id, e.seq, c.id FROM call_events e LEFT JOIN call_records c ON c.id = e.row_id"
      " WHERE c.id IS NULL OR e.row_id < ?1 ORDER BY e.seq LIMIT 1");
  if (!st) return st.error();
  if (sqlite3_bind_int64(st->get(), 1, first_row) != SQLITE_OK) return c.fail("binding the audit query");
  const int rc = sqlite3_step(st->get());
  if (rc == SQLITE_DONE) return false;
  if (rc != SQLITE_ROW) return c.fail("reading the audit events");
  const std::int64_t row = sqlite3_column_int64(st->get(), 0), seq = sqlite3_column_int64(st->get(), 1);
  if (sqlite3_column_type(st->get(), 2) == SQLITE_NULL) {
    return broken(r, row, "the row was deleted (its event " + std::to_string(seq) + " remains)");
  }
  return broken(r, row, "the row has chained events but lies before the chain's start (call_chain_start was edited)");
}

/// The last event of row `id`: its seq, content and hash; nullopt when it has none.
struct last_event {
  std::int64_t seq;
  std::string content, hash;
};
result<std::optional<last_event>> last_event_of(connection& c, std::int64_t id) {
  auto st = c.prepare("SELECT seq, content, hash FROM call_events WHERE row_id = ?1 ORDER BY seq DESC LIMIT 1");
  if (!st) return st.error();
  if (sqlite3_bind_int64(st->get(), 1, id) != SQLITE_OK) return c.fail("binding the audit query");
  const int rc = sqlite3_step(st->get());
  if (rc == SQLITE_DONE) return std::optional<last_event>();
  if (rc != SQLITE_ROW) return c.fail("reading the audit events");
  return std::optional<last_event>(
      last_event{sqlite3_column_int64(st->get(), 0), column_string(st->get(), 1), column_string(st->get(), 2)});
}

/// One row of the chain (the statement stands on it) against its last event.
result<bool> check_row(connection& c, sqlite3_stmt* row, chain_report& r) {
  const std::int64_t id = sqlite3_column_int64(row, 0);
  auto last = last_event_of(c, id);
  if (!last) return last.error();
  if (!*last) return broken(r, id, "the row has no chained event (it was added outside warden)");
  const std::string now = content_of(row);
  const std::string where = " differs from its last chained event (event " + std::to_string((*last)->seq) + ")";
  if (now != (*last)->content) return broken(r, id, differing_fields(now, (*last)->content) + where);
  if (column_string(row, column_count()) != (*last)->hash) return broken(r, id, "row_hash" + where);
  return false;
}

/// 3. Every row since the chain began against its last event.
result<bool> check_rows(connection& c, chain_report& r, std::int64_t first_row) {
  auto st = c.prepare("SELECT id, " + columns() + " FROM call_records ORDER BY id");
  if (!st) return st.error();
  int rc = SQLITE_OK;
  while ((rc = sqlite3_step(st->get())) == SQLITE_ROW) {
    if (sqlite3_column_int64(st->get(), 0) < first_row) {
      ++r.legacy_rows;
      continue;
    }
    ++r.rows;
    auto bad = check_row(c, st->get(), r);
    if (!bad || *bad) return bad;
  }
  if (rc != SQLITE_DONE) return c.fail("reading call records");
  return false;
}

result<std::int64_t> chain_start(connection& c) {
  auto st = c.prepare("SELECT COALESCE(MIN(first_row_id), 1) FROM call_chain_start");
  if (!st) return st.error();
  if (sqlite3_step(st->get()) != SQLITE_ROW) return c.fail("reading call_chain_start");
  return static_cast<std::int64_t>(sqlite3_column_int64(st->get(), 0));
}

}  // namespace

bool moves_forward(std::string_view from, std::string_view to) {
  return from.empty() || from == "pending" || from == to;
}

const std::string& columns() {
  static const std::string all = [] {
    std::string s;
    for (const auto& col : k_columns) s += std::string(s.empty() ? "" : ", ") + col.name;
    return s + ", row_hash";
  }();
  return all;
}

int column_count() { return k_content_columns + 1; }

std::string content_of(sqlite3_stmt* s) {
  json j = json::object();
  j["id"] = static_cast<std::int64_t>(sqlite3_column_int64(s, 0));
  for (int i = 0; i < k_content_columns; ++i) {
    // owner "" (the single user, and every row before named keys) is left out, so the content
    // of such a row is what it was before the column existed
    if (k_columns[i].k == kind::text_if_set && sqlite3_column_bytes(s, i + 1) == 0) continue;
    j[k_columns[i].name] = value_of(s, i + 1, k_columns[i].k);
  }
  return dump_safe(j);
}

result<void> append_event(connection& c, std::int64_t row_id) {
  std::string content;
  {
    auto st = c.prepare(select_row());
    if (!st) return st.error();
    if (sqlite3_bind_int64(st->get(), 1, row_id) != SQLITE_OK) return c.fail("binding the audit query");
    if (sqlite3_step(st->get()) != SQLITE_ROW) return c.fail("reading back call record " + std::to_string(row_id));
    content = content_of(st->get());
  }
  auto previous = last_hash(c);
  if (!previous) return previous.error();
  const std::string hash = link(*previous, content);
  auto ins = c.prepare("INSERT INTO call_events (row_id, content, hash) VALUES (?1, ?2, ?3)");
  if (!ins) return ins.error();
  if (sqlite3_bind_int64(ins->get(), 1, row_id) != SQLITE_OK ||
      sqlite3_bind_text64(ins->get(), 2, content.data(), content.size(), SQLITE_STATIC, SQLITE_UTF8) != SQLITE_OK ||
      sqlite3_bind_text64(ins->get(), 3, hash.data(), hash.size(), SQLITE_STATIC, SQLITE_UTF8) != SQLITE_OK) {
    return c.fail("binding an audit event");
  }
  if (sqlite3_step(ins->get()) != SQLITE_DONE) return c.fail("appending an audit event");
  auto set = c.prepare("UPDATE call_records SET row_hash = ?1 WHERE id = ?2");
  if (!set) return set.error();
  if (sqlite3_bind_text64(set->get(), 1, hash.data(), hash.size(), SQLITE_STATIC, SQLITE_UTF8) != SQLITE_OK ||
      sqlite3_bind_int64(set->get(), 2, row_id) != SQLITE_OK) {
    return c.fail("binding a row hash");
  }
  if (sqlite3_step(set->get()) != SQLITE_DONE) return c.fail("setting a row hash");
  return {};
}

result<chain_report> verify(connection& c) {
  chain_report r;
  auto first_row = chain_start(c);
  if (!first_row) return first_row.error();
  for (auto step : {+[](connection& k, chain_report& rep, std::int64_t) { return walk_events(k, rep); },
                    +[](connection& k, chain_report& rep, std::int64_t f) { return find_orphans(k, rep, f); },
                    +[](connection& k, chain_report& rep, std::int64_t f) { return check_rows(k, rep, f); }}) {
    auto stop = step(c, r, *first_row);
    if (!stop) return stop.error();
    if (*stop) break;
  }
  return r;
}

}  // namespace warden::store::chain
