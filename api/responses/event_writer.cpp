#include "api/responses/event_writer.h"

#include <spdlog/spdlog.h>

#include "common/sse.h"

namespace warden::api::responses {

namespace asio = boost::asio;

asio::awaitable<bool> event_writer::open() {
  if (st_.channel || !st_.req.stream || st_.started) co_return true;
  if (!co_await out_.begin_stream()) co_return false;
  st_.started = true;
  const bool ok = co_await write(b_.start());
  co_return ok;
}

asio::awaitable<bool> event_writer::write(std::vector<json> events) {
  if (st_.channel) {
    if (publish(std::move(events))) co_await persist();
    co_return true;
  }
  if (!st_.req.stream || events.empty()) co_return true;
  std::string bytes;
  for (const auto& e : events) bytes += sse(e);
  const bool ok = co_await out_.write_stream(std::move(bytes));
  co_return ok;
}

bool event_writer::publish(std::vector<json> events) {
  bool structural = false;
  for (const auto& e : events) {
    const std::string type = e.value("type", std::string());
    structural = structural || type.size() < 6 || type.compare(type.size() - 6, 6, ".delta") != 0;
  }
  const auto now = std::chrono::steady_clock::now();
  const bool refresh = structural || now - last_snapshot_ >= std::chrono::milliseconds(k_snapshot_ms);
  if (refresh) last_snapshot_ = now;
  st_.channel->publish(std::move(events), refresh ? b_.response() : json());
  return structural;
}

asio::awaitable<void> event_writer::persist() {
  if (!deps_.store) co_return;
  std::vector<std::pair<std::int64_t, std::string>> rows;
  for (const auto& e : st_.channel->read_from(st_.persisted).events) {
    rows.emplace_back(e.value("sequence_number", std::int64_t{0}), dump_safe(e));
  }
  if (rows.empty()) co_return;
  st_.persisted += static_cast<std::int64_t>(rows.size());
  store::response_store* db = deps_.store;
  const std::string id = st_.id;
  auto put = [db, id, rows = std::move(rows)]() { return db->append_events(id, rows); };  // named: see blocking_pool.h
  auto done = co_await off_thread(deps_.pool, put);
  if (!done) spdlog::error("response {}: events could not be stored: {}", id, done.error().message);
  co_return;
}

asio::awaitable<bool> event_writer::ping() {
  if (st_.channel || !st_.req.stream) co_return true;
  if (!co_await open()) co_return false;
  const bool ok = co_await out_.write_stream(sse::comment_frame("ping"));
  co_return ok;
}

}  // namespace warden::api::responses
