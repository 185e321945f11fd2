// Provisional tool cards (agent/turn_reader.h; reference unsloth-studio.md §2.9): read_turn over
// scripted model turns decides when an early card opens and streams the arguments, and the
// loop (tool_loop.h) reconciles it with the real card or closes it.
#include <gtest/gtest.h>

#include <filesystem>

#include "agent/agent_fakes.h"
#include "engine/testing/scripted_turn.h"
#include "agent/tool_loop.h"
#include "agent/turn_reader.h"

namespace warden::agent {
namespace {

using namespace testing;

/// A python call's arguments of about `n` characters.
std::string code_args(std::size_t n) { return R"({"code":")" + std::string(n, 'a') + R"("})"; }

/// One structured call streamed in fragments of `piece` characters.
std::vector<model::stream_event> streamed_call(std::size_t index, const std::string& id, const std::string& name,
                                               const std::string& args, std::size_t piece = 100) {
  std::vector<model::stream_event> ev;
  ev.push_back(model::tool_call_started{index, id, name});
  for (std::size_t i = 0; i < args.size(); i += piece) {
    ev.push_back(model::tool_call_arguments_delta{index, args.substr(i, piece)});
  }
  ev.push_back(model::tool_call_finished{index});
  return ev;
}

gate_flags mode_flags(std::optional<std::string> mode, bool confirm_code = false) {
  gate_flags f;
  f.permission_mode = std::move(mode);
  f.confirm_code_execution = confirm_code;
  return f;
}

class TurnReader : public ::testing::Test {
 protected:
  boost::asio::io_context ioc;
  fake_registry tools;
  std::vector<tools::tool*> selected{tools.python, tools.terminal, tools.render};

  /// Reads one turn of `events` under the folded gate of `flags` (a streaming request).
  turn_read read(std::vector<model::stream_event> events, const gate_flags& flags, memory_sink& sink,
                 bool parallel = true, const std::vector<tools::tool*>* sel = nullptr) {
    engine::testing::scripted_turn turn(std::move(events));
    event_out out(sink);
    const provisional_options prov(sel ? sel : &selected, fold_gate(flags, true), parallel);
    return run_sync(ioc, read_turn(turn, true, out, prov));
  }
};

std::vector<tool_start> provisional_starts(const memory_sink& sink) {
  std::vector<tool_start> out;
  for (auto& s : sink.all<tool_start>()) {
    if (s.provisional) out.push_back(s);
  }
  return out;
}

std::string joined_args(const memory_sink& sink, const std::string& id) {
  std::string out;
  for (auto& a : sink.all<tool_args>()) {
    if (a.call_id == id) out += a.text;
  }
  return out;
}

TEST_F(TurnReader, LongPythonCallWithGateOffGetsCardBacklogAndDeltas) {
  const std::string args = code_args(400);
  memory_sink sink;
  auto r = read(streamed_call(0, "call_py", "python", args), mode_flags("off"), sink);
  auto cards = provisional_starts(sink);
  ASSERT_EQ(cards.size(), 1u);
  EXPECT_EQ(cards[0].tool, "python");
  EXPECT_EQ(cards[0].call_id, "call_py");
  EXPECT_EQ(cards[0].arguments, json::object());
  EXPECT_FALSE(cards[0].awaiting_confirmation);
  // The card opens when the arguments reach 256 characters (third fragment of 100): the
  // backlog (300 characters) is one fragment, then each later delta.
  auto frags = sink.all<tool_args>();
  ASSERT_EQ(frags.size(), 3u);
  EXPECT_EQ(frags[0].text, args.substr(0, 300));
  EXPECT_EQ(frags[1].text, args.substr(300, 100));
  EXPECT_EQ(frags[2].text, args.substr(400));
  EXPECT_EQ(joined_args(sink, "call_py"), args);
  // Order: the card comes before its first fragment.
  ASSERT_TRUE(std::holds_alternative<tool_start>(sink.events[0]));
  ASSERT_EQ(r.provisional.size(), 1u);
  EXPECT_EQ(r.provisional[0].call_id, "call_py");
  EXPECT_EQ(r.provisional[0].tool, "python");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].arguments, args);
}

TEST_F(TurnReader, ConfirmCodeExecutionKeepsPythonWithoutCard) {
  memory_sink sink;
  auto r = read(streamed_call(0, "call_py", "python", code_args(400)), mode_flags("off", true), sink);
  EXPECT_TRUE(sink.events.empty());
  EXPECT_TRUE(r.provisional.empty());
  EXPECT_EQ(r.calls.size(), 1u);
}

TEST_F(TurnReader, RenderHtmlGetsItsCardEvenWhenShortUnderConfirmCode) {
  const std::string args = R"({"html":"<b>hi</b>"})";
  memory_sink sink;
  auto r = read(streamed_call(0, "call_html", "render_html", args, 5), mode_flags("off", true), sink);
  ASSERT_EQ(provisional_starts(sink).size(), 1u);
  EXPECT_EQ(joined_args(sink, "call_html"), args);
  EXPECT_EQ(sink.all<tool_args>()[0].text, args.substr(0, 5));  // the card opens at the first fragment
  ASSERT_EQ(r.provisional.size(), 1u);
}

TEST_F(TurnReader, ShortPythonCallGetsNoCard) {
  memory_sink sink;
  auto r = read(streamed_call(0, "call_py", "python", code_args(100)), mode_flags("off"), sink);
  EXPECT_TRUE(sink.events.empty());
  EXPECT_TRUE(r.provisional.empty());
}

TEST_F(TurnReader, SecondCallGetsNoCardWithoutParallelCalls) {
  auto events = streamed_call(0, "call_a", "python", code_args(300));
  auto second = streamed_call(1, "call_b", "terminal", R"({"command":")" + std::string(300, 'b') + R"("})");
  events.insert(events.end(), second.begin(), second.end());
  {
    memory_sink sink;
    auto r = read(events, mode_flags("off"), sink, /*parallel=*/false);
    ASSERT_EQ(r.provisional.size(), 1u);
    EXPECT_EQ(r.provisional[0].call_id, "call_a");
    EXPECT_EQ(joined_args(sink, "call_b"), "");
  }
  {
    memory_sink sink;
    auto r = read(events, mode_flags("off"), sink, /*parallel=*/true);
    ASSERT_EQ(r.provisional.size(), 2u);
    EXPECT_EQ(r.provisional[1].call_id, "call_b");
  }
}

TEST_F(TurnReader, UnselectedToolGetsNoCard) {
  std::vector<tools::tool*> only_terminal{tools.terminal};
  memory_sink sink;
  auto r = read(streamed_call(0, "call_py", "python", code_args(400)), mode_flags("off"), sink, true, &only_terminal);
  EXPECT_TRUE(sink.events.empty());
  EXPECT_TRUE(r.provisional.empty());
}

TEST_F(TurnReader, DefaultStreamingAutoModeGivesPythonNoCard) {
  memory_sink sink;
  auto r = read(streamed_call(0, "call_py", "python", code_args(400)), gate_flags{}, sink);
  EXPECT_TRUE(sink.events.empty());
  EXPECT_TRUE(r.provisional.empty());
}

TEST_F(TurnReader, CallWithoutIdOrWithSharedIdGetsNoCard) {
  {
    memory_sink sink;
    auto r = read(streamed_call(0, "", "python", code_args(400)), mode_flags("off"), sink);
    EXPECT_TRUE(r.provisional.empty());
    EXPECT_TRUE(sink.events.empty());
  }
  {
    // Two calls with the same id: plan_calls renames the second, so only the first gets a card.
    auto events = streamed_call(0, "dup", "python", code_args(300));
    auto second = streamed_call(1, "dup", "python", code_args(300));
    events.insert(events.end(), second.begin(), second.end());
    memory_sink sink;
    auto r = read(events, mode_flags("off"), sink);
    ASSERT_EQ(r.provisional.size(), 1u);
    EXPECT_EQ(joined_args(sink, "dup"), code_args(300));
  }
}

TEST_F(TurnReader, TextFormCallsNeverGetCards) {
  // A call the model wrote as text comes healed from the backend (engine/healing.h), whole.
  model::tool_call_started started{0, "call_healed", "python"};
  started.healed = true;
  std::vector<model::stream_event> events{started, model::tool_call_arguments_delta{0, code_args(400)},
                                          model::tool_call_finished{0}, model::finish_event{}};
  memory_sink sink;
  auto r = read(events, mode_flags("off"), sink);
  EXPECT_TRUE(r.provisional.empty());
  EXPECT_TRUE(provisional_starts(sink).empty());
  EXPECT_TRUE(sink.all<tool_args>().empty());
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_TRUE(r.calls[0].from_text);
}

/// Every combination of tool × gate flags: a call the gate could ask about never gets a
/// provisional card (it would flash "running" before the approval card), and every other large
/// call does.
TEST_F(TurnReader, ProvisionalPredicateAgreesWithTheGate) {
  const std::vector<std::optional<bool>> confirms{std::nullopt, true, false};
  const std::vector<std::optional<std::string>> modes{std::nullopt, "ask", "auto", "off", "full"};
  int cards = 0;
  int gated = 0;
  for (auto* tool : selected) {
    const std::string name = tool->info().name;
    const std::string args = name == "render_html" ? R"({"html":")" + std::string(300, 'h') + R"("})" : code_args(300);
    for (const auto& confirm : confirms) {
      for (bool code : {false, true}) {
        for (bool bypass : {false, true}) {
          for (const auto& mode : modes) {
            gate_flags f = mode_flags(mode, code);
            f.confirm_tool_calls = confirm;
            f.bypass_permissions = bypass;
            const gate_policy p = fold_gate(f, true);
            memory_sink sink;
            auto r = read(streamed_call(0, "call_x", name, args), f, sink);
            const std::string where = name + " confirm=" + (confirm ? (*confirm ? "true" : "false") : "unset") +
                                      " code=" + std::to_string(code) + " bypass=" + std::to_string(bypass) +
                                      " mode=" + mode.value_or("unset");
            const bool card = !r.provisional.empty();
            if (needs_confirmation(p, tool->info().traits, /*high_risk=*/true)) {
              ++gated;
              EXPECT_FALSE(card) << where;
              EXPECT_TRUE(sink.all<tool_args>().empty()) << where;
            }
            EXPECT_EQ(card, !may_need_confirmation(p, tool->info())) << where;
            cards += card ? 1 : 0;
          }
        }
      }
    }
  }
  EXPECT_GT(cards, 0);  // the table covers both outcomes
  EXPECT_GT(gated, 0);
}

TEST(UnresolvedCard, ResultNamesTheFailure) {
  EXPECT_EQ(unresolved_card_result(std::nullopt), "");
  EXPECT_EQ(unresolved_card_result(make_error(errc::upstream_error, "the model server connection broke mid-stream: x")),
            k_card_lost_connection);
  EXPECT_EQ(unresolved_card_result(make_error(errc::upstream_error, "the model server ended the stream without [DONE]")),
            k_card_lost_connection);
  EXPECT_EQ(unresolved_card_result(make_error(errc::upstream_unavailable, "connection refused")), k_card_lost_connection);
  EXPECT_EQ(unresolved_card_result(make_error(errc::upstream_error, "the model server sent a malformed stream frame")),
            k_card_interrupted);
  EXPECT_EQ(unresolved_card_result(make_error(errc::invalid_request, "the model server reported: bad")), k_card_interrupted);
}

/// The loop around read_turn: reconciliation by id and closing cards that never got theirs.
class ProvisionalLoop : public ::testing::Test {
 protected:
  boost::asio::io_context ioc;
  fake_registry tools;
  fake_backend backend;
  approval_registry approvals{std::chrono::milliseconds(60000)};
  cancel_registry cancels;
  std::string root = std::filesystem::temp_directory_path() / ("warden-prov-test-" + std::to_string(::getpid()));
  tool_runtime rt{approvals, cancels, tools.reg, root, std::chrono::milliseconds(15000), permission_mode::full, nullptr, nullptr};
  loop_options opts;

  void SetUp() override {
    opts.enable_tools = true;
    opts.gate = mode_flags("off");
  }
  void TearDown() override { std::filesystem::remove_all(root); }

  loop_result run(loop_sink& sink) {
    model::chat_request r;
    model::message m;
    m.content.emplace_back(model::text_part{"go"});
    r.messages.push_back(m);
    return run_sync(ioc, run_tool_loop(backend, std::move(r), opts, rt, sink));
  }
};

TEST_F(ProvisionalLoop, CardIsReconciledByTheRealCardWithTheSameId) {
  const std::string args = code_args(400);
  auto turn = streamed_call(0, "call_py", "python", args);
  turn.push_back(model::finish_event{model::finish_reason::tool_calls});
  backend.turns.push_back(turn);
  backend.turns.push_back(text_turn("done"));
  memory_sink sink;
  auto r = run(sink);
  EXPECT_FALSE(r.failure);
  auto starts = sink.all<tool_start>();
  ASSERT_EQ(starts.size(), 2u);
  EXPECT_TRUE(starts[0].provisional);
  EXPECT_FALSE(starts[1].provisional);
  EXPECT_EQ(starts[1].call_id, "call_py");
  EXPECT_EQ(starts[1].arguments, json::parse(args));
  auto ends = sink.all<tool_end>();
  ASSERT_EQ(ends.size(), 1u);  // the real card's end only
  EXPECT_EQ(ends[0].call_id, "call_py");
  EXPECT_EQ(joined_args(sink, "call_py"), args);
  EXPECT_EQ(tools.python->calls.size(), 1u);
}

TEST_F(ProvisionalLoop, UpstreamBreakClosesTheCard) {
  const std::vector<std::pair<error, std::string>> cases{
      {make_error(errc::upstream_error, "the model server connection broke mid-stream: reset"), k_card_lost_connection},
      {make_error(errc::upstream_error, "the model server sent a malformed stream frame"), k_card_interrupted}};
  for (const auto& [failure, want] : cases) {
    auto turn = streamed_call(0, "call_py", "python", code_args(400));
    turn.pop_back();  // no tool_call_finished: the stream breaks mid-call
    turn.push_back(model::error_event{failure});
    backend.turns.push_back(turn);
    memory_sink sink;
    auto r = run(sink);
    ASSERT_TRUE(r.failure);
    auto ends = sink.all<tool_end>();
    ASSERT_EQ(ends.size(), 1u) << failure.message;
    EXPECT_EQ(ends[0].call_id, "call_py");
    EXPECT_EQ(ends[0].tool, "python");
    EXPECT_EQ(ends[0].result, want);
    EXPECT_TRUE(std::holds_alternative<tool_end>(sink.events.back()));
    EXPECT_TRUE(tools.python->calls.empty());
  }
}

TEST_F(ProvisionalLoop, CardOfARenamedIdIsClosedEmpty) {
  // A repeated tool_call_started changes the call's id after its card opened under the old one:
  // the plan knows only the new id, so the old card is closed (result "") before the call runs.
  std::vector<model::stream_event> turn{model::tool_call_started{0, "call_old", "python"},
                                        model::tool_call_arguments_delta{0, code_args(300)},
                                        model::tool_call_started{0, "call_new", ""}, model::tool_call_finished{0},
                                        model::finish_event{model::finish_reason::tool_calls}};
  backend.turns.push_back(turn);
  backend.turns.push_back(text_turn("done"));
  memory_sink sink;
  run(sink);
  auto ends = sink.all<tool_end>();
  ASSERT_EQ(ends.size(), 2u);
  EXPECT_EQ(ends[0].call_id, "call_old");
  EXPECT_EQ(ends[0].result, "");
  EXPECT_EQ(ends[1].call_id, "call_new");
}

// An adversarial stream: a python call without an id, a long render_html call with id X (it gets
// its card: not gated under confirm_code_execution), then the python call claims id X. The card
// must never be reconciled with the python call, which is gated: the python call gets a fresh id.
TEST_F(ProvisionalLoop, ACardIsNeverReconciledWithAnotherToolsCallThatTookItsId) {
  opts.gate.confirm_code_execution = true;
  std::vector<model::stream_event> turn{model::tool_call_started{0, "", "python"},
                                        model::tool_call_arguments_delta{0, R"j({"code":"print(1)"})j"},
                                        model::tool_call_started{1, "X", "render_html"},
                                        model::tool_call_arguments_delta{1, code_args(300)},
                                        model::tool_call_started{0, "X", ""},
                                        model::finish_event{model::finish_reason::tool_calls}};
  backend.turns.push_back(turn);
  backend.turns.push_back(text_turn("done"));
  class denying_sink : public memory_sink {
   public:
    explicit denying_sink(approval_registry& a) : a_(a) {}
    boost::asio::awaitable<bool> emit(loop_event ev) override {
      if (auto* st = std::get_if<tool_start>(&ev); st && st->awaiting_confirmation) {
        a_.resolve(st->approval_id, approval_decision::deny, std::nullopt);
      }
      co_return co_await memory_sink::emit(std::move(ev));
    }
   private:
    approval_registry& a_;
  };
  denying_sink sink(approvals);
  run(sink);
  for (const auto& st : sink.all<tool_start>()) {
    if (st.call_id == "X") {
      EXPECT_EQ(st.tool, "render_html");  // the card's id only ever names the render_html call
      EXPECT_FALSE(st.awaiting_confirmation);
    } else {
      EXPECT_EQ(st.tool, "python");
    }
  }
  const auto starts = sink.all<tool_start>();
  EXPECT_TRUE(std::any_of(starts.begin(), starts.end(), [](const tool_start& t) { return t.provisional && t.call_id == "X"; }));
  EXPECT_TRUE(std::any_of(starts.begin(), starts.end(), [](const tool_start& t) { return t.tool == "python" && t.awaiting_confirmation; }));
}

TEST_F(ProvisionalLoop, ClientGoneGetsNothingMore) {
  class leaving_sink : public memory_sink {
   public:
    boost::asio::awaitable<bool> emit(loop_event ev) override {
      const bool args = std::holds_alternative<tool_args>(ev);
      co_await memory_sink::emit(std::move(ev));
      co_return !args;  // the client leaves at the first fragment
    }
  };
  auto turn = streamed_call(0, "call_py", "python", code_args(400));
  turn.push_back(model::error_event{make_error(errc::upstream_error, "the model server connection broke mid-stream")});
  backend.turns.push_back(turn);
  leaving_sink sink;
  auto r = run(sink);
  EXPECT_TRUE(r.client_gone);
  EXPECT_TRUE(sink.all<tool_end>().empty());
  EXPECT_TRUE(std::holds_alternative<tool_args>(sink.events.back()));
}

}  // namespace
}  // namespace warden::agent
