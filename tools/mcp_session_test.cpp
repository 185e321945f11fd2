// mcp_session (mcp_session.h) over a scripted transport: responses matched to requests, progress
// and elicitation routed to the newest call, ping answered, timeouts cancel, a closed connection
// ends every waiter.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/detached.hpp>
#include <functional>
#include <mutex>
#include <thread>

#include "tools/mcp_protocol.h"
#include "tools/mcp_session.h"

namespace warden::tools::mcp {
namespace {

namespace asio = boost::asio;

/// A server in the test: `script` answers each message the client sends (on a thread of its
/// own, as a real transport's reader would), and `sent` keeps what the client sent.
class scripted final : public transport {
 public:
  using script_fn = std::function<std::vector<json>(const json&)>;
  explicit scripted(script_fn s) : script_(std::move(s)) {}
  ~scripted() override { close(); }
  void start(message_fn m, closed_fn c) override {
    on_message_ = std::move(m);
    on_closed_ = std::move(c);
  }
  result<void> send(const json& msg) override {
    {
      std::lock_guard lk(mu_);
      sent_.push_back(msg);
    }
    auto replies = script_(msg);
    if (!replies.empty()) {
      threads_.emplace_back([this, replies] {
        in_transport_thread = true;  // as a real transport's reader thread
        for (const auto& r : replies) {
          if (r.is_string() && r == "close") {
            on_closed_("the test closed it");
          } else {
            on_message_(r);
          }
        }
      });
    }
    return {};
  }
  void close() override {
    for (auto& t : threads_) {
      if (t.joinable() && t.get_id() != std::this_thread::get_id()) t.join();
    }
    threads_.clear();
  }
  std::vector<json> sent() {
    std::lock_guard lk(mu_);
    return sent_;
  }
  void deliver(json m) { on_message_(std::move(m)); }

 private:
  script_fn script_;
  message_fn on_message_;
  closed_fn on_closed_;
  std::mutex mu_;
  std::vector<json> sent_;
  std::vector<std::thread> threads_;
};

json init_result(const char* version) {
  return {{"protocolVersion", version}, {"capabilities", {{"tools", json::object()}}}, {"serverInfo", {{"name", "t"}}}};
}

/// Answers initialize with `version` and everything else per `more`.
scripted::script_fn server(const char* version, scripted::script_fn more = nullptr) {
  return [version, more](const json& m) -> std::vector<json> {
    if (m.value("method", "") == "initialize") return {make_response(m["id"], init_result(version))};
    if (more) return more(m);
    return {};
  };
}

template <class F>
auto run(F f) {
  using value = typename decltype(f())::value_type;
  std::optional<value> out;
  asio::io_context ioc;
  auto body = [&]() -> asio::awaitable<void> { out.emplace(co_await f()); };
  asio::co_spawn(ioc, body, asio::detached);
  ioc.run();
  return std::move(*out);
}

TEST(McpSession, InitializeNegotiatesAndAnnouncesInitialized) {
  auto t = std::make_unique<scripted>(server("2025-06-18"));
  auto* raw = t.get();
  auto s = std::make_shared<session>(std::move(t));
  auto r = run([&]() -> asio::awaitable<result<void>> { co_return co_await s->initialize(true, std::chrono::seconds(5)); });
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(s->protocol_version(), "2025-06-18");
  EXPECT_EQ(s->server_info()["name"], "t");
  const auto sent = raw->sent();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0]["params"]["protocolVersion"], "2025-11-25");
  EXPECT_TRUE(sent[0]["params"]["capabilities"].contains("elicitation"));
  EXPECT_EQ(sent[1]["method"], "notifications/initialized");
}

TEST(McpSession, AnUnknownRevisionIsRefused) {
  auto s = std::make_shared<session>(std::make_unique<scripted>(server("2024-11-05")));
  auto r = run([&]() -> asio::awaitable<result<void>> { co_return co_await s->initialize(true, std::chrono::seconds(5)); });
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("2024-11-05"), std::string::npos);
}

TEST(McpSession, ATimeoutSendsCancelled) {
  auto t = std::make_unique<scripted>(server("2025-11-25"));
  auto* raw = t.get();
  auto s = std::make_shared<session>(std::move(t));
  auto r = run([&]() -> asio::awaitable<result<json>> {
    auto init = co_await s->initialize(false, std::chrono::seconds(5));
    if (!init) co_return init.error();
    co_return co_await s->request("tools/list", json::object(), std::chrono::milliseconds(100));
  });
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("did not answer tools/list"), std::string::npos);
  const auto sent = raw->sent();
  ASSERT_EQ(sent.back()["method"], "notifications/cancelled");
  EXPECT_EQ(sent.back()["params"]["requestId"], sent[sent.size() - 2]["id"]);
}

TEST(McpSession, ProgressAndElicitationReachTheCallThenItsResponse) {
  auto script = [](const json& m) -> std::vector<json> {
    if (m.value("method", "") != "tools/call") return {};
    const json token = m["params"]["_meta"]["progressToken"];
    return {make_notification("notifications/progress", {{"progressToken", token}, {"progress", 1}, {"total", 2}}),
            json{{"jsonrpc", "2.0"}, {"id", 77}, {"method", "elicitation/create"}, {"params", {{"message", "name?"}}}},
            make_response(m["id"], {{"content", {{{"type", "text"}, {"text", "done"}}}}})};
  };
  auto s = std::make_shared<session>(std::make_unique<scripted>(server("2025-11-25", script)));
  auto kinds = run([&]() -> asio::awaitable<std::vector<std::string>> {
    std::vector<std::string> seen;
    auto init = co_await s->initialize(true, std::chrono::seconds(5));
    if (!init) co_return seen;
    auto started = s->start_request("tools/call", json{{"name", "x"}}, true);
    if (!started) co_return seen;
    auto box = started->second;
    for (int i = 0; i < 3; ++i) {
      auto m = co_await box->next(std::chrono::seconds(5));
      if (!m || !*m) break;
      const incoming in = classify(**m);
      seen.push_back(in.method.empty() ? "response" : in.method);
    }
    co_return seen;
  });
  EXPECT_EQ(kinds, (std::vector<std::string>{"notifications/progress", "elicitation/create", "response"}));
}

TEST(McpSession, PingIsAnsweredAndElicitationWithoutACallIsDeclined) {
  auto t = std::make_unique<scripted>(server("2025-11-25"));
  auto* raw = t.get();
  auto s = std::make_shared<session>(std::move(t));
  auto r = run([&]() -> asio::awaitable<result<void>> { co_return co_await s->initialize(true, std::chrono::seconds(5)); });
  ASSERT_TRUE(r);
  raw->deliver({{"jsonrpc", "2.0"}, {"id", 9}, {"method", "ping"}});
  raw->deliver({{"jsonrpc", "2.0"}, {"id", 10}, {"method", "elicitation/create"}, {"params", {{"message", "?"}}}});
  raw->deliver({{"jsonrpc", "2.0"}, {"id", 11}, {"method", "sampling/createMessage"}});
  const auto sent = raw->sent();
  ASSERT_GE(sent.size(), 5u);
  EXPECT_EQ(sent[2], make_response(9, json::object()));
  EXPECT_EQ(sent[3], make_response(10, {{"action", "decline"}}));
  EXPECT_EQ(sent[4]["error"]["code"], k_method_not_found);
}

TEST(McpSession, AClosedConnectionEndsEveryWaiterWithTheReason) {
  auto script = [](const json& m) -> std::vector<json> {
    if (m.value("method", "") == "tools/call") return {json("close")};
    return {};
  };
  auto s = std::make_shared<session>(std::make_unique<scripted>(server("2025-11-25", script)));
  auto r = run([&]() -> asio::awaitable<result<json>> {
    auto init = co_await s->initialize(true, std::chrono::seconds(5));
    if (!init) co_return init.error();
    co_return co_await s->request("tools/call", json::object(), std::chrono::seconds(10));
  });
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "the test closed it");
  EXPECT_FALSE(s->alive());
  EXPECT_FALSE(s->start_request("tools/list", json::object(), false));
}

TEST(McpSession, ListChangedIsReported) {
  auto t = std::make_unique<scripted>(server("2025-11-25"));
  auto* raw = t.get();
  auto s = std::make_shared<session>(std::move(t));
  int changed = 0;
  s->on_tools_changed([&] { ++changed; });
  auto r = run([&]() -> asio::awaitable<result<void>> { co_return co_await s->initialize(true, std::chrono::seconds(5)); });
  ASSERT_TRUE(r);
  raw->deliver(make_notification("notifications/tools/list_changed"));
  EXPECT_EQ(changed, 1);
}

}  // namespace
}  // namespace warden::tools::mcp
