#include "api/responses/stored_routes.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <limits>

#include "api/responses/background_runs.h"
#include "api/responses/run_state.h"
#include "api/wire/errors.h"
#include "common/json_fields.h"
#include "common/query.h"

namespace warden::api::responses {

namespace asio = boost::asio;

result<page_request> parse_page(std::string_view query) {
  auto l = query_param(query, "limit");
  auto o = query_param(query, "order");
  auto a = query_param(query, "after");
  if (!l || !o || !a) return field_invalid("malformed query string", "query");
  page_request p;
  if (*l) {
    char* end = nullptr;
    const long v = std::strtol((*l)->c_str(), &end, 10);
    if ((*l)->empty() || *end || v < 1 || v > 100) return field_invalid("'limit' must be 1 to 100", "limit");
    p.limit = static_cast<std::size_t>(v);
  }
  if (*o && **o != "asc" && **o != "desc") return field_invalid("'order' must be asc or desc", "order");
  p.asc = *o && **o == "asc";
  if (*a) p.after = **a;
  return p;
}

json page_items(const json& stored, const page_request& p) {
  json items = stored.is_array() ? stored : json::array();
  if (!p.asc) std::reverse(items.begin(), items.end());
  std::size_t start = 0;
  if (!p.after.empty()) {
    while (start < items.size() && items[start].value("id", std::string()) != p.after) ++start;
    start = start < items.size() ? start + 1 : items.size();
  }
  json data = json::array();
  for (std::size_t i = start; i < items.size() && data.size() < p.limit; ++i) data.push_back(items[i]);
  const bool more = start + data.size() < items.size();
  return {{"object", "list"}, {"data", data}, {"has_more", more},
          {"first_id", data.empty() ? json() : data.front()["id"]}, {"last_id", data.empty() ? json() : data.back()["id"]}};
}

namespace {

/// "/v1/responses/{id}[/rest]" → {id, rest}.
std::pair<std::string, std::string> split_path(const std::string& path) {
  const std::string prefix = "/v1/responses/";
  std::string tail = path.substr(prefix.size());
  const auto slash = tail.find('/');
  if (slash == std::string::npos) return {tail, ""};
  return {tail.substr(0, slash), tail.substr(slash + 1)};
}

/// The row `id`, when the caller may see it; otherwise the 404 (sent) and nullopt: another key's
/// response is answered exactly like an unknown one.
asio::awaitable<std::optional<store::stored_response>> fetch(const std::string& id, const principal& caller,
                                                             response_writer& out, responses_deps& deps) {
  const error not_found = make_error(errc::not_found, "Response with id '" + id.substr(0, 200) + "' not found.", "", "not_found");
  if (!deps.store) {
    co_await wire::send_error(out, responses_surface(), not_found);
    co_return std::nullopt;
  }
  store::response_store* db = deps.store;
  auto get = [db, id]() { return db->get(id); };  // named: see blocking_pool.h
  auto got = co_await off_thread(deps.pool, get);
  if (!got) {
    co_await wire::send_error(out, responses_surface(), make_error(errc::internal, "the response store could not be read"));
    co_return std::nullopt;
  }
  if (*got && !caller.may_access((*got)->owner)) got->reset();
  if (!*got) co_await wire::send_error(out, responses_surface(), not_found);
  co_return std::move(*got);
}

asio::awaitable<void> send_input_items(const http_request& req, const store::stored_response& row, response_writer& out) {
  auto page = parse_page(req.query);
  if (!page) {
    co_await wire::send_error(out, responses_surface(), page.error());
    co_return;
  }
  json items = json::parse(row.input_items_json, nullptr, false);
  std::string body = dump_safe(page_items(items, *page));
  co_await out.send(200, "application/json", std::move(body));
}

asio::awaitable<void> delete_row(const std::string& id, response_writer& out, responses_deps& deps) {
  if (deps.runs && deps.runs->find(id)) {
    co_await wire::send_error(out, responses_surface(), field_invalid("response '" + id + "' is still running; cancel it first (POST /v1/responses/" + id +
                                               "/cancel)", "response_id"));
    co_return;
  }
  store::response_store* db = deps.store;
  auto del = [db, id]() { return db->remove(id); };  // named: see blocking_pool.h
  auto gone = co_await off_thread(deps.pool, del);
  if (!gone) {
    co_await wire::send_error(out, responses_surface(), make_error(errc::internal, "the response store could not be written"));
    co_return;
  }
  json body = {{"id", id}, {"object", "response.deleted"}, {"deleted", true}};
  co_await out.send(200, "application/json", dump_safe(body));
}

/// GET …?stream=true&starting_after=N: a live run is followed; a finished one replays its log.
asio::awaitable<void> replay(const http_request& req, const store::stored_response& row, response_writer& out,
                             responses_deps& deps) {
  auto after_text = query_param(req.query, "starting_after");
  std::int64_t after = -1;  // absent: from the first event
  if (!after_text) {
    co_await wire::send_error(out, responses_surface(), field_invalid("malformed query string", "starting_after"));
    co_return;
  }
  if (*after_text) {
    const std::string& t = **after_text;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), after);
    if (t.empty() || ec != std::errc() || end != t.data() + t.size() || after < 0) {
      co_await wire::send_error(out, responses_surface(), field_invalid("'starting_after' must be a sequence number (an integer ≥ 0)", "starting_after"));
      co_return;
    }
  }
  if (auto ch = deps.runs ? deps.runs->find(row.id) : nullptr) {
    co_await follow(ch, after, out, deps.ping_interval);
    co_return;
  }
  if (!row.background) {
    co_await wire::send_error(out, responses_surface(), field_invalid("only a response created with background: true can be streamed again", "stream"));
    co_return;
  }
  store::response_store* db = deps.store;
  const std::string id = row.id;
  auto read = [db, id, after]() { return db->events_after(id, after, 1000000); };  // named: see blocking_pool.h
  auto events = co_await off_thread(deps.pool, read);
  if (!events) {
    co_await wire::send_error(out, responses_surface(), make_error(errc::internal, "the response store could not be read"));
    co_return;
  }
  if (!co_await out.begin_stream()) co_return;
  std::string bytes;
  for (const auto& [seq, text] : *events) bytes += "event: " + json::parse(text, nullptr, false).value("type", std::string("message")) + "\ndata: " + text + "\n\n";
  const bool ok = co_await out.write_stream(std::move(bytes));
  if (ok) co_await out.end_stream();
  co_return;
}

/// POST …/cancel: a live background run is stopped (status cancelled); a finished one is
/// returned as it is; a foreground response cannot be cancelled.
asio::awaitable<void> cancel_run(const store::stored_response& row, response_writer& out, responses_deps& deps) {
  if (!row.background) {
    co_await wire::send_error(out, responses_surface(), field_invalid("Only background responses can be cancelled.", "response_id"));
    co_return;
  }
  auto ch = deps.runs ? deps.runs->find(row.id) : nullptr;
  if (!ch) {
    co_await out.send(200, "application/json", row.response_json);
    co_return;
  }
  ch->mark_cancelled();
  // Only the run's own loop: another key's loop may use the same cancel_id.
  if (deps.tools) {
    deps.tools->cancels.cancel(agent::cancel_key::cancel_id, ch->cancel_id, cancel_reason::by_client,
                               std::string_view(row.owner));
  }
  // The run stops within milliseconds (the cancel aborts the upstream and denies approvals);
  // wait up to 5 s for its last object so the answer says "cancelled".
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!ch->done() && std::chrono::steady_clock::now() < deadline) {
    co_await ch->wait(std::numeric_limits<std::int64_t>::max(), std::chrono::milliseconds(100));
  }
  co_await out.send(200, "application/json", dump_safe(ch->snapshot()));
  co_return;
}

}  // namespace

asio::awaitable<void> handle_item(const http_request& req, response_writer& out, responses_deps& deps) {
  const auto [id, rest] = split_path(req.path);
  const bool known = (rest.empty() && req.method != "POST") || (rest == "input_items" && req.method == "GET") ||
                     (rest == "cancel" && req.method == "POST");
  if (id.empty() || !known) {
    co_await wire::send_error(out, responses_surface(), make_error(errc::not_found, "no route for " + req.method + " " + req.path.substr(0, 200), "", "unknown_route"));
    co_return;
  }
  auto row = co_await fetch(id, req.caller, out, deps);
  if (!row) co_return;
  if (req.method == "DELETE") {
    co_await delete_row(id, out, deps);
    co_return;
  }
  if (rest == "input_items") {
    co_await send_input_items(req, *row, out);
    co_return;
  }
  if (rest == "cancel") {
    co_await cancel_run(*row, out, deps);
    co_return;
  }
  auto stream = query_param(req.query, "stream");
  if (stream && *stream && **stream == "true") {
    co_await replay(req, *row, out, deps);
    co_return;
  }
  auto ch = deps.runs ? deps.runs->find(id) : nullptr;
  // A named local, not a ?: inside the co_await: GCC 12 mishandles conditional temporaries there.
  std::string body = row->response_json;
  if (ch) body = dump_safe(ch->snapshot());
  co_await out.send(200, "application/json", std::move(body));
  co_return;
}

}  // namespace warden::api::responses
