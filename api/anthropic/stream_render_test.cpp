// api/anthropic/stream_render.h: block indexes, deltas and the final message.
#include <gtest/gtest.h>

#include <optional>

#include "api/anthropic/stream_render.h"

namespace warden::api::anthropic {
namespace {

/// The SSE frames as (event name, data) pairs.
std::vector<std::pair<std::string, json>> frames(const std::string& sse) {
  std::vector<std::pair<std::string, json>> out;
  std::size_t pos = 0;
  while (pos < sse.size()) {
    const std::size_t end = sse.find("\n\n", pos);
    const std::string block = sse.substr(pos, end - pos);
    pos = end + 2;
    const std::size_t nl = block.find('\n');
    EXPECT_EQ(block.rfind("event: ", 0), 0u) << block;
    EXPECT_EQ(block.compare(nl + 1, 6, "data: "), 0) << block;
    out.emplace_back(block.substr(7, nl - 7), json::parse(block.substr(nl + 7)));
  }
  return out;
}

TEST(MessageBuilder, ThinkingTextAndTwoParallelToolCalls) {
  message_builder b("msg_1", "m");
  std::string sse = b.start_frame();
  const std::vector<model::stream_event> evs = {
      model::reasoning_delta{"plan"}, model::text_delta{""}, model::text_delta{"Hi"},
      model::tool_call_started{0, "up0", "get_"}, model::tool_call_started{0, "", "weather"},
      model::tool_call_arguments_delta{0, "{\"city\":"}, model::tool_call_arguments_delta{0, "\"Paris\"}"},
      model::tool_call_finished{0}, model::tool_call_started{1, "up1", "get_time"},
      model::tool_call_arguments_delta{1, "{}"}, model::tool_call_finished{1},
      model::finish_event{model::finish_reason::tool_calls}, model::usage_event{model::usage{7, 5, 12}}};
  for (const auto& e : evs) sse += b.on_model_event(e);
  const std::string reason = stop_reason_for(*b.finish(), b.had_tool_use(), false);
  EXPECT_EQ(reason, "tool_use");
  sse += b.finish_frames(reason, "", b.usage());
  auto f = frames(sse);
  std::vector<std::string> names;
  for (const auto& [n, d] : f) {
    names.push_back(n);
    EXPECT_EQ(d["type"], n);
  }
  EXPECT_EQ(names, (std::vector<std::string>{
                       "message_start", "content_block_start", "content_block_delta", "content_block_stop",  // thinking
                       "content_block_start", "content_block_delta", "content_block_stop",                   // text
                       "content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
                       "content_block_start", "content_block_delta", "content_block_stop", "message_delta",
                       "message_stop"}));
  EXPECT_EQ(f[1].second["content_block"], json::parse(R"({"type":"thinking","thinking":"","signature":""})"));
  EXPECT_EQ(f[2].second["delta"], json::parse(R"({"type":"thinking_delta","thinking":"plan"})"));
  EXPECT_EQ(f[5].second["delta"], json::parse(R"({"type":"text_delta","text":"Hi"})"));
  EXPECT_EQ(f[7].second["index"], 2);
  EXPECT_EQ(f[7].second["content_block"]["name"], "get_weather");  // the split name, whole
  EXPECT_EQ(f[7].second["content_block"]["id"].get<std::string>().rfind("toolu_", 0), 0u);
  // sent up to safe points (api/wire/json_prefix.h): the key waits for its value
  EXPECT_EQ(f[8].second["delta"], json::parse(R"({"type":"input_json_delta","partial_json":"{"})"));
  EXPECT_EQ(f[9].second["delta"], json::parse(R"({"type":"input_json_delta","partial_json":"\"city\":\"Paris\"}"})"));
  EXPECT_EQ(f[11].second["index"], 3);
  EXPECT_NE(f[11].second["content_block"]["id"], f[7].second["content_block"]["id"]);
  EXPECT_EQ(f[14].second["delta"], json::parse(R"({"stop_reason":"tool_use","stop_sequence":null})"));
  EXPECT_EQ(f[14].second["usage"], json::parse(R"({"input_tokens":7,"output_tokens":5})"));

  const json m = b.message(reason, "", b.usage());
  ASSERT_EQ(m["content"].size(), 4u);
  EXPECT_EQ(m["content"][0]["thinking"], "plan");
  EXPECT_EQ(m["content"][1]["text"], "Hi");
  EXPECT_EQ(m["content"][2]["input"], json::parse(R"({"city":"Paris"})"));
  EXPECT_EQ(m["content"][3]["input"], json::object());
  EXPECT_EQ(m["stop_reason"], "tool_use");
  EXPECT_EQ(m["id"], "msg_1");
}

TEST(MessageBuilder, NoEmptyTextBlockBeforeAToolBlock) {
  message_builder b("msg_2", "m");
  std::string sse;
  for (const auto& e : std::vector<model::stream_event>{model::text_delta{""}, model::tool_call_started{0, "", "f"},
                                                         model::tool_call_finished{0}}) {
    sse += b.on_model_event(e);
  }
  sse += b.finish_frames("tool_use", "", std::nullopt);
  auto f = frames(sse);
  ASSERT_GE(f.size(), 2u);
  EXPECT_EQ(f[0].second["content_block"]["type"], "tool_use");
  EXPECT_EQ(f[0].second["index"], 0);
}

TEST(MessageBuilder, ServerToolCallsAndResults) {
  message_builder b("msg_3", "m");
  agent::tool_start start;
  start.tool = "python";
  start.call_id = "call_1";
  start.arguments = json::parse(R"j({"code":"print(6*7)"})j");
  agent::tool_start provisional = start;
  provisional.provisional = true;
  provisional.call_id = "call_0";
  std::string sse = b.on_loop_event(agent::text_event("Let me compute."));
  sse += b.on_loop_event(provisional);  // not rendered
  sse += b.on_loop_event(start);
  sse += b.on_loop_event(agent::status_event("Running Python"));  // not rendered
  sse += b.on_loop_event(agent::end_event("python", "call_1", "42\n", false));
  sse += b.on_loop_event(agent::text_event("It is 42."));
  auto f = frames(sse);
  std::vector<std::string> names;
  for (const auto& [n, d] : f) names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"content_block_start", "content_block_delta", "content_block_stop",
                                             "content_block_start", "content_block_delta", "content_block_stop",
                                             "content_block_start", "content_block_stop", "tool_result",
                                             "content_block_start", "content_block_delta"}));
  const json call = f[3].second["content_block"];
  EXPECT_EQ(call["type"], "server_tool_use");
  EXPECT_EQ(call["id"].get<std::string>().rfind("srvtoolu_", 0), 0u);
  EXPECT_EQ(json::parse(f[4].second["delta"]["partial_json"].get<std::string>()), start.arguments);
  const json result = f[6].second["content_block"];
  EXPECT_EQ(result["type"], "python_tool_result");
  EXPECT_EQ(result["tool_use_id"], call["id"]);
  EXPECT_EQ(result["content"], json::parse(R"([{"type":"text","text":"42\n"}])"));
  EXPECT_EQ(f[8].second, (json{{"type", "tool_result"}, {"tool_use_id", call["id"]}, {"content", "42\n"}}));
  EXPECT_EQ(f[9].second["index"], 3);
  const json m = b.message("end_turn", "", std::nullopt);
  EXPECT_EQ(m["content"][1]["input"], start.arguments);
}

TEST(MessageBuilder, MalformedArgumentsStillReassembleToTheMessagesObject) {
  for (const std::vector<std::string>& pieces :
       std::vector<std::vector<std::string>>{{"[1,", "2]"}, {"{\"a\":"}, {"{\"a\":1}", " trailing"},
                                             {"{\"a\":\"\\ud800\"}"}, {"{\"a\":\"x", "\"}"}}) {
    message_builder b("msg_4", "m");
    std::string sse = b.on_model_event(model::tool_call_started{0, "", "f"});
    for (const auto& p : pieces) sse += b.on_model_event(model::tool_call_arguments_delta{0, p});
    sse += b.on_model_event(model::tool_call_finished{0});
    std::string joined;
    for (const auto& [name, data] : frames(sse)) {
      if (name == "content_block_delta") joined += data["delta"]["partial_json"].get<std::string>();
    }
    auto parsed = parse_json(joined);
    ASSERT_TRUE(parsed.has_value() && parsed->is_object()) << pieces[0] << " → " << joined;
    EXPECT_EQ(b.message("tool_use", "", std::nullopt)["content"][0]["input"], *parsed) << joined;
  }
}

/// Checks the block order (start, deltas, stop; one block open at a time, indexes 0, 1, …) and
/// returns each tool_use block's name and reassembled input.
std::vector<std::pair<std::string, json>> tool_blocks(const std::string& sse) {
  std::vector<std::pair<std::string, json>> out;
  std::optional<std::size_t> open;
  std::size_t next = 0;
  std::string args;
  for (const auto& [name, data] : frames(sse)) {
    if (name == "content_block_start") {
      EXPECT_FALSE(open.has_value()) << "a block started while another was open";
      EXPECT_EQ(data["index"], next);
      open = next++;
      args.clear();
      if (data["content_block"]["type"] == "tool_use") out.emplace_back(data["content_block"]["name"], json());
    } else if (name == "content_block_delta") {
      EXPECT_EQ(open, data["index"].get<std::size_t>());
      if (data["delta"]["type"] == "input_json_delta") args += data["delta"]["partial_json"].get<std::string>();
    } else if (name == "content_block_stop") {
      EXPECT_EQ(open, data["index"].get<std::size_t>());
      open.reset();
      if (!out.empty() && out.back().second.is_null()) out.back().second = json::parse(args);
    }
  }
  EXPECT_FALSE(open.has_value());
  return out;
}

TEST(MessageBuilder, InterleavedToolCallsEachGetTheirWholeInput) {
  // The upstream sends two calls' fragments in turn (index 0, 1, 0, 1, …), ends both at the end.
  const std::vector<model::stream_event> evs = {
      model::tool_call_started{0, "a", "get_weather"}, model::tool_call_started{1, "b", "get_"},
      model::tool_call_started{1, "", "time"}, model::tool_call_arguments_delta{0, "{\"ci"},
      model::tool_call_arguments_delta{1, "{\"tz"}, model::tool_call_arguments_delta{0, "ty\":\"Pa"},
      model::tool_call_arguments_delta{1, "\":\"UTC\"}"}, model::tool_call_arguments_delta{0, "ris\"}"},
      model::tool_call_started{2, "c", "noop"}, model::tool_call_arguments_delta{2, "{}"},
      model::tool_call_finished{0}, model::tool_call_finished{1}, model::tool_call_finished{2},
      model::finish_event{model::finish_reason::tool_calls}};
  message_builder b("msg_5", "m");
  std::string sse;
  for (const auto& e : evs) sse += b.on_model_event(e);
  sse += b.finish_frames("tool_use", "", std::nullopt);
  const auto blocks = tool_blocks(sse);
  ASSERT_EQ(blocks.size(), 3u) << sse;
  EXPECT_EQ(blocks[0], (std::pair<std::string, json>{"get_weather", json{{"city", "Paris"}}}));
  EXPECT_EQ(blocks[1], (std::pair<std::string, json>{"get_time", json{{"tz", "UTC"}}}));
  EXPECT_EQ(blocks[2], (std::pair<std::string, json>{"noop", json::object()}));
  const json m = b.message("tool_use", "", std::nullopt);
  ASSERT_EQ(m["content"].size(), 3u);
  EXPECT_EQ(m["content"][0]["input"], json({{"city", "Paris"}}));
  EXPECT_EQ(m["content"][1]["input"], json({{"tz", "UTC"}}));
  EXPECT_EQ(m["content"][1]["name"], "get_time");
  EXPECT_EQ(m["content"][2]["input"], json::object());

  // Not streamed: the same events, only the message.
  message_builder quiet("msg_6", "m");
  for (const auto& e : evs) (void)quiet.on_model_event(e);
  EXPECT_EQ(quiet.message("tool_use", "", std::nullopt)["content"][1]["input"], json({{"tz", "UTC"}}));
}

TEST(MessageBuilder, InterleavedCallsCutShortOrFollowedByTextStillCloseInOrder) {
  // The first call never completes its object: the second waits until another event ends it.
  message_builder b("msg_7", "m");
  std::string sse;
  for (const auto& e : std::vector<model::stream_event>{
           model::tool_call_started{0, "", "f"}, model::tool_call_arguments_delta{0, "{\"a\":\"x\""},
           model::tool_call_started{1, "", "g"}, model::tool_call_arguments_delta{1, "{\"b\":2}"},
           model::tool_call_finished{1}, model::text_delta{"after"}}) {
    sse += b.on_model_event(e);
  }
  sse += b.finish_frames("tool_use", "", std::nullopt);
  const auto blocks = tool_blocks(sse);
  ASSERT_EQ(blocks.size(), 2u) << sse;
  EXPECT_EQ(blocks[0].second, json({{"a", "x"}}));  // closed where it was cut
  EXPECT_EQ(blocks[1].second, json({{"b", 2}}));
  const json m = b.message("tool_use", "", std::nullopt);
  ASSERT_EQ(m["content"].size(), 3u);
  EXPECT_EQ(m["content"][2]["text"], "after");
}

TEST(StopReason, Mapping) {
  EXPECT_STREQ(stop_reason_for(model::finish_reason::stop, false, false), "end_turn");
  EXPECT_STREQ(stop_reason_for(model::finish_reason::stop, true, false), "tool_use");
  EXPECT_STREQ(stop_reason_for(model::finish_reason::tool_calls, false, false), "tool_use");
  EXPECT_STREQ(stop_reason_for(model::finish_reason::length, false, false), "max_tokens");
  EXPECT_STREQ(stop_reason_for(model::finish_reason::content_filter, false, false), "refusal");
  EXPECT_STREQ(stop_reason_for(model::finish_reason::stop, false, true), "stop_sequence");
}

}  // namespace
}  // namespace warden::api::anthropic
