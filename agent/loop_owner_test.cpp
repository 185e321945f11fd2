// The owner of a tool loop (loop_options::owner, issue 22 part 3): it goes on the approval ticket
// and the call record, its rules are the only ones that cover its calls, and a named owner's
// session lives in a workspace of its own.
#include <gtest/gtest.h>

#include <filesystem>

#include "agent/agent_fakes.h"
#include "agent/call_runner.h"
#include "agent/rule_book.h"
#include "agent/tool_loop.h"

namespace warden::agent {
namespace {

using namespace testing;

/// Answers every card at once and keeps the tickets' owners as the inbox saw them.
class owner_sink : public memory_sink {
 public:
  explicit owner_sink(approval_registry& a) : approvals_(a) {}
  boost::asio::awaitable<bool> emit(loop_event ev) override {
    if (auto* s = std::get_if<tool_start>(&ev); s && s->awaiting_confirmation) {
      auto info = approvals_.find(s->approval_id, std::nullopt);
      EXPECT_TRUE(info);
      if (info) owners.push_back(info->owner);
      EXPECT_TRUE(approvals_.resolve(s->approval_id, approval_decision::allow, std::nullopt));
    }
    co_return co_await memory_sink::emit(std::move(ev));
  }
  std::vector<std::string> owners;

 private:
  approval_registry& approvals_;
};

class LoopOwner : public ::testing::Test {
 protected:
  boost::asio::io_context ioc;
  fake_registry tools;
  fake_backend backend;
  approval_registry approvals{std::chrono::milliseconds(60000)};
  cancel_registry cancels;
  memory_recorder recorder;
  std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("warden-owner-test-" + std::to_string(::getpid()));
  tool_runtime rt{approvals, cancels, tools.reg, root.string(), std::chrono::milliseconds(15000),
                  permission_mode::full, nullptr, &recorder};
  rule_book rules{nullptr};
  loop_options opts;

  void SetUp() override {
    rt.rules = &rules;
    opts.enable_tools = true;
    opts.stream = true;
    opts.gate.permission_mode = "ask";
    opts.session_id = "s1";
  }
  void TearDown() override { std::filesystem::remove_all(root); }

  loop_result run(loop_sink& sink) {
    backend.turns = {call_turn("terminal", R"({"command":"ls"})"), text_turn("done")};
    model::chat_request req;
    model::message m;
    m.content.emplace_back(model::text_part{"x"});
    req.messages.push_back(m);
    return run_sync(ioc, run_tool_loop(backend, std::move(req), opts, rt, sink));
  }
  permission_rule rule_of(const std::string& owner) {
    permission_rule r;
    r.id = "rule_" + owner;
    r.scope = rule_scope::session;
    r.session_id = "s1";
    r.owner = owner;
    r.tool = "terminal";
    r.arguments = R"({"command":"ls"})";
    return r;
  }
};

TEST_F(LoopOwner, TheTicketTheRecordAndTheWorkspaceCarryTheOwner) {
  opts.owner = "alice";
  owner_sink sink(approvals);
  run(sink);
  EXPECT_EQ(sink.owners, std::vector<std::string>{"alice"});
  ASSERT_EQ(recorder.records.size(), 1u);
  EXPECT_EQ(recorder.records[0].owner, "alice");
  EXPECT_EQ(recorder.records[0].session_id, "s1");
  EXPECT_EQ(recorder.records[0].by, decided_by::user);
  EXPECT_TRUE(std::filesystem::is_directory(root / k_owner_workspaces / "alice" / "s1"));
  EXPECT_FALSE(std::filesystem::exists(root / "s1"));
}

TEST_F(LoopOwner, TheSingleUsersWorkspaceStaysWhereItWas) {
  owner_sink sink(approvals);
  run(sink);
  EXPECT_EQ(sink.owners, std::vector<std::string>{""});
  EXPECT_EQ(recorder.records.at(0).owner, "");
  EXPECT_TRUE(std::filesystem::is_directory(root / "s1"));
  EXPECT_FALSE(std::filesystem::exists(root / k_owner_workspaces));
}

TEST_F(LoopOwner, OnlyTheOwnersRulesCoverItsCalls) {
  ASSERT_TRUE(rules.add(rule_of("bob")));
  ASSERT_TRUE(rules.add(rule_of("")));  // the single user's, from before named keys
  opts.owner = "alice";
  owner_sink asked(approvals);
  run(asked);
  EXPECT_EQ(asked.owners.size(), 1u) << "bob's and the single user's rules do not cover alice's call";
  EXPECT_EQ(recorder.records.at(0).by, decided_by::user);
  ASSERT_TRUE(rules.add(rule_of("alice")));
  recorder.records.clear();
  owner_sink spared(approvals);
  run(spared);
  EXPECT_TRUE(spared.owners.empty());
  EXPECT_EQ(recorder.records.at(0).by, decided_by::rule);
  EXPECT_EQ(recorder.records.at(0).rule_id, "rule_alice");
}

}  // namespace
}  // namespace warden::agent
