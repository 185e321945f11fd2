#include "api/responses/background.h"

#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <set>

#include "agent/permission_rules.h"
#include "api/responses/background_runs.h"
#include "api/responses/event_writer.h"
#include "api/responses/response_builder.h"
#include "api/responses/run_paths.h"
#include "api/wire/errors.h"
#include "common/json_fields.h"
#include "common/sse.h"

namespace warden::api::responses {

namespace asio = boost::asio;

void run_channel::wake(std::unique_lock<std::mutex>& lk) {
  std::vector<std::shared_ptr<asio::steady_timer>> woken;
  woken.swap(waiters_);
  lk.unlock();
  for (auto& t : woken) {
    // On the timer's own executor; an expiry in the past also wakes a wait that starts later.
    asio::post(t->get_executor(), [t] { t->expires_at(asio::steady_timer::time_point::min()); });
  }
}

void run_channel::publish(std::vector<json> events, json snapshot) {
  std::unique_lock lk(mu_);
  for (auto& e : events) events_.push_back(std::move(e));
  if (!snapshot.is_null()) snapshot_ = std::move(snapshot);
  wake(lk);
}

void run_channel::finish(json final_object) {
  std::unique_lock lk(mu_);
  snapshot_ = std::move(final_object);
  done_ = true;
  wake(lk);
}

run_channel::read_result run_channel::read_from(std::int64_t from) const {
  std::lock_guard lk(mu_);
  read_result r;
  const auto start = static_cast<std::size_t>(std::max<std::int64_t>(from, 0));
  for (std::size_t i = start; i < events_.size(); ++i) r.events.push_back(events_[i]);
  r.done = done_;
  return r;
}

asio::awaitable<void> run_channel::wait(std::int64_t from, std::chrono::milliseconds max) {
  auto timer = std::make_shared<asio::steady_timer>(co_await asio::this_coro::executor, max);
  {
    std::lock_guard lk(mu_);
    if (done_ || static_cast<std::int64_t>(events_.size()) > from) co_return;
    waiters_.push_back(timer);
  }
  boost::system::error_code ec;
  co_await timer->async_wait(asio::redirect_error(asio::use_awaitable, ec));
  co_return;
}

json run_channel::snapshot() const {
  std::lock_guard lk(mu_);
  return snapshot_;
}

bool run_channel::done() const {
  std::lock_guard lk(mu_);
  return done_;
}

std::vector<json> run_channel::all_events() const {
  std::lock_guard lk(mu_);
  return events_;
}

void run_channel::mark_cancelled() {
  std::lock_guard lk(mu_);
  cancelled_ = true;
}

bool run_channel::cancelled() const {
  std::lock_guard lk(mu_);
  return cancelled_;
}

std::shared_ptr<run_channel> run_registry::start(const std::string& id, std::string owner, std::string session) {
  auto ch = std::make_shared<run_channel>(id);
  ch->owner = std::move(owner);
  ch->session_id = std::move(session);
  std::lock_guard lk(mu_);
  runs_[id] = ch;
  return ch;
}

std::shared_ptr<run_channel> run_registry::find(const std::string& id) const {
  std::lock_guard lk(mu_);
  auto it = runs_.find(id);
  return it == runs_.end() ? nullptr : it->second;
}

void run_registry::end(const std::string& id) {
  std::lock_guard lk(mu_);
  runs_.erase(id);
}

std::size_t run_registry::active() const {
  std::lock_guard lk(mu_);
  return runs_.size();
}

std::size_t run_registry::count(const std::string& owner, const std::string& session) const {
  std::lock_guard lk(mu_);
  std::size_t n = 0;
  for (const auto& [id, ch] : runs_) n += (ch->owner == owner && ch->session_id == session) ? 1 : 0;
  return n;
}

// --- the lifecycle of a background run (background_runs.h) ---

namespace {

/// A response writer that nobody reads (a background run has no connection).
class detached_writer : public response_writer {
 public:
  asio::awaitable<bool> send(int, std::string, std::string) override { co_return true; }
  asio::awaitable<bool> begin_stream() override { co_return true; }
  asio::awaitable<bool> write_stream(std::string) override { co_return true; }
  asio::awaitable<bool> end_stream() override { co_return true; }
  bool started() const override { return false; }
  void add_header(std::string, std::string) override {}
};

/// The background run itself: owned by warden, not by any connection.
asio::awaitable<void> run_background(run_state st, response_builder b, responses_deps& deps) {
  detached_writer out;
  event_writer w(out, b, st, deps);
  std::shared_ptr<run_channel> ch = st.channel;
  co_await run(st, b, w, out, deps);
  if (!ch->done()) ch->finish(b.response());
  deps.runs->end(st.id);
  co_return;
}

}  // namespace

asio::awaitable<void> follow(std::shared_ptr<run_channel> ch, std::int64_t after, response_writer& out,
                             std::chrono::milliseconds ping) {
  if (!co_await out.begin_stream()) co_return;
  std::int64_t next = after + 1;
  for (;;) {
    auto got = ch->read_from(next);
    if (!got.events.empty()) {
      std::string bytes;
      for (const auto& e : got.events) bytes += sse(e);
      next += static_cast<std::int64_t>(got.events.size());
      if (!co_await out.write_stream(std::move(bytes))) co_return;
      continue;
    }
    if (got.done) break;
    co_await ch->wait(next, ping);
    if (ch->read_from(next).events.empty() && !ch->done()) {
      if (!co_await out.write_stream(sse::comment_frame("ping"))) co_return;
    }
  }
  co_await out.end_stream();
  co_return;
}

asio::awaitable<void> start_background(run_state st, response_writer& out, responses_deps& deps) {
  const bool stream = st.req.stream;
  st.req.stream = false;  // the run writes to its log; followers stream it
  if (st.req.loop.cancel_id.empty()) st.req.loop.cancel_id = st.id;
  st.channel = deps.runs->start(st.id, st.req.loop.owner, run_session(st));
  st.channel->cancel_id = st.req.loop.cancel_id;
  st.started = true;
  response_settings settings = settings_of(st, deps);
  settings.background = true;
  response_builder b(st.id, st.created, std::move(settings));
  b.set_approval_items(true);
  st.channel->publish(b.start(), b.response());
  json first = b.response();
  std::shared_ptr<run_channel> ch = st.channel;
  // The row exists before the answer: a GET right after it finds the run.
  store::stored_response row;
  row.id = st.id;
  row.created_at = row.updated_at = st.created;
  row.status = "in_progress";
  row.background = true;
  row.previous_id = st.req.previous_response_id;
  row.owner = st.req.loop.owner;
  row.session = st.req.loop.session_id;
  row.response_json = dump_safe(first);
  row.input_items_json = dump_safe(st.req.input.items);
  store::response_store* db = deps.store;
  auto put = [db, row]() { return db->put(row); };  // named: see blocking_pool.h
  (void)co_await off_thread(deps.pool, put);
  auto ex = co_await asio::this_coro::executor;
  asio::co_spawn(ex, run_background(std::move(st), std::move(b), deps), asio::detached);
  if (stream) {
    co_await follow(ch, -1, out, deps.ping_interval);
    co_return;
  }
  co_await out.send(200, "application/json", dump_safe(first));
  co_return;
}


namespace {
/// The ids of the mcp_approval_request items in a run's response object ("mcpr_<approval id>").
std::set<std::string> approval_request_ids(const json& response) {
  std::set<std::string> ids;
  auto output = response.find("output");
  if (output == response.end() || !output->is_array()) return ids;
  for (const auto& item : *output) {
    if (!item.is_object() || item.value("type", "") != "mcp_approval_request") continue;
    if (auto id = item.find("id"); id != item.end() && id->is_string() && id->get<std::string>().rfind("mcpr_", 0) == 0) {
      ids.insert(id->get<std::string>());
    }
  }
  return ids;
}
}  // namespace

asio::awaitable<bool> answer_live_run(const run_state& st, response_writer& out, responses_deps& deps) {
  if (!deps.runs || !deps.tools || st.req.previous_response_id.empty() || st.req.input.approvals.empty()) co_return false;
  std::shared_ptr<run_channel> ch = deps.runs->find(st.req.previous_response_id);
  // Another key's run: not answered here; load_previous() then finds its row and answers 404.
  if (!ch || !st.caller.may_access(ch->owner)) co_return false;
  std::set<std::string> seen;
  for (const auto& a : st.req.input.approvals) {
    if (seen.insert(a.approval_request_id).second) continue;
    co_await wire::send_error(out, responses_surface(), field_invalid("'approval_request_id' '" + a.approval_request_id.substr(0, 100) + "' is answered twice", "input"));
    co_return true;
  }
  // A request that names another session does not see this run (as for a parked turn: 404).
  if (!st.req.loop.session_id.empty() && st.req.loop.session_id != ch->session_id) {
    co_await wire::send_error(out, responses_surface(),
                              make_error(errc::not_found, "Previous response with id '" + st.req.previous_response_id + "' not found.",
                                         "previous_response_id", "previous_response_not_found"));
    co_return true;
  }
  // Only the questions of THIS run, in THIS run's session (issue 22): each answer must name an
  // mcp_approval_request item of the run that is still waiting, and tickets are looked up and
  // resolved in the run's own session, never the global registry at large. Everything is
  // checked before any answer is applied: an id of another run, or one bad id among good ones,
  // changes nothing.
  const std::optional<std::string_view> session = std::string_view(ch->session_id);
  const std::set<std::string> own = approval_request_ids(ch->snapshot());
  for (const auto& a : st.req.input.approvals) {
    const std::string& rid = a.approval_request_id;
    if (own.count(rid) && deps.tools->approvals.find(rid.substr(5), session)) continue;
    co_await wire::send_error(out, responses_surface(),
                              field_invalid("'approval_request_id' '" + rid.substr(0, 100) + "' is not waiting in response '" +
                                                st.req.previous_response_id + "'",
                                            "input"));
    co_return true;
  }
  for (const auto& a : st.req.input.approvals) {
    (void)deps.tools->approvals.resolve(a.approval_request_id.substr(5),
                                        a.approve ? agent::approval_decision::allow : agent::approval_decision::deny, session);
  }
  co_await out.send(200, "application/json", dump_safe(ch->snapshot()));
  co_return true;
}

void fail_unfinished_runs(store::response_store& store) {
  auto ids = store.unfinished_ids();
  if (!ids) {
    spdlog::error("responses: unfinished runs could not be listed: {}", ids.error().message);
    return;
  }
  for (const auto& id : *ids) {
    auto row = store.get(id);
    if (!row || !*row) continue;
    store::stored_response r = **row;
    json obj = json::parse(r.response_json, nullptr, false);
    if (obj.is_object()) {
      obj["status"] = "failed";
      obj["error"] = {{"code", "server_error"}, {"message", "warden restarted before the run finished"}};
    }
    r.status = "failed";
    r.response_json = dump_safe(obj);
    if (auto put = store.put(r); !put) spdlog::error("responses: run {} could not be marked failed: {}", id, put.error().message);
    // The stored log ends the way the run did, so a replay is not left hanging.
    auto events = store.events_after(id, -1, 1000000);
    const std::int64_t next = events && !events->empty() ? events->back().first + 1 : 0;
    json ev = {{"type", "response.failed"}, {"sequence_number", next}, {"response", obj}};
    (void)store.append_event(id, next, dump_safe(ev));
  }
  if (!ids->empty()) spdlog::warn("responses: {} background run(s) ended by the restart were marked failed", ids->size());
}


}  // namespace warden::api::responses
