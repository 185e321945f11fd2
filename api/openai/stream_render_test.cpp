// Golden transcript for api/openai/stream_render.h: one typed event script rendered by
// chunk_renderer must equal tests/golden/openai_tool_loop.sse byte for byte. The golden file
// was written by hand from the frames the loop wrote before the typed core (d319170:
// api/openai/chat_handler.cpp sse_sink, agent/tool_loop.cpp status_frame / output_frame /
// end_frame / provenance_of; nlohmann::json objects serialize with keys sorted), so the test
// proves byte compatibility with what clients saw before.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "api/openai/stream_render.h"
#include "common/sse.h"
#include "common/testing/source_root.h"

namespace warden::api::openai {
namespace {

std::filesystem::path repo_root() { return warden::testing::source_root(); }
using warden::testing::read_file;

/// Splits an SSE transcript into its frames (each ends with the blank line "\n\n").
std::vector<std::string> frames_of(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < s.size()) {
    const std::size_t end = s.find("\n\n", start);
    if (end == std::string::npos) {
      out.push_back(s.substr(start));
      break;
    }
    out.push_back(s.substr(start, end + 2 - start));
    start = end + 2;
  }
  return out;
}

agent::tool_start start_event(std::string tool, std::string call_id, json arguments, bool healed, std::string approval_id,
                              bool awaiting) {
  agent::tool_start s;
  s.tool = std::move(tool);
  s.call_id = std::move(call_id);
  s.arguments = std::move(arguments);
  s.healed = healed;
  s.approval_id = std::move(approval_id);
  s.awaiting_confirmation = awaiting;
  return s;
}

/// The script of tests/golden/openai_tool_loop.sse: an approved Python call, a healed
/// web_search call, a ping, the final text, finish, usage twice and [DONE].
std::string render_script() {
  const chunk_renderer r("chatcmpl-golden", 1700000000, "m");
  std::string out;
  out += r.role_frame();
  out += r.frame(model::reasoning_delta{"The user wants to see 1."});
  out += r.frame(model::text_delta{"Let me run it.\n"});
  out += r.frame(agent::tool_status{"Waiting for approval: Python"});
  out += r.frame(start_event("python", "call_1", json{{"code", "print(1)"}}, false, "appr_1", true));
  out += r.frame(agent::tool_status{"Running Python"});
  out += r.frame(agent::tool_output{"python", "call_1", "1\n"});
  out += r.frame(agent::tool_end{"python", "call_1", "1\n", false, "user", true});
  out += r.frame(agent::tool_status{""});
  out += r.frame(start_event("web_search", "call_2", json{{"query", "warden \"docs\""}, {"max_results", 3}}, true, "", false));
  out += r.frame(agent::end_event("web_search", "call_2", "No results \xE2\x80\x94 try again.", true));
  out += r.frame(model::ping_event{});
  out += r.frame(model::text_delta{"Done."});
  out += r.finish_frame(model::finish_reason::stop);
  out += r.usage_frame(model::usage{7, 5, 12});
  out += r.usage_frame(std::nullopt);
  out += sse::done_frame();
  return out;
}

TEST(OpenaiStreamRender, GoldenToolLoopTranscriptByteForByte) {
  const auto path = repo_root() / "tests" / "golden" / "openai_tool_loop.sse";
  const std::string golden = read_file(path);
  ASSERT_FALSE(golden.empty()) << "missing golden file " << path;
  const std::string rendered = render_script();

  // Frame by frame first, so a difference names the frame.
  const auto want = frames_of(golden);
  const auto got = frames_of(rendered);
  ASSERT_EQ(want.size(), 17u);
  EXPECT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < std::min(want.size(), got.size()); ++i) {
    EXPECT_EQ(got[i], want[i]) << "frame " << i;
  }
  EXPECT_EQ(rendered, golden);
}

TEST(OpenaiStreamRender, EveryDataFrameIsOneLineOfJsonOrDone) {
  // Readers split on blank lines: a payload must never contain a raw newline.
  for (const auto& f : frames_of(render_script())) {
    ASSERT_GE(f.size(), 2u);
    EXPECT_EQ(f.substr(f.size() - 2), "\n\n");
    const std::string body = f.substr(0, f.size() - 2);
    EXPECT_EQ(body.find('\n'), std::string::npos) << f;
    if (body.rfind(": ", 0) == 0) continue;  // comment (ping)
    ASSERT_EQ(body.rfind("data: ", 0), 0u) << f;
    const std::string payload = body.substr(6);
    if (payload == "[DONE]") continue;
    EXPECT_TRUE(parse_json(payload).has_value()) << f;
  }
}

TEST(OpenaiStreamRender, ChunksShareIdCreatedAndModel) {
  const chunk_renderer r("chatcmpl-x", 42, "model-a");
  EXPECT_EQ(r.id(), "chatcmpl-x");
  EXPECT_EQ(r.created(), 42);
  for (const std::string& f : {r.role_frame(), r.frame(model::text_delta{"a"}), r.frame(model::reasoning_delta{"b"}),
                               r.finish_frame(model::finish_reason::tool_calls), r.usage_frame(model::usage{1, 2, 3})}) {
    auto j = parse_json(f.substr(6, f.size() - 8));
    ASSERT_TRUE(j.has_value()) << f;
    EXPECT_EQ((*j)["id"], "chatcmpl-x");
    EXPECT_EQ((*j)["created"], 42);
    EXPECT_EQ((*j)["model"], "model-a");
    EXPECT_EQ((*j)["object"], "chat.completion.chunk");
  }
}

TEST(OpenaiStreamRender, FinishReasonsAndUsage) {
  const chunk_renderer r("i", 1, "m");
  for (auto reason : {model::finish_reason::stop, model::finish_reason::length, model::finish_reason::tool_calls,
                      model::finish_reason::content_filter}) {
    const std::string f = r.finish_frame(reason);
    auto j = parse_json(f.substr(6, f.size() - 8));
    ASSERT_TRUE(j.has_value());
    EXPECT_EQ((*j)["choices"][0]["finish_reason"], model::to_string(reason));
    EXPECT_EQ((*j)["choices"][0]["delta"], json::object());
  }
  EXPECT_EQ(usage_json(model::usage{3, 4, 7}), json::parse(R"({"prompt_tokens":3,"completion_tokens":4,"total_tokens":7})"));
}

TEST(OpenaiStreamRender, InvalidUtf8InTextIsReplacedNotThrown) {
  const chunk_renderer r("i", 1, "m");
  std::string f;
  EXPECT_NO_THROW(f = r.frame(model::text_delta{std::string("a\xff", 2)}));
  EXPECT_NE(f.find("a\xEF\xBF\xBD"), std::string::npos) << f;
  EXPECT_NO_THROW(f = r.frame(agent::tool_output{"python", "c", std::string("\xc3", 1)}));
  EXPECT_NE(f.find("\xEF\xBF\xBD"), std::string::npos) << f;
}

TEST(OpenaiStreamRender, ProvisionalCardAndArgumentFragments) {
  const chunk_renderer r("i", 1, "m");
  agent::tool_start card = start_event("python", "call_9", json::object(), false, "", false);
  card.provisional = true;
  EXPECT_EQ(r.frame(card),
            "data: {\"approval_id\":\"\",\"arguments\":{},\"awaiting_confirmation\":false,"
            "\"provenance\":{\"healed\":false,\"provisional\":true,\"source\":\"local\"},"
            "\"tool_call_id\":\"call_9\",\"tool_name\":\"python\",\"type\":\"tool_start\"}\n\n");
  EXPECT_EQ(r.frame(agent::tool_args{"python", "call_9", "{\"code\":\"pr"}),
            "data: {\"text\":\"{\\\"code\\\":\\\"pr\",\"tool_call_id\":\"call_9\",\"tool_name\":\"python\","
            "\"type\":\"tool_args\"}\n\n");
  // Not provisional: no "provisional" key at all (the golden layout).
  const std::string plain = r.frame(start_event("python", "call_9", json{{"code", "x"}}, false, "", false));
  EXPECT_EQ(plain.find("provisional"), std::string::npos) << plain;
  EXPECT_EQ(plain.find("risk"), std::string::npos) << plain;
}

TEST(OpenaiStreamRender, RiskNoteIsATopLevelKeyWhenSet) {
  const chunk_renderer r("i", 1, "m");
  agent::tool_start s = start_event("terminal", "call_r", json{{"command", "rm -rf x"}}, false, "appr_r", true);
  agent::risk_note note;
  note.level = "high";
  note.reasons = {"deletes files", "outside the workspace"};
  s.risk = note;
  const std::string f = r.frame(s);
  auto j = parse_json(f.substr(6, f.size() - 8));
  ASSERT_TRUE(j.has_value()) << f;
  EXPECT_EQ((*j)["risk"], json::parse(R"({"level":"high","reasons":["deletes files","outside the workspace"]})"));
  EXPECT_EQ((*j)["provenance"], json::parse(R"({"source":"local","healed":false})"));
  EXPECT_EQ((*j)["awaiting_confirmation"], true);

  s.risk = agent::risk_note{"low", {}};
  const std::string low = r.frame(s);
  EXPECT_NE(low.find(R"("risk":{"level":"low","reasons":[]})"), std::string::npos) << low;
}

}  // namespace
}  // namespace warden::api::openai
