// The orchestrator over a fake chat_backend (scripted model turns) and fake tools (the runner).
#include <gtest/gtest.h>

#include <filesystem>

#include "agent/agent_fakes.h"
#include "agent/rule_book.h"
#include "agent/call_runner.h"
#include "agent/tool_loop.h"

namespace warden::agent {
namespace {

using namespace testing;

/// A sink that answers every approval card at once, like a person watching the stream.
class answering_sink : public memory_sink {
 public:
  answering_sink(approval_registry& a, approval_decision d) : approvals_(a), decision_(d) {}
  boost::asio::awaitable<bool> emit(loop_event ev) override {
    if (auto* s = std::get_if<tool_start>(&ev); s && s->awaiting_confirmation) {
      EXPECT_TRUE(approvals_.resolve(s->approval_id, decision_, std::nullopt));
    }
    co_return co_await memory_sink::emit(std::move(ev));
  }

 private:
  approval_registry& approvals_;
  approval_decision decision_;
};

class ToolLoop : public ::testing::Test {
 protected:
  boost::asio::io_context ioc;
  fake_registry tools;
  fake_backend backend;
  approval_registry approvals{std::chrono::milliseconds(60000)};
  cancel_registry cancels;
  memory_recorder recorder;
  std::string root = std::filesystem::temp_directory_path() / ("warden-loop-test-" + std::to_string(::getpid()));
  tool_runtime rt{approvals, cancels, tools.reg, root, std::chrono::milliseconds(15000), permission_mode::full, nullptr, &recorder};
  loop_options opts;

  // Not streaming and no mode: the legacy flags alone decide (fold_gate), as these tests expect.
  // The tests of the permission modes set `stream` and `permission_mode` themselves.
  // The guidance is off, so these tests also show that with it off the prompts are exactly the
  // loop's own; the ToolLoopGuidance tests turn it on.
  void SetUp() override {
    opts.enable_tools = true;
    opts.stream = false;
    rt.guidance = {.prompt_nudge = false, .error_nudge = false, .act_reprompts = false};
  }
  void TearDown() override { std::filesystem::remove_all(root); }

  model::chat_request user(const std::string& text) {
    model::chat_request r;
    model::message m;
    m.content.emplace_back(model::text_part{text});
    r.messages.push_back(m);
    return r;
  }
  loop_result run(loop_sink& sink, model::chat_request req, const resume_turn* resume = nullptr) {
    return run_sync(ioc, run_tool_loop(backend, std::move(req), opts, rt, sink, resume));
  }
};

TEST_F(ToolLoop, ATurnWithoutCallsEndsTheLoop) {
  backend.turns.push_back(text_turn("hello"));
  memory_sink sink;
  auto r = run(sink, user("hi"));
  EXPECT_EQ(r.final_text, "hello");
  EXPECT_EQ(r.finish_reason, model::finish_reason::stop);
  ASSERT_TRUE(r.usage);
  EXPECT_EQ(*r.usage, (model::usage{3, 2, 5}));
  EXPECT_EQ(r.turns, 1);
  ASSERT_EQ(r.messages.size(), 1u);
  EXPECT_EQ(r.messages[0].text(), "hello");
  EXPECT_TRUE(r.calls.empty());
  ASSERT_EQ(backend.requests.size(), 1u);
  EXPECT_EQ(backend.requests[0].tools.size(), 3u);  // every selected tool offered
}

TEST_F(ToolLoop, ACallRunsAndItsResultGoesBackToTheModel) {
  backend.turns.push_back(call_turn("python", R"({"code":"p1"})", "call_a"));
  backend.turns.push_back(text_turn("done"));
  memory_sink sink;
  auto r = run(sink, user("run it"));
  ASSERT_EQ(tools.python->calls.size(), 1u);
  EXPECT_EQ(tools.python->calls[0], json({{"code", "p1"}}));
  EXPECT_EQ(tools.python->modes[0], tools::isolation::sandboxed);
  EXPECT_EQ(r.final_text, "done");
  EXPECT_EQ(r.tools_run, 1);
  // assistant(call) + tool(result) + assistant(answer)
  ASSERT_EQ(r.messages.size(), 3u);
  ASSERT_EQ(r.messages[0].tool_calls().size(), 1u);
  EXPECT_EQ(r.messages[0].tool_calls()[0]->id, "call_a");
  const auto& result = std::get<model::tool_result_part>(r.messages[1].content[0]);
  EXPECT_EQ(result.tool_call_id, "call_a");
  EXPECT_EQ(result.content, R"(ok:{"code":"p1"})");
  // The second request carries the history.
  ASSERT_EQ(backend.requests.size(), 2u);
  EXPECT_EQ(backend.requests[1].messages.size(), 3u);
  // Events: card, status, live output, end, status cleared.
  ASSERT_EQ(sink.all<tool_start>().size(), 1u);
  EXPECT_FALSE(sink.all<tool_start>()[0].awaiting_confirmation);
  EXPECT_EQ(sink.all<tool_output>()[0].text, "live:python");
  EXPECT_EQ(sink.all<tool_end>()[0].result, result.content);
  EXPECT_EQ(sink.all<tool_status>().front().text, "Running python label");
  EXPECT_EQ(sink.all<tool_status>().back().text, "");
  // One record, in the result and in the recorder.
  ASSERT_EQ(r.calls.size(), 1u);
  ASSERT_EQ(recorder.records.size(), 1u);
  const auto& rec = recorder.records[0];
  EXPECT_EQ(rec.call_id, "call_a");
  EXPECT_EQ(rec.session_id, "_default");
  EXPECT_EQ(rec.tool, "python");
  EXPECT_EQ(rec.arguments, R"({"code":"p1"})");
  EXPECT_EQ(rec.decision, call_verdict::run);
  EXPECT_EQ(rec.by, decided_by::policy);
  EXPECT_TRUE(rec.allowed);
  EXPECT_EQ(rec.exit_status, 0);
  EXPECT_EQ(rec.output_bytes, 7u);
  EXPECT_GE(rec.finished_unix_ms, rec.started_unix_ms);
}

TEST_F(ToolLoop, AskedCallsRunOnlyWhenAllowed) {
  opts.gate.confirm_code_execution = true;
  for (auto decision : {approval_decision::allow, approval_decision::deny}) {
    backend.turns = {call_turn("terminal", R"({"command":"ls"})"), text_turn("ok")};
    tools.terminal->calls.clear();
    recorder.records.clear();
    answering_sink sink(approvals, decision);
    auto r = run(sink, user("list"));
    const bool allowed = decision == approval_decision::allow;
    EXPECT_EQ(tools.terminal->calls.size(), allowed ? 1u : 0u);
    ASSERT_EQ(recorder.records.size(), 1u);
    const auto& rec = recorder.records[0];
    EXPECT_EQ(rec.decision, call_verdict::ask);
    EXPECT_EQ(rec.by, decided_by::user);
    EXPECT_EQ(rec.allowed, allowed);
    EXPECT_FALSE(rec.approval_id.empty());
    EXPECT_EQ(rec.approval_id, sink.all<tool_start>()[0].approval_id);
    if (!allowed) {
      EXPECT_EQ(sink.all<tool_end>()[0].result, k_declined);
      EXPECT_EQ(rec.reason, k_declined);
    }
    EXPECT_EQ(sink.all<tool_status>().front().text, "Waiting for approval: terminal label");
  }
  EXPECT_EQ(approvals.pending(), 0u);
}

TEST_F(ToolLoop, NoSandboxFailsClosedBeforeAnyoneIsAsked) {
  opts.gate.confirm_tool_calls = true;
  tools.python->sandbox_missing = true;
  backend.turns = {call_turn("python", R"({"code":"1"})"), text_turn("sorry")};
  answering_sink sink(approvals, approval_decision::allow);
  auto r = run(sink, user("x"));
  EXPECT_TRUE(tools.python->calls.empty());
  ASSERT_EQ(sink.all<tool_start>().size(), 1u);
  EXPECT_FALSE(sink.all<tool_start>()[0].awaiting_confirmation);
  EXPECT_EQ(sink.all<tool_end>()[0].result, "Execution error: no sandbox here");
  EXPECT_EQ(r.calls[0].decision, call_verdict::sandbox_unavailable);
  // bypass runs it on the host: the sandbox does not matter then.
  opts.gate.bypass_permissions = true;
  backend.turns = {call_turn("python", R"({"code":"1"})"), text_turn("ok")};
  memory_sink quiet;
  auto b = run(quiet, user("x"));
  ASSERT_EQ(tools.python->calls.size(), 1u);
  EXPECT_EQ(tools.python->modes[0], tools::isolation::bypass);
  EXPECT_EQ(b.calls[0].by, decided_by::bypass);
}

TEST_F(ToolLoop, AToolThatIsNotEnabledEndsToolsForTheNextPass) {
  opts.enabled_tools = std::vector<std::string>{"terminal"};
  backend.turns = {call_turn("python", "{}"), text_turn("fine")};
  memory_sink sink;
  auto r = run(sink, user("x"));
  EXPECT_TRUE(tools.python->calls.empty());
  EXPECT_EQ(r.calls[0].decision, call_verdict::not_enabled);
  ASSERT_EQ(backend.requests.size(), 2u);
  EXPECT_EQ(backend.requests[0].tools.size(), 1u);
  EXPECT_TRUE(backend.requests[1].tools.empty());
}

TEST_F(ToolLoop, NamedToolChoiceRevertsAfterTheFirstTurn) {
  backend.turns = {call_turn("python", R"({"code":"1"})"), call_turn("python", R"({"code":"2"})"), text_turn("ok")};
  auto req = user("x");
  req.tool_choice = model::tool_choice{model::tool_choice::mode::named, "python"};
  memory_sink sink;
  run(sink, req);
  ASSERT_EQ(backend.requests.size(), 3u);
  ASSERT_TRUE(backend.requests[0].tool_choice);
  EXPECT_FALSE(backend.requests[1].tool_choice);
  EXPECT_EQ(tools.python->calls.size(), 2u);
}

TEST_F(ToolLoop, RequiredToolChoiceAppliesToTheFirstTurnOnly) {
  backend.turns = {call_turn("python", R"({"code":"1"})"), text_turn("ok")};
  auto req = user("x");
  req.tool_choice = model::tool_choice{model::tool_choice::mode::required, ""};
  memory_sink sink;
  auto r = run(sink, req);
  ASSERT_EQ(backend.requests.size(), 2u);
  ASSERT_TRUE(backend.requests[0].tool_choice);
  EXPECT_EQ(backend.requests[0].tool_choice->kind, model::tool_choice::mode::required);
  EXPECT_FALSE(backend.requests[1].tool_choice);  // or the model could never answer
  EXPECT_FALSE(backend.requests[1].tools.empty());
  EXPECT_EQ(r.final_text, "ok");
}

TEST_F(ToolLoop, BudgetSpentTellsTheModelAndTakesToolsAway) {
  opts.max_tool_calls_per_message = 1;
  backend.turns = {call_turn("python", R"({"code":"1"})"), text_turn("answer")};
  memory_sink sink;
  auto r = run(sink, user("x"));
  ASSERT_EQ(backend.requests.size(), 2u);
  EXPECT_TRUE(backend.requests[1].tools.empty());
  const auto& last_tool = std::get<model::tool_result_part>(backend.requests[1].messages.back().content[0]);
  EXPECT_NE(last_tool.content.find(k_budget_spent), std::string::npos);
  EXPECT_EQ(r.final_text, "answer");
}

TEST_F(ToolLoop, SecondRepeatOfASuccessIsRefusedAndEndsTools) {
  backend.turns = {call_turn("python", R"({"code":"1"})"), call_turn("python", R"({"code":"1"})"),
                   call_turn("python", R"({"code":"1"})"), text_turn("ok")};
  memory_sink sink;
  auto r = run(sink, user("x"));
  EXPECT_EQ(tools.python->calls.size(), 1u);
  ASSERT_EQ(r.calls.size(), 3u);
  EXPECT_EQ(r.calls[1].reason, k_already_ran);
  EXPECT_FALSE(r.calls[1].allowed);
  EXPECT_TRUE(backend.requests.back().tools.empty());
}

TEST_F(ToolLoop, ParallelCallsFalseKeepsTheFirstOnly) {
  opts.parallel_tool_calls = false;
  backend.turns = {{model::tool_call_started{0, "a", "python"}, model::tool_call_arguments_delta{0, "{}"},
                    model::tool_call_started{1, "b", "terminal"}, model::tool_call_arguments_delta{1, "{}"},
                    model::finish_event{model::finish_reason::tool_calls}},
                   text_turn("ok")};
  memory_sink sink;
  auto r = run(sink, user("x"));
  EXPECT_EQ(tools.python->calls.size(), 1u);
  EXPECT_TRUE(tools.terminal->calls.empty());
  ASSERT_TRUE(backend.requests[0].parallel_tool_calls);
  EXPECT_FALSE(*backend.requests[0].parallel_tool_calls);
  EXPECT_EQ(r.calls.size(), 1u);
}

/// A client that goes away when the first approval card arrives.
class leaving_sink : public memory_sink {
 public:
  boost::asio::awaitable<bool> emit(loop_event ev) override {
    if (auto* s = std::get_if<tool_start>(&ev); s && s->awaiting_confirmation) co_return false;
    co_return co_await memory_sink::emit(std::move(ev));
  }
};

TEST_F(ToolLoop, CallsOfAClientThatLeftAreStillRecorded) {
  opts.gate.confirm_tool_calls = true;
  backend.turns = {{model::tool_call_started{0, "a", "python"}, model::tool_call_arguments_delta{0, "{}"},
                    model::tool_call_started{1, "b", "terminal"}, model::tool_call_arguments_delta{1, "{}"},
                    model::finish_event{model::finish_reason::tool_calls}}};
  leaving_sink sink;
  auto r = run(sink, user("x"));
  EXPECT_TRUE(r.client_gone);
  EXPECT_TRUE(tools.python->calls.empty());
  ASSERT_EQ(recorder.records.size(), 2u);  // both calls, neither ran
  for (const auto& rec : recorder.records) {
    EXPECT_FALSE(rec.allowed);
    EXPECT_EQ(rec.by, decided_by::client_gone);
    EXPECT_EQ(rec.decision, call_verdict::ask);
    EXPECT_NE(rec.reason.find("client went away"), std::string::npos);
  }
  EXPECT_EQ(approvals.pending(), 0u);
}

TEST_F(ToolLoop, UpstreamFailureIsReturned) {
  backend.open_failure = make_error(errc::upstream_unavailable, "down");
  memory_sink sink;
  auto r = run(sink, user("x"));
  ASSERT_TRUE(r.failure);
  EXPECT_EQ(r.failure->message, "down");
}

TEST_F(ToolLoop, AStreamErrorMidTurnIsReturned) {
  backend.turns.push_back({model::text_delta{"par"}, model::error_event{make_error(errc::upstream_error, "broke")}});
  memory_sink sink;
  auto r = run(sink, user("x"));
  ASSERT_TRUE(r.failure);
  EXPECT_EQ(r.failure->message, "broke");
  EXPECT_EQ(sink.all<model::text_delta>()[0].text, "par");
}

TEST_F(ToolLoop, CallsWrittenAsTextAreHealedAndRun) {
  backend.turns = {{model::text_delta{"Sure. <tool_call>{\"name\":\"python\",\"arguments\":{\"code\":\"2\"}}</tool_call>"},
                    model::finish_event{model::finish_reason::stop}},
                   text_turn("ok")};
  memory_sink sink;
  auto r = run(sink, user("x"));
  ASSERT_EQ(tools.python->calls.size(), 1u);
  EXPECT_TRUE(sink.all<tool_start>()[0].healed);
  for (const auto& d : sink.all<model::text_delta>()) EXPECT_EQ(d.text.find("<tool_call>"), std::string::npos);
  EXPECT_EQ(r.messages[0].text(), "Sure. ");
}

TEST_F(ToolLoop, AnUndeclaredNameWrittenAsTextStaysTextAndNothingRuns) {
  const std::string t = "<tool_call>{\"name\":\"rm_everything\",\"arguments\":{}}</tool_call>";
  backend.turns = {{model::text_delta{t}, model::finish_event{model::finish_reason::stop}}};
  memory_sink sink;
  auto r = run(sink, user("x"));
  EXPECT_TRUE(tools.python->calls.empty());
  EXPECT_TRUE(r.calls.empty());
  EXPECT_EQ(r.final_text, t);
}

TEST_F(ToolLoop, HealingCanBeSwitchedOffPerRequestAndPerServer) {
  const std::string t = "<tool_call>{\"name\":\"python\",\"arguments\":{\"code\":\"2\"}}</tool_call>";
  for (int off = 0; off < 2; ++off) {
    backend.turns = {{model::text_delta{t}, model::finish_event{model::finish_reason::stop}}};
    backend.requests.clear();
    opts.heal_tool_calls = off == 0 ? std::optional<bool>(false) : std::nullopt;
    rt.heal_tool_calls = off == 0;  // the request's false wins over the server's true
    memory_sink sink;
    auto r = run(sink, user("x"));
    EXPECT_TRUE(tools.python->calls.empty()) << off;
    EXPECT_EQ(r.final_text, t) << off;
  }
}

TEST_F(ToolLoop, ToolChoiceNoneRunsNothingEvenWrittenAsText) {
  backend.turns = {{model::text_delta{"<tool_call>{\"name\":\"python\",\"arguments\":{}}</tool_call>"},
                    model::tool_call_started{0, "x", "python"}, model::finish_event{model::finish_reason::stop}}};
  auto req = user("x");
  req.tool_choice = model::tool_choice{model::tool_choice::mode::none, ""};
  memory_sink sink;
  auto r = run(sink, req);
  EXPECT_TRUE(tools.python->calls.empty());
  EXPECT_TRUE(backend.requests[0].tools.empty());
  EXPECT_TRUE(r.calls.empty());
}

// permission_mode auto (a streaming request with nothing set): low-risk calls run unasked
// (decided by the classifier), high-risk ones are asked with the reasons on the card.
TEST_F(ToolLoop, AutoModeRunsLowRiskAndAsksHighRiskWithReasons) {
  opts.stream = true;
  backend.turns = {call_turn("terminal", R"({"command":"ls -la"})"), call_turn("terminal", R"({"command":"rm -rf /workspace/x"})"),
                   text_turn("done")};
  answering_sink sink(approvals, approval_decision::deny);
  auto r = run(sink, user("clean up"));
  ASSERT_EQ(recorder.records.size(), 2u);
  EXPECT_EQ(recorder.records[0].by, decided_by::auto_classifier);
  EXPECT_EQ(recorder.records[0].risk_level, "low");
  EXPECT_EQ(recorder.records[0].mode, "auto");
  EXPECT_TRUE(recorder.records[0].allowed);
  EXPECT_EQ(recorder.records[1].decision, call_verdict::ask);
  EXPECT_EQ(recorder.records[1].by, decided_by::user);
  EXPECT_EQ(recorder.records[1].risk_level, "high");
  EXPECT_FALSE(recorder.records[1].risk_reasons.empty());
  ASSERT_TRUE(recorder.records[1].approval_latency_ms);
  EXPECT_GE(*recorder.records[1].approval_latency_ms, 0);
  EXPECT_EQ(tools.terminal->calls.size(), 1u);
  auto starts = sink.all<tool_start>();
  ASSERT_EQ(starts.size(), 2u);
  EXPECT_FALSE(starts[0].awaiting_confirmation);
  ASSERT_TRUE(starts[1].risk);
  EXPECT_EQ(starts[1].risk->level, "high");
  EXPECT_TRUE(starts[1].awaiting_confirmation);
}

// A remembered rule turns the question into a run, and the record names the rule.
TEST_F(ToolLoop, ARememberedRuleAllowsTheCallAndIsRecorded) {
  rule_book rules(nullptr);
  rt.rules = &rules;
  opts.stream = true;
  opts.session_id = "s1";
  permission_rule rule;
  rule.id = "rule_test";
  rule.scope = rule_scope::session;
  rule.session_id = "s1";
  rule.tool = "terminal";
  rule.arguments = R"({"command":"rm -rf /workspace/x"})";
  ASSERT_TRUE(rules.add(rule));
  backend.turns = {call_turn("terminal", R"({"command":"rm -rf /workspace/x"})"), text_turn("done")};
  memory_sink sink;
  run(sink, user("x"));
  ASSERT_EQ(recorder.records.size(), 1u);
  EXPECT_EQ(recorder.records[0].by, decided_by::rule);
  EXPECT_EQ(recorder.records[0].rule_id, "rule_test");
  EXPECT_EQ(tools.terminal->calls.size(), 1u);
  // Another session is still asked (and here nobody answers: the client leaves).
  opts.session_id = "s2";
  recorder.records.clear();
  backend.turns = {call_turn("terminal", R"({"command":"rm -rf /workspace/x"})"), text_turn("done")};
  leaving_sink gone;
  run(gone, user("x"));
  ASSERT_EQ(recorder.records.size(), 1u);
  EXPECT_EQ(recorder.records[0].decision, call_verdict::ask);
  EXPECT_EQ(tools.terminal->calls.size(), 1u);
  rt.rules = nullptr;
}

// When the audit row cannot be written before the run, the call is refused, and says why.
TEST_F(ToolLoop, AnUnwritableAuditLogRefusesTheCall) {
  recorder.fail_open = true;
  backend.turns = {call_turn("python", R"j({"code":"print(1)"})j"), text_turn("done")};
  memory_sink sink;
  auto r = run(sink, user("x"));
  EXPECT_TRUE(tools.python->calls.empty());
  auto ends = sink.all<tool_end>();
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_NE(ends[0].result.find(k_audit_failed), std::string::npos) << ends[0].result;
  EXPECT_NE(ends[0].result.find("database is locked"), std::string::npos);
  ASSERT_EQ(recorder.records.size(), 1u);
  EXPECT_FALSE(recorder.records[0].allowed);
}

// An approval nobody answers expires: the model is told it expired (not that the user declined),
// and the record says expired.
TEST_F(ToolLoop, AnUnansweredApprovalExpiresAndSaysSo) {
  approval_registry quick{std::chrono::milliseconds(30)};
  tool_runtime rt2{quick, cancels, tools.reg, root, std::chrono::milliseconds(15000), permission_mode::full, nullptr, &recorder};
  opts.gate.confirm_tool_calls = true;
  opts.stream = true;
  backend.turns = {call_turn("python", R"j({"code":"print(1)"})j"), text_turn("done")};
  memory_sink sink;
  auto r = run_sync(ioc, run_tool_loop(backend, user("x"), opts, rt2, sink));
  auto ends = sink.all<tool_end>();
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_NE(ends[0].result.find("expired"), std::string::npos) << ends[0].result;
  EXPECT_EQ(ends[0].result.find("declined"), std::string::npos) << ends[0].result;
  ASSERT_EQ(recorder.records.size(), 1u);
  EXPECT_EQ(recorder.records[0].by, decided_by::expired);
  EXPECT_FALSE(recorder.records[0].is_error);
  EXPECT_TRUE(tools.python->calls.empty());
}

}  // namespace
}  // namespace warden::agent

namespace warden::agent {
namespace {

using namespace testing;

/// The loop with park_approvals: python and terminal are asked (confirm_code_execution),
/// render_html is not.
class ParkedLoop : public ToolLoop {
 protected:
  void SetUp() override {
    ToolLoop::SetUp();
    opts.stream = true;
    opts.gate.confirm_code_execution = true;
    opts.gate.permission_mode = "off";
    opts.park_approvals = true;
  }
};

TEST_F(ParkedLoop, AnAskedCallParksTheWholeTurnWithoutATicket) {
  auto turn = call_turn("python", R"({"code":"p"})", "call_p");
  backend.turns.push_back(turn);
  memory_sink sink;
  auto r = run(sink, user("go"));
  ASSERT_TRUE(r.parked);
  ASSERT_EQ(r.parked->calls.size(), 1u);
  EXPECT_EQ(r.parked->calls[0].id, "call_p");
  EXPECT_EQ(r.parked->calls[0].name, "python");
  EXPECT_TRUE(r.parked->calls[0].needs_approval);
  EXPECT_EQ(r.parked->calls[0].card_arguments, json({{"code", "p"}}));
  EXPECT_TRUE(tools.python->calls.empty());
  EXPECT_EQ(approvals.pending(), 0u);                // nobody is asked over a stream
  EXPECT_TRUE(sink.all<tool_start>().empty());
  EXPECT_TRUE(recorder.records.empty());             // recorded when resumed
  EXPECT_TRUE(r.messages.empty());
  EXPECT_EQ(backend.requests.size(), 1u);
}

TEST_F(ParkedLoop, ResumingRunsAnApprovedCallAndDeclinesADeniedOne) {
  for (auto decision : {approval_decision::allow, approval_decision::deny}) {
    tools.python->calls.clear();
    recorder.records.clear();
    backend.requests.clear();
    backend.turns = {text_turn("after")};
    resume_turn resume;
    resume.turn.text = "let me";
    resume.turn.calls.push_back(parked_call{"call_p", "python", R"({"code":"p"})", true, json{{"code", "p"}}});
    resume.decisions["call_p"] = decision == approval_decision::allow ? approval_outcome::allowed : approval_outcome::denied;
    memory_sink sink;
    auto r = run(sink, user("go"), &resume);
    const bool allowed = decision == approval_decision::allow;
    EXPECT_FALSE(r.parked);
    EXPECT_EQ(tools.python->calls.size(), allowed ? 1u : 0u);
    ASSERT_EQ(r.messages.size(), 3u);  // the resumed assistant turn, its tool result, the answer
    EXPECT_EQ(r.messages[0].text(), "let me");
    ASSERT_EQ(r.messages[0].tool_calls().size(), 1u);
    EXPECT_EQ(r.messages[0].tool_calls()[0]->id, "call_p");
    const auto& result = std::get<model::tool_result_part>(r.messages[1].content[0]);
    EXPECT_EQ(result.tool_call_id, "call_p");
    if (!allowed) {
      EXPECT_EQ(result.content, k_declined);
    }
    EXPECT_EQ(r.final_text, "after");
    ASSERT_EQ(recorder.records.size(), 1u);
    EXPECT_EQ(recorder.records[0].by, decided_by::user);
    EXPECT_EQ(recorder.records[0].allowed, allowed);
    ASSERT_EQ(backend.requests.size(), 1u);  // the model is asked once, after the calls settled
    EXPECT_EQ(backend.requests[0].messages.size(), 3u);
  }
}

TEST_F(ParkedLoop, AResumedTurnWithAnUnansweredCallParksAgain) {
  resume_turn resume;
  resume.turn.calls.push_back(parked_call{"call_a", "python", R"({"code":"a"})", true, json{{"code", "a"}}});
  resume.turn.calls.push_back(parked_call{"call_b", "terminal", R"({"command":"b"})", true, json{{"command", "b"}}});
  resume.decisions["call_a"] = approval_outcome::allowed;
  memory_sink sink;
  auto r = run(sink, user("go"), &resume);
  ASSERT_TRUE(r.parked);
  EXPECT_EQ(r.parked->calls.size(), 2u);
  EXPECT_TRUE(tools.python->calls.empty());  // nothing of the turn runs until every question is answered
  EXPECT_TRUE(backend.requests.empty());
}

TEST_F(ParkedLoop, ACallThatNeedsNobodyRunsWithoutParking) {
  backend.turns = {call_turn("render_html", R"({"html":"<p>"})", "call_r"), text_turn("shown")};
  memory_sink sink;
  auto r = run(sink, user("go"));
  EXPECT_FALSE(r.parked);
  EXPECT_EQ(tools.render->calls.size(), 1u);
  EXPECT_EQ(r.final_text, "shown");
}

// A call the gate let through whose program never started (bubblewrap could not make the jail,
// the workspace is over its quota) is recorded as not run, with the reason; the model is told.
TEST_F(ToolLoop, AProgramThatNeverStartedIsRecordedAsNotRun) {
  tools.terminal->not_run = "the program was not started: bwrap: Creating new namespace failed: Resource temporarily unavailable";
  backend.turns = {call_turn("terminal", R"({"command":"echo hi"})", "call_n"), text_turn("done")};
  memory_sink sink;
  auto r = run(sink, user("go"));
  ASSERT_EQ(recorder.records.size(), 1u);
  const auto& rec = recorder.records[0];
  EXPECT_FALSE(rec.allowed);
  EXPECT_EQ(rec.reason, "not run: " + *tools.terminal->not_run);
  EXPECT_TRUE(rec.is_error);
  EXPECT_FALSE(rec.exit_status);
  EXPECT_EQ(r.tools_run, 0);
  ASSERT_EQ(sink.all<tool_end>().size(), 1u);
  EXPECT_FALSE(sink.all<tool_end>()[0].allowed);
  EXPECT_EQ(sink.all<tool_end>()[0].result, "Execution error: " + *tools.terminal->not_run);
}

class ToolLoopGuidance : public ToolLoop {
 protected:
  void SetUp() override {
    ToolLoop::SetUp();
    rt.guidance = guidance_switches{};
  }
  loop_result go(model::chat_request req) {
    memory_sink s;
    return run(s, std::move(req));
  }
  static std::string text_of(const model::message& m) {
    std::string out;
    for (const auto& p : m.content) {
      if (const auto* t = std::get_if<model::text_part>(&p)) out += t->text;
    }
    return out;
  }
};

TEST_F(ToolLoopGuidance, ThePromptNudgeIsTheSameOnEveryTurnAndOffPerRequest) {
  backend.turns = {call_turn("python", R"({"code":"1"})"), text_turn("done")};
  go(user("x"));
  ASSERT_EQ(backend.requests.size(), 2u);
  const auto& first = backend.requests[0].messages;
  ASSERT_EQ(first[0].role, model::role::system);
  const std::string nudge = text_of(first[0]);
  EXPECT_EQ(nudge.rfind("The current date is " + utc_date_today() + ".", 0), 0u) << nudge;
  EXPECT_NE(nudge.find("`python`"), std::string::npos) << nudge;
  EXPECT_EQ(text_of(backend.requests[1].messages[0]), nudge);  // the prompt cache keeps its prefix
  backend.requests.clear();
  backend.turns = {text_turn("hi")};
  opts.tool_prompt_nudge = false;
  go(user("x"));
  EXPECT_EQ(backend.requests[0].messages.size(), 1u);
  EXPECT_EQ(backend.requests[0].messages[0].role, model::role::user);
}

TEST_F(ToolLoopGuidance, AFailedCallGetsTheErrorNudgeOnlyWhereTheModelSeesIt) {
  tools.python->fail = true;
  backend.turns = {call_turn("python", R"({"code":"1/0"})"), text_turn("sorry")};
  memory_sink sink;
  run(sink, user("x"));
  ASSERT_EQ(backend.requests.size(), 2u);
  const auto& result = std::get<model::tool_result_part>(backend.requests[1].messages.back().content[0]);
  EXPECT_TRUE(result.content.ends_with(std::string("\n\n") + k_tool_error_nudge)) << result.content;
  EXPECT_EQ(sink.all<tool_end>()[0].result.find(k_tool_error_nudge), std::string::npos);
  // A call that worked gets none, and the switch turns it off.
  tools.python->fail = false;
  backend.requests.clear();
  backend.turns = {call_turn("python", R"({"code":"2"})"), text_turn("ok")};
  go(user("x"));
  EXPECT_EQ(std::get<model::tool_result_part>(backend.requests[1].messages.back().content[0]).content.find(k_tool_error_nudge),
            std::string::npos);
  tools.python->fail = true;
  opts.tool_error_nudge = false;
  backend.requests.clear();
  backend.turns = {call_turn("python", R"({"code":"3"})"), text_turn("ok")};
  go(user("x"));
  EXPECT_EQ(std::get<model::tool_result_part>(backend.requests[1].messages.back().content[0]).content.find(k_tool_error_nudge),
            std::string::npos);
}

TEST_F(ToolLoopGuidance, APlanWithoutACallIsRepromptedOnceThenTheModelCalls) {
  backend.turns = {text_turn("I'll run the code to compute it."), call_turn("python", R"({"code":"1"})"),
                   text_turn("It is 1.")};
  memory_sink sink;
  auto r = run(sink, user("compute"));
  ASSERT_EQ(backend.requests.size(), 3u);
  const auto& second = backend.requests[1].messages;
  EXPECT_EQ(second[second.size() - 2].role, model::role::assistant);
  EXPECT_EQ(text_of(second[second.size() - 2]), "I'll run the code to compute it.");
  EXPECT_EQ(second.back().role, model::role::user);
  EXPECT_NE(text_of(second.back()).find("call `python`"), std::string::npos) << text_of(second.back());
  EXPECT_EQ(tools.python->calls.size(), 1u);
  EXPECT_EQ(r.final_text, "It is 1.");
  EXPECT_EQ(sink.all<tool_status>().front().text, k_nudging_status);
}

TEST_F(ToolLoopGuidance, RepromptsStopAtTheCapAndAfterADenial) {
  for (int i = 0; i < 6; ++i) backend.turns.push_back(text_turn("Let me check step " + std::to_string(i)));
  auto r = go(user("x"));
  EXPECT_EQ(backend.requests.size(), 1u + k_reprompts_before_tool);
  EXPECT_EQ(r.final_text, "Let me check step 3");
  // after a denial: none
  backend.requests.clear();
  opts.gate.permission_mode = "ask";
  opts.stream = true;
  backend.turns = {call_turn("python", R"({"code":"1"})"), text_turn("I'll run it another way.")};
  answering_sink sink(approvals, approval_decision::deny);
  run(sink, user("x"));
  ASSERT_EQ(recorder.records.back().by, decided_by::user);
  EXPECT_EQ(backend.requests.size(), 2u);
  // and with the switch off: none
  backend.requests.clear();
  opts = loop_options{};
  opts.enable_tools = true;
  opts.stream = false;
  opts.act_reprompts = false;
  backend.turns = {text_turn("I'll run the code.")};
  go(user("x"));
  EXPECT_EQ(backend.requests.size(), 1u);
}

}  // namespace
}  // namespace warden::agent
