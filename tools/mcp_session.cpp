#include "tools/mcp_session.h"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <algorithm>
#include <thread>

#include "tools/mcp_protocol.h"

namespace warden::tools::mcp {

namespace asio = boost::asio;

// The wake-up is posted under the lock: the waiter clears wake_ under it too, so a post never
// reaches an executor whose waiter (and io_context) may already be gone, and the posted handler
// holds the timer only weakly (the waiter's frame owns it).
void mailbox::push(json msg) {
  std::lock_guard lk(mu_);
  queue_.push_back(std::move(msg));
  if (wake_) wake_();
}

void mailbox::close(std::string why) {
  std::lock_guard lk(mu_);
  if (!closed_) closed_ = std::move(why);
  if (wake_) wake_();
}

namespace {
result<std::optional<json>> closed_error(const std::string& why) { return make_error(errc::upstream_unavailable, why); }
result<std::optional<json>> got(json m) { return std::optional<json>(std::move(m)); }
result<std::optional<json>> nothing_yet() { return std::optional<json>(); }
}  // namespace

asio::awaitable<result<std::optional<json>>> mailbox::next(std::chrono::milliseconds slice) {
  auto ex = co_await asio::this_coro::executor;
  auto timer = std::make_shared<asio::steady_timer>(ex, slice);
  {
    std::lock_guard lk(mu_);
    if (!queue_.empty()) {
      json m = std::move(queue_.front());
      queue_.pop_front();
      co_return got(std::move(m));
    }
    if (closed_) co_return closed_error(*closed_);
    std::weak_ptr<asio::steady_timer> weak = timer;
    wake_ = [weak, ex] {
      asio::post(ex, [weak] {
        if (auto t = weak.lock()) t->cancel();
      });
    };
  }
  boost::system::error_code ec;
  co_await timer->async_wait(asio::redirect_error(asio::use_awaitable, ec));
  std::lock_guard lk(mu_);
  wake_ = nullptr;
  if (!queue_.empty()) {
    json m = std::move(queue_.front());
    queue_.pop_front();
    co_return got(std::move(m));
  }
  if (closed_) co_return closed_error(*closed_);
  co_return nothing_yet();
}

session::session(std::unique_ptr<transport> t) : transport_(std::move(t)) {}

session::~session() {
  if (!in_transport_thread) {
    transport_->close();
    return;
  }
  // The last owner let go on one of the transport's own threads (a callback's lock of the
  // session): close and free the transport elsewhere, once that thread is done with it.
  std::thread([t = std::move(transport_)]() mutable {
    t->close();
    t.reset();
  }).detach();
}

void session::close() {
  transport_->close();
  closed("the MCP connection was closed");
}

std::string session::death() const {
  std::lock_guard lk(mu_);
  return death_;
}
std::string session::protocol_version() const {
  std::lock_guard lk(mu_);
  return version_;
}
json session::server_info() const {
  std::lock_guard lk(mu_);
  return server_info_;
}
json session::server_capabilities() const {
  std::lock_guard lk(mu_);
  return capabilities_;
}
void session::on_tools_changed(std::function<void()> f) {
  std::lock_guard lk(mu_);
  tools_changed_ = std::move(f);
}

void session::closed(std::string why) {
  std::map<std::int64_t, std::shared_ptr<mailbox>> open;
  {
    std::lock_guard lk(mu_);
    alive_ = false;
    if (death_.empty()) death_ = why;
    open.swap(pending_);
    calls_.clear();
  }
  for (auto& [id, box] : open) box->close(why);
}

result<std::pair<std::int64_t, std::shared_ptr<mailbox>>> session::start_request(std::string_view method, json params,
                                                                                 bool progress) {
  auto box = std::make_shared<mailbox>();
  std::int64_t id = 0;
  {
    std::lock_guard lk(mu_);
    if (!alive_ && method != "initialize") {
      return make_error(errc::upstream_unavailable, death_.empty() ? "the MCP server is not connected" : death_);
    }
    id = next_id_++;
    pending_[id] = box;
    if (progress) calls_.push_back(id);
  }
  if (progress) {
    if (!params.is_object()) params = json::object();
    params["_meta"]["progressToken"] = id;
  }
  if (auto sent = transport_->send(make_request(id, method, std::move(params))); !sent) {
    forget(id);
    return sent.error();
  }
  return std::make_pair(id, box);
}

void session::forget(std::int64_t id) {
  std::lock_guard lk(mu_);
  pending_.erase(id);
  std::erase(calls_, id);
}

result<void> session::notify(std::string_view method, json params) { return transport_->send(make_notification(method, std::move(params))); }
result<void> session::respond(const json& id, json r) { return transport_->send(make_response(id, std::move(r))); }
result<void> session::respond_error(const json& id, int code, std::string_view message) {
  return transport_->send(make_error_response(id, code, message));
}

namespace {

result<json> answer_of(const incoming& in) {
  if (in.kind == message_kind::error_response) {
    return make_error(errc::upstream_error, "the MCP server answered with error " + std::to_string(in.error_code) + ": " + in.error_message);
  }
  return in.result;
}

json cancelled_params(std::int64_t id, const char* why) { return json{{"requestId", id}, {"reason", why}}; }

}  // namespace

asio::awaitable<result<json>> session::request(std::string_view method, json params, std::chrono::milliseconds timeout) {
  auto started = start_request(method, std::move(params), false);
  if (!started) co_return started.error();
  const auto [id, box] = *started;
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      forget(id);
      (void)notify("notifications/cancelled", cancelled_params(id, "timed out"));
      co_return make_error(errc::upstream_unavailable, "the MCP server did not answer " + std::string(method) + " within " +
                                                           std::to_string(timeout.count() / 1000) + " s");
    }
    auto m = co_await box->next(left);
    if (!m) co_return m.error();
    if (!*m) continue;
    const incoming in = classify(**m);
    if (in.kind == message_kind::response || in.kind == message_kind::error_response) co_return answer_of(in);
  }
}

namespace {
json initialize_answer_fields(const json& r, const char* key) {
  auto it = r.find(key);
  return it != r.end() && it->is_object() ? *it : json::object();
}
}  // namespace

asio::awaitable<result<void>> session::initialize(bool elicitation, std::chrono::milliseconds timeout) {
  std::weak_ptr<session> weak = weak_from_this();
  auto on_message = [weak](json m) {
    auto s = weak.lock();
    try {
      if (s) s->dispatch(std::move(m));
    } catch (const std::exception& e) {  // a transport thread must never end the process
      spdlog::warn("MCP: ignored a message warden could not read: {}", e.what());
    }
  };
  auto on_closed = [weak](std::string why) {
    auto s = weak.lock();
    if (s) s->closed(std::move(why));
  };
  alive_ = true;
  transport_->start(on_message, on_closed);
  auto r = co_await request("initialize", initialize_params(elicitation), timeout);
  if (!r) co_return r.error();
  auto v = negotiated_version(*r);
  if (!v) co_return v.error();
  {
    std::lock_guard lk(mu_);
    version_ = *v;
    server_info_ = initialize_answer_fields(*r, "serverInfo");
    capabilities_ = initialize_answer_fields(*r, "capabilities");
  }
  transport_->set_protocol_version(*v);
  if (auto sent = notify("notifications/initialized"); !sent) co_return sent.error();
  co_return result<void>{};
}

void session::dispatch(json msg) {
  const incoming in = classify(msg);
  switch (in.kind) {
    case message_kind::response:
    case message_kind::error_response: {
      std::shared_ptr<mailbox> box;
      {
        std::lock_guard lk(mu_);
        if (!in.id.is_number_integer()) return;
        auto it = pending_.find(in.id.get<std::int64_t>());
        if (it == pending_.end()) return;  // forgotten (timed out, cancelled)
        box = it->second;
        pending_.erase(it);
        std::erase(calls_, in.id.get<std::int64_t>());
      }
      box->push(std::move(msg));
      return;
    }
    case message_kind::notification: {
      if (in.method == "notifications/progress") {
        const json token = in.params.value("progressToken", json());
        std::shared_ptr<mailbox> box;
        {
          std::lock_guard lk(mu_);
          if (token.is_number_integer()) {
            auto it = pending_.find(token.get<std::int64_t>());
            if (it != pending_.end()) box = it->second;
          }
        }
        if (box) box->push(std::move(msg));
      } else if (in.method == "notifications/tools/list_changed") {
        std::function<void()> f;
        {
          std::lock_guard lk(mu_);
          f = tools_changed_;
        }
        if (f) f();
      }
      return;
    }
    case message_kind::request: {
      if (in.method == "ping") {
        (void)respond(in.id, json::object());
        return;
      }
      if (in.method == "elicitation/create") {
        std::shared_ptr<mailbox> box;
        {
          std::lock_guard lk(mu_);
          // The call it belongs to: the one whose HTTP response stream carried it, or the only
          // call in flight; with several and no way to tell (stdio), nobody is guessed at.
          const auto related = msg.find(k_related_request);
          if (related != msg.end() && related->is_number_integer()) {
            auto it = pending_.find(related->get<std::int64_t>());
            if (it != pending_.end()) box = it->second;
          } else if (calls_.size() == 1) {
            box = pending_[calls_.front()];
          }
        }
        if (box) {
          box->push(std::move(msg));
        } else {
          (void)respond(in.id, json{{"action", "decline"}});  // no call in flight to ask for
        }
        return;
      }
      (void)respond_error(in.id, k_method_not_found, "warden does not offer " + in.method);
      return;
    }
    case message_kind::invalid:
      spdlog::debug("MCP: ignored a message that is not JSON-RPC 2.0: {}", msg.dump().substr(0, 200));
      return;
  }
}

}  // namespace warden::tools::mcp
