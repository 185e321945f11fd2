// Where a call stands in its record (agent/call_record.h run_status): pending while it runs,
// ran once its tool started — also when the client leaves mid-run and the loop is torn down —
// and not_run when it never started.
#include <gtest/gtest.h>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <filesystem>

#include "agent/agent_fakes.h"
#include "agent/tool_loop.h"

namespace warden::agent {
namespace {

using namespace testing;
namespace asio = boost::asio;

/// A terminal whose program runs until it is stopped (like `sleep 2; echo done` when the client
/// leaves first).
class slow_terminal : public tools::tool {
 public:
  slow_terminal() {
    info_ = {"terminal", "terminal label", "a slow terminal", json{{"type", "object"}},
             code_traits(tools::code_language::shell, "command")};
  }
  const tools::tool_info& info() const override { return info_; }
  std::optional<std::string> unavailable(tools::isolation) const override { return std::nullopt; }
  asio::awaitable<tools::tool_result> run(const json&, tools::tool_context&) override {
    started = true;
    asio::steady_timer t(co_await asio::this_coro::executor, std::chrono::hours(1));
    co_await t.async_wait(asio::use_awaitable);  // aborted when the request is torn down
    co_return tools::tool_result{"done\n", false, 0, 5};
  }
  bool started = false;

 private:
  tools::tool_info info_;
};

class CallStatus : public ::testing::Test {
 protected:
  asio::io_context ioc;
  fake_registry fakes;
  fake_backend backend;
  approval_registry approvals{std::chrono::milliseconds(60000)};
  cancel_registry cancels;
  memory_recorder recorder;
  std::string root = std::filesystem::temp_directory_path() / ("warden-status-test-" + std::to_string(::getpid()));
  loop_options opts;

  void SetUp() override {
    opts.enable_tools = true;
    opts.stream = true;
    opts.gate.permission_mode = "off";
  }
  void TearDown() override { std::filesystem::remove_all(root); }

  static model::chat_request user() {
    model::chat_request r;
    model::message m;
    m.content.emplace_back(model::text_part{"go"});
    r.messages.push_back(m);
    return r;
  }
};

TEST_F(CallStatus, ACallThatRanStaysRanWhenTheClientLeavesMidRun) {
  tools::registry reg;
  auto slow = std::make_unique<slow_terminal>();
  slow_terminal* terminal = slow.get();
  reg.add(std::move(slow));
  tool_runtime rt{approvals, cancels, reg, root, std::chrono::milliseconds(15000), permission_mode::full, nullptr,
                  &recorder};
  backend.turns.push_back(call_turn("terminal", R"({"command":"sleep 2; echo done"})", "call_slow"));
  memory_sink sink;
  asio::cancellation_signal client_gone;
  bool finished = false;
  asio::co_spawn(ioc, run_tool_loop(backend, user(), opts, rt, sink, nullptr),
                 asio::bind_cancellation_slot(client_gone.slot(), [&](std::exception_ptr, loop_result) { finished = true; }));
  while (!terminal->started && ioc.run_one() > 0) {
  }
  ASSERT_TRUE(terminal->started);
  ASSERT_EQ(recorder.opened, 1);
  EXPECT_EQ(recorder.records.at(0).status, run_status::pending);  // the row written before it ran
  client_gone.emit(asio::cancellation_type::terminal);  // what the server does when the peer closes
  ioc.run();
  EXPECT_TRUE(finished);
  ASSERT_EQ(recorder.records.size(), 1u);
  const call_record& rec = recorder.records[0];
  EXPECT_EQ(rec.status, run_status::ran);
  EXPECT_TRUE(rec.allowed);
  EXPECT_EQ(rec.by, decided_by::policy);  // who decided is kept
  EXPECT_EQ(rec.notes, std::vector<std::string>{k_note_client_gone});
  EXPECT_FALSE(rec.exit_status.has_value());
  EXPECT_NE(rec.reason.find("while the call was running"), std::string::npos) << rec.reason;
}

TEST_F(CallStatus, RunAndRefusedCallsSayWhereTheyStand) {
  tool_runtime rt{approvals, cancels, fakes.reg, root, std::chrono::milliseconds(15000), permission_mode::full, nullptr,
                  &recorder};
  backend.turns = {call_turn("python", R"({"code":"p"})"), call_turn("nope", "{}"), text_turn("end")};
  memory_sink sink;
  run_sync(ioc, run_tool_loop(backend, user(), opts, rt, sink, nullptr));
  ASSERT_EQ(recorder.records.size(), 2u);
  EXPECT_EQ(recorder.records[0].status, run_status::ran);
  EXPECT_TRUE(recorder.records[0].notes.empty());
  EXPECT_EQ(recorder.records[1].status, run_status::not_run);
  EXPECT_EQ(std::string(to_string(run_status::not_run)), "not_run");
}

}  // namespace
}  // namespace warden::agent
