// engine/chat_backend.h: the OpenAI chunk decoder (against a real llama-server recording and
// hand-written tool-call streams) and the request / message encoders (the OpenAI wire shape).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/testing/source_root.h"
#include "engine/chat_backend.h"

namespace warden::engine {
namespace {

// ---------------------------------------------------------------------------------------------
// Helpers

std::filesystem::path repo_root() { return warden::testing::source_root(); }
using warden::testing::read_file;

/// The JSON payloads of a recorded SSE stream's `data:` lines, up to [DONE].
std::vector<json> recorded_chunks(const std::string& sse, bool* saw_done) {
  std::vector<json> out;
  std::istringstream in(sse);
  std::string line;
  *saw_done = false;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind("data:", 0) != 0) continue;
    std::string payload = line.substr(5);
    if (!payload.empty() && payload.front() == ' ') payload.erase(0, 1);
    if (payload == "[DONE]") {
      *saw_done = true;
      break;
    }
    out.push_back(json::parse(payload));
  }
  return out;
}

/// One line per event, for readable comparisons.
std::string describe(const model::stream_event& e) {
  if (const auto* t = std::get_if<model::text_delta>(&e)) return "text " + t->text;
  if (const auto* r = std::get_if<model::reasoning_delta>(&e)) return "reasoning " + r->text;
  if (const auto* s = std::get_if<model::tool_call_started>(&e)) {
    return "started " + std::to_string(s->index) + " id=" + s->id + " name=" + s->name;
  }
  if (const auto* a = std::get_if<model::tool_call_arguments_delta>(&e)) {
    return "args " + std::to_string(a->index) + " " + a->fragment;
  }
  if (const auto* f = std::get_if<model::tool_call_finished>(&e)) return "finished " + std::to_string(f->index);
  if (const auto* u = std::get_if<model::usage_event>(&e)) {
    return "usage " + std::to_string(u->usage.prompt_tokens) + "/" + std::to_string(u->usage.completion_tokens) + "/" +
           std::to_string(u->usage.total_tokens);
  }
  if (const auto* f = std::get_if<model::finish_event>(&e)) return std::string("finish ") + model::to_string(f->reason);
  if (std::holds_alternative<model::ping_event>(e)) return "ping";
  return "error " + std::get<model::error_event>(e).failure.message;
}

std::vector<std::string> describe_all(const std::vector<model::stream_event>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) out.push_back(describe(e));
  return out;
}

/// Decodes every chunk (each given as JSON text), then finish(); all events in order.
std::vector<model::stream_event> decode_all(const std::vector<std::string>& chunks, bool call_finish = true) {
  openai_chunk_decoder d;
  std::vector<model::stream_event> out;
  for (const auto& c : chunks) {
    for (auto& e : d.decode(json::parse(c))) out.push_back(std::move(e));
  }
  if (call_finish) {
    for (auto& e : d.finish()) out.push_back(std::move(e));
  }
  return out;
}

/// The tool-call invariants of model/events.h: dense indexes from 0 in order of first
/// appearance, a started event before any argument or finished event of its index, at most one
/// finished per index and nothing for it afterwards, every call finished before a finish_event
/// and by the end.
void expect_tool_call_invariants(const std::vector<model::stream_event>& events) {
  std::size_t next_index = 0;
  std::set<std::size_t> started, finished;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const auto& e = events[i];
    if (const auto* s = std::get_if<model::tool_call_started>(&e)) {
      if (!started.count(s->index)) {
        EXPECT_EQ(s->index, next_index) << "event " << i << ": indexes must be dense";
        ++next_index;
        started.insert(s->index);
      }
      EXPECT_FALSE(finished.count(s->index)) << "event " << i << ": started after finished";
    } else if (const auto* a = std::get_if<model::tool_call_arguments_delta>(&e)) {
      EXPECT_TRUE(started.count(a->index)) << "event " << i << ": arguments before started";
      EXPECT_FALSE(finished.count(a->index)) << "event " << i << ": arguments after finished";
    } else if (const auto* f = std::get_if<model::tool_call_finished>(&e)) {
      EXPECT_TRUE(started.count(f->index)) << "event " << i << ": finished before started";
      EXPECT_TRUE(finished.insert(f->index).second) << "event " << i << ": finished twice";
    } else if (std::holds_alternative<model::finish_event>(e)) {
      EXPECT_EQ(finished.size(), started.size()) << "event " << i << ": a call still open at finish_event";
    }
  }
  EXPECT_EQ(finished, started) << "every call is finished by the end";
}

// ---------------------------------------------------------------------------------------------
// (a) the real llama-server recording

TEST(ChatBackendDecoder, RealLlamaServerRecording) {
  const auto path = repo_root() / "tests" / "golden" / "llama_server_stream.sse";
  const std::string sse = read_file(path);
  ASSERT_FALSE(sse.empty()) << "missing " << path;
  bool saw_done = false;
  const auto chunks = recorded_chunks(sse, &saw_done);
  ASSERT_TRUE(saw_done);
  ASSERT_GT(chunks.size(), 2u);

  // What the recording says, read straight from its JSON.
  std::string want_text;
  std::vector<std::string> want_finish;
  std::optional<model::usage> want_usage;
  for (const auto& c : chunks) {
    for (const auto& ch : c["choices"]) {
      const auto& content = ch["delta"].value("content", json());
      if (content.is_string()) want_text += content.get<std::string>();
      if (ch["finish_reason"].is_string()) want_finish.push_back(ch["finish_reason"].get<std::string>());
    }
    if (c.contains("usage")) {
      want_usage = model::usage{c["usage"]["prompt_tokens"].get<std::int64_t>(),
                                c["usage"]["completion_tokens"].get<std::int64_t>(),
                                c["usage"]["total_tokens"].get<std::int64_t>()};
    }
  }
  ASSERT_EQ(want_finish.size(), 1u);
  ASSERT_TRUE(want_usage.has_value());
  ASSERT_FALSE(want_text.empty());

  openai_chunk_decoder d;
  std::vector<model::stream_event> events;
  for (const auto& c : chunks) {
    for (auto& e : d.decode(c)) events.push_back(std::move(e));
  }
  EXPECT_TRUE(d.finish().empty()) << "no tool calls were open";

  std::string text;
  std::vector<model::finish_reason> finishes;
  std::vector<model::usage> usages;
  std::size_t finish_pos = 0, usage_pos = 0;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const auto& e = events[i];
    if (const auto* t = std::get_if<model::text_delta>(&e)) {
      EXPECT_FALSE(t->text.empty()) << "no empty text deltas";
      EXPECT_TRUE(finishes.empty()) << "text after finish";
      text += t->text;
    } else if (const auto* f = std::get_if<model::finish_event>(&e)) {
      finishes.push_back(f->reason);
      finish_pos = i;
    } else if (const auto* u = std::get_if<model::usage_event>(&e)) {
      usages.push_back(u->usage);
      usage_pos = i;
    } else {
      ADD_FAILURE() << "unexpected event " << describe(e);
    }
  }
  EXPECT_EQ(text, want_text);
  ASSERT_EQ(finishes.size(), 1u);
  EXPECT_EQ(model::to_string(finishes[0]), want_finish[0]);
  ASSERT_EQ(usages.size(), 1u);
  EXPECT_EQ(usages[0], *want_usage);
  EXPECT_EQ(usages[0], (model::usage{29, 12, 41}));  // the recording's numbers, as a cross-check
  EXPECT_LT(finish_pos, usage_pos) << "the recording sends usage after the finish chunk";
}

// ---------------------------------------------------------------------------------------------
// (b) streamed tool calls

TEST(ChatBackendDecoder, ToolCallsSplitOverChunks) {
  const std::vector<std::string> chunks = {
      R"({"choices":[{"index":0,"delta":{"role":"assistant","content":null},"finish_reason":null}]})",
      R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}]})",
      R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"loc"}}]},"finish_reason":null}]})",
      R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ation\": \"Par"}}]},"finish_reason":null}]})",
      R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"is\"}"}}]},"finish_reason":null}]})",
      R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"get_time","arguments":"{\"tz\":"}}]},"finish_reason":null}]})",
      R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"\"CET\"}"}}]},"finish_reason":null}]})",
      R"({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]})",
      R"({"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":20,"total_tokens":30}})",
  };
  const auto events = decode_all(chunks);
  const std::vector<std::string> want = {
      "started 0 id=call_a name=get_weather",
      "args 0 {\"loc",
      "args 0 ation\": \"Par",
      "args 0 is\"}",
      "started 1 id=call_b name=get_time",
      "args 1 {\"tz\":",
      "args 1 \"CET\"}",
      "finished 0",
      "finished 1",
      "finish tool_calls",
      "usage 10/20/30",
  };
  EXPECT_EQ(describe_all(events), want);
  expect_tool_call_invariants(events);

  // The fragments concatenate back to the arguments, which parse.
  std::vector<std::string> args(2);
  for (const auto& e : events) {
    if (const auto* a = std::get_if<model::tool_call_arguments_delta>(&e)) args.at(a->index) += a->fragment;
  }
  EXPECT_EQ(json::parse(args[0]), json::parse(R"({"location":"Paris"})"));
  EXPECT_EQ(json::parse(args[1]), json::parse(R"({"tz":"CET"})"));
}

TEST(ChatBackendDecoder, SparseUpstreamIndexesBecomeDense) {
  const auto events = decode_all({
      R"({"choices":[{"delta":{"tool_calls":[{"index":3,"id":"c3","function":{"name":"a","arguments":"{}"}}]}}]})",
      R"({"choices":[{"delta":{"tool_calls":[{"index":7,"id":"c7","function":{"name":"b","arguments":"{"}}]}}]})",
      R"({"choices":[{"delta":{"tool_calls":[{"index":3,"function":{"arguments":" "}}]}}]})",
      R"({"choices":[{"delta":{"tool_calls":[{"index":7,"function":{"arguments":"}"}}]}}]})",
      R"({"choices":[{"delta":{},"finish_reason":"tool_calls"}]})",
  });
  EXPECT_EQ(describe_all(events), (std::vector<std::string>{"started 0 id=c3 name=a", "args 0 {}", "started 1 id=c7 name=b",
                                                            "args 1 {", "args 0  ", "args 1 }", "finished 0", "finished 1",
                                                            "finish tool_calls"}));
  expect_tool_call_invariants(events);
}

TEST(ChatBackendDecoder, TwoCallsInOneChunkAndFinishInTheSameChunk) {
  const auto events = decode_all({
      R"({"choices":[{"delta":{"tool_calls":[
          {"index":0,"id":"x","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}},
          {"index":1,"id":"y","type":"function","function":{"name":"g","arguments":"{\"b\":2}"}}]},
        "finish_reason":"tool_calls"}]})",
  });
  EXPECT_EQ(describe_all(events),
            (std::vector<std::string>{"started 0 id=x name=f", "args 0 {\"a\":1}", "started 1 id=y name=g", "args 1 {\"b\":2}",
                                      "finished 0", "finished 1", "finish tool_calls"}));
  expect_tool_call_invariants(events);
}

TEST(ChatBackendDecoder, NameSplitOverChunksRepeatsStarted) {
  // Some servers split the name; a repeated started for the same index extends it.
  const auto events = decode_all({
      R"({"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"get_"}}]}}]})",
      R"({"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"weather","arguments":"{}"}}]}}]})",
      R"({"choices":[{"delta":{},"finish_reason":"tool_calls"}]})",
  });
  EXPECT_EQ(describe_all(events), (std::vector<std::string>{"started 0 id=c name=get_", "started 0 id= name=weather",
                                                            "args 0 {}", "finished 0", "finish tool_calls"}));
  expect_tool_call_invariants(events);
}

TEST(ChatBackendDecoder, FinishClosesCallsThatNeverGotAFinishReason) {
  openai_chunk_decoder d;
  auto e1 = d.decode(json::parse(
      R"({"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{"}}]}}]})"));
  auto e2 = d.decode(json::parse(
      R"({"choices":[{"delta":{"tool_calls":[{"index":1,"id":"b","function":{"name":"g","arguments":"{}"}}]}}]})"));
  EXPECT_EQ(describe_all(e1), (std::vector<std::string>{"started 0 id=a name=f", "args 0 {"}));
  EXPECT_EQ(describe_all(e2), (std::vector<std::string>{"started 1 id=b name=g", "args 1 {}"}));
  EXPECT_EQ(describe_all(d.finish()), (std::vector<std::string>{"finished 0", "finished 1"}));
  EXPECT_TRUE(d.finish().empty()) << "a call is finished once";
}

TEST(ChatBackendDecoder, FinishAfterFinishReasonAddsNothing) {
  openai_chunk_decoder d;
  d.decode(json::parse(R"({"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f"}}]}}]})"));
  auto fin = d.decode(json::parse(R"({"choices":[{"delta":{},"finish_reason":"tool_calls"}]})"));
  EXPECT_EQ(describe_all(fin), (std::vector<std::string>{"finished 0", "finish tool_calls"}));
  EXPECT_TRUE(d.finish().empty());
}

TEST(ChatBackendDecoder, ObjectArgumentsBecomeTheirJsonText) {
  const auto events = decode_all({
      R"({"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":{"b":[true,null],"a":1.5,"s":"x\"y"}}}]},"finish_reason":"tool_calls"}]})",
  });
  std::string args;
  for (const auto& e : events) {
    if (const auto* a = std::get_if<model::tool_call_arguments_delta>(&e)) args += a->fragment;
  }
  EXPECT_EQ(args, dump_safe(json::parse(R"({"b":[true,null],"a":1.5,"s":"x\"y"})")));
  EXPECT_EQ(json::parse(args), json::parse(R"({"a":1.5,"b":[true,null],"s":"x\"y"})"));
  expect_tool_call_invariants(events);
}

TEST(ChatBackendDecoder, OrderWithinAChunk) {
  // usage, reasoning, tool-call fragments, text, finish.
  const auto events = decode_all(
      {R"({"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3},
           "choices":[{"delta":{"content":"hi","reasoning_content":"think",
                                "tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":"{}"}}]},
                       "finish_reason":"stop"}]})"},
      false);
  EXPECT_EQ(describe_all(events), (std::vector<std::string>{"usage 1/2/3", "reasoning think", "started 0 id=c name=f",
                                                            "args 0 {}", "text hi", "finished 0", "finish stop"}));
}

TEST(ChatBackendDecoder, ReasoningAndFinishReasons) {
  const auto events = decode_all({
      R"({"choices":[{"delta":{"reasoning_content":"a"}}]})",
      R"({"choices":[{"delta":{"reasoning_content":""}}]})",
      R"({"choices":[{"delta":{"content":""}}]})",
      R"({"choices":[{"delta":{"content":"b"},"finish_reason":"length"}]})",
  });
  EXPECT_EQ(describe_all(events), (std::vector<std::string>{"reasoning a", "text b", "finish length"}));
  EXPECT_EQ(describe_all(decode_all({R"({"choices":[{"delta":{},"finish_reason":"content_filter"}]})"})),
            (std::vector<std::string>{"finish content_filter"}));
  // An unknown reason still ends the turn (as stop).
  EXPECT_EQ(describe_all(decode_all({R"({"choices":[{"delta":{},"finish_reason":"eos"}]})"})),
            (std::vector<std::string>{"finish stop"}));
}

TEST(ChatBackendDecoder, MalformedPiecesDoNotCrash) {
  const std::vector<std::string> chunks = {
      R"([])",
      R"("text")",
      R"(null)",
      R"(42)",
      R"({})",
      R"({"choices":null})",
      R"({"choices":"x"})",
      R"({"choices":[]})",
      R"({"choices":[1]})",
      R"({"choices":[null]})",
      R"({"choices":[{"delta":"x"}]})",
      R"({"choices":[{"delta":[]}]})",
      R"({"choices":[{"delta":{"content":5,"reasoning_content":{}}}]})",
      R"({"choices":[{"delta":{"tool_calls":"x"}}]})",
      R"({"choices":[{"delta":{"tool_calls":{"index":0}}}]})",
      R"({"choices":[{"delta":{"tool_calls":[1,"a",null,[],true]}}]})",
      R"({"choices":[{"delta":{"tool_calls":[{"index":"0","function":"x"}]}}]})",
      R"({"choices":[{"delta":{"tool_calls":[{"function":{"name":"no_index","arguments":"{"}}]}}]})",
      R"({"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"}"}}]}}]})",
      R"({"choices":[{"delta":{"tool_calls":[{"index":-1,"id":7,"function":{"name":3,"arguments":false}}]}}]})",
      R"({"choices":[{"delta":{"tool_calls":[{"index":1.5,"function":{"arguments":null}}]}}]})",
      R"({"choices":[{"delta":{"tool_calls":[{"index":9223372036854775807,"function":{"arguments":[1]}}]}}]})",
      R"({"choices":[{"delta":{"tool_calls":[{"index":18446744073709551615}]}}]})",
      R"({"usage":"x"})",
      R"({"usage":{"prompt_tokens":"1","completion_tokens":null,"total_tokens":2.5}})",
      R"({"choices":[{"delta":{},"finish_reason":7}]})",
      R"({"choices":[{"finish_reason":"stop"}]})",
  };
  openai_chunk_decoder d;
  std::vector<model::stream_event> events;
  for (const auto& c : chunks) {
    std::vector<model::stream_event> got;
    EXPECT_NO_THROW(got = d.decode(json::parse(c))) << c;
    for (auto& e : got) events.push_back(std::move(e));
  }
  std::vector<model::stream_event> tail;
  EXPECT_NO_THROW(tail = d.finish());
  for (auto& e : tail) events.push_back(std::move(e));
  expect_tool_call_invariants(events);

  // The usage with wrong types counts zero for those fields; the last chunk's finish reason ends it.
  const auto described = describe_all(events);
  EXPECT_NE(std::find(described.begin(), described.end(), "usage 0/0/0"), described.end());
  EXPECT_EQ(std::count(described.begin(), described.end(), "finish stop"), 1);
  // No text or reasoning came from the non-string deltas.
  for (const auto& s : described) {
    EXPECT_NE(s.rfind("text", 0), 0u) << s;
    EXPECT_NE(s.rfind("reasoning", 0), 0u) << s;
  }
}

// ---------------------------------------------------------------------------------------------
// (c) encode_openai_request / encode_openai_message

model::message msg(model::role r, std::vector<model::content_part> parts, std::string name = "", json extra = json()) {
  model::message m;
  m.role = r;
  m.content = std::move(parts);
  m.name = std::move(name);
  m.extra = std::move(extra);
  return m;
}

TEST(ChatBackendEncode, UserStringContentIsAString) {
  EXPECT_EQ(encode_openai_message(msg(model::role::user, {model::text_part{"hi"}})),
            json::parse(R"({"role":"user","content":"hi"})"));
  EXPECT_EQ(encode_openai_message(msg(model::role::system, {model::text_part{"be brief"}})),
            json::parse(R"({"role":"system","content":"be brief"})"));
}

TEST(ChatBackendEncode, SeveralPartsBecomeAList) {
  const json want = json::parse(R"({"role":"user","content":[
      {"type":"text","text":"look at"},
      {"type":"image_url","image_url":{"url":"https://example.com/a.png","detail":"high"}},
      {"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}},
      {"type":"input_audio","input_audio":{"data":"UklGRg==","format":"wav"}},
      {"type":"text","text":"and this"}]})");
  const auto m = msg(model::role::user,
                     {model::text_part{"look at"}, model::image_part{"https://example.com/a.png", "high"},
                      model::image_part{"data:image/png;base64,iVBORw0KGgo=", ""},
                      model::opaque_part{json::parse(R"({"type":"input_audio","input_audio":{"data":"UklGRg==","format":"wav"}})")},
                      model::text_part{"and this"}});
  EXPECT_EQ(encode_openai_message(m), want);
}

TEST(ChatBackendEncode, SingleNonTextPartIsStillAList) {
  EXPECT_EQ(encode_openai_message(msg(model::role::user, {model::image_part{"https://x/y.jpg", "low"}})),
            json::parse(R"({"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x/y.jpg","detail":"low"}}]})"));
  const json opaque = json::parse(R"({"type":"file","file":{"file_id":"f1"},"whatever":[1,2]})");
  EXPECT_EQ(encode_openai_message(msg(model::role::user, {model::opaque_part{opaque}})),
            (json{{"role", "user"}, {"content", json::array({opaque})}}));
}

TEST(ChatBackendEncode, AssistantToolCallsWithoutText) {
  const auto m = msg(model::role::assistant, {model::tool_call_part{"call_1", "get_weather", R"({"city":"Paris"})"},
                                              model::tool_call_part{"call_2", "get_time", "{}"}});
  EXPECT_EQ(encode_openai_message(m), json::parse(R"({"role":"assistant","content":null,"tool_calls":[
      {"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},
      {"id":"call_2","type":"function","function":{"name":"get_time","arguments":"{}"}}]})"));
  // arguments stay the model's text even when it is not valid JSON
  const auto bad = msg(model::role::assistant, {model::tool_call_part{"c", "f", "{oops"}});
  EXPECT_EQ(encode_openai_message(bad)["tool_calls"][0]["function"]["arguments"], "{oops");
}

TEST(ChatBackendEncode, AssistantTextReasoningAndToolCall) {
  const auto m = msg(model::role::assistant, {model::reasoning_part{"step 1. "}, model::reasoning_part{"step 2."},
                                              model::text_part{"Checking."}, model::tool_call_part{"c", "f", "{}"}});
  EXPECT_EQ(encode_openai_message(m), json::parse(R"({"role":"assistant","content":"Checking.","reasoning_content":"step 1. step 2.",
      "tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]})"));
  // no reasoning part → no reasoning_content key; no calls → no tool_calls key
  const json plain = encode_openai_message(msg(model::role::assistant, {model::text_part{"ok"}}));
  EXPECT_EQ(plain, json::parse(R"({"role":"assistant","content":"ok"})"));
}

TEST(ChatBackendEncode, ToolMessage) {
  EXPECT_EQ(encode_openai_message(msg(model::role::tool, {model::tool_result_part{"call_1", "22 degrees", false}})),
            json::parse(R"({"role":"tool","tool_call_id":"call_1","content":"22 degrees"})"));
  EXPECT_EQ(encode_openai_message(msg(model::role::tool, {model::tool_result_part{"call_9", "", true}}, "get_weather")),
            json::parse(R"({"role":"tool","tool_call_id":"call_9","content":"","name":"get_weather"})"));
}

TEST(ChatBackendEncode, NameAndExtraKept) {
  const auto m = msg(model::role::user, {model::text_part{"hi"}}, "alice",
                     json::parse(R"({"cache_control":{"type":"ephemeral"},"weight":0})"));
  EXPECT_EQ(encode_openai_message(m),
            json::parse(R"({"role":"user","content":"hi","name":"alice","cache_control":{"type":"ephemeral"},"weight":0})"));
  const auto t = msg(model::role::tool, {model::tool_result_part{"c", "r", false}}, "", json::parse(R"({"x_meta":[1]})"));
  EXPECT_EQ(encode_openai_message(t), json::parse(R"({"role":"tool","tool_call_id":"c","content":"r","x_meta":[1]})"));
}

TEST(ChatBackendEncode, RequestSamplingToolsChoiceAndExtras) {
  model::chat_request req;
  req.messages.push_back(msg(model::role::system, {model::text_part{"sys"}}));
  req.messages.push_back(msg(model::role::user, {model::text_part{"hi"}}));
  req.tools.push_back(model::tool_spec{"get_weather", "Weather for a city",
                                       json::parse(R"({"type":"object","properties":{"city":{"type":"string"}},"required":["city"]})")});
  req.tools.push_back(model::tool_spec{"noop", "", json::parse(R"({"type":"object","properties":{}})")});
  req.tool_choice = model::tool_choice{model::tool_choice::mode::required, ""};
  req.parallel_tool_calls = false;
  req.sampling.temperature = 0.2;
  req.sampling.top_p = 0.9;
  req.sampling.max_tokens = 128;
  req.sampling.seed = -7;
  req.sampling.stop = std::vector<std::string>{"\n\n", "User:"};
  req.sampling.extra = json::parse(R"({"n_probs":3,"cache_prompt":true,"top_k":40,"min_p":0.05,"grammar":"root ::= \"a\"",
                                       "response_format":{"type":"json_object"}})");
  req.include_usage = true;
  const json want = json::parse(R"({
      "messages":[{"role":"system","content":"sys"},{"role":"user","content":"hi"}],
      "tools":[{"type":"function","function":{"name":"get_weather","description":"Weather for a city",
                 "parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}},
               {"type":"function","function":{"name":"noop","parameters":{"type":"object","properties":{}}}}],
      "tool_choice":"required",
      "parallel_tool_calls":false,
      "temperature":0.2,"top_p":0.9,"max_tokens":128,"seed":-7,"stop":["\n\n","User:"],
      "n_probs":3,"cache_prompt":true,"top_k":40,"min_p":0.05,"grammar":"root ::= \"a\"",
      "response_format":{"type":"json_object"},
      "stream_options":{"include_usage":true}})");
  EXPECT_EQ(encode_openai_request(req), want);
}

TEST(ChatBackendEncode, RequestDefaultsAreAbsent) {
  model::chat_request req;
  req.messages.push_back(msg(model::role::user, {model::text_part{"hi"}}));
  EXPECT_EQ(encode_openai_request(req),
            json::parse(R"({"messages":[{"role":"user","content":"hi"}],"stream_options":{"include_usage":true}})"));
  req.include_usage = false;
  const json body = encode_openai_request(req);
  EXPECT_EQ(body, json::parse(R"({"messages":[{"role":"user","content":"hi"}]})"));
  for (const char* k : {"stream", "model", "tools", "tool_choice", "parallel_tool_calls", "stream_options", "temperature",
                        "top_p", "max_tokens", "seed", "stop"}) {
    EXPECT_FALSE(body.contains(k)) << k;
  }
  req.parallel_tool_calls = true;
  EXPECT_EQ(encode_openai_request(req)["parallel_tool_calls"], true);
}

TEST(ChatBackendEncode, ToolChoiceModes) {
  auto choice_of = [](model::tool_choice::mode mode, std::string name) {
    model::chat_request req;
    req.tool_choice = model::tool_choice{mode, std::move(name)};
    return encode_openai_request(req)["tool_choice"];
  };
  EXPECT_EQ(choice_of(model::tool_choice::mode::auto_, ""), "auto");
  EXPECT_EQ(choice_of(model::tool_choice::mode::none, ""), "none");
  EXPECT_EQ(choice_of(model::tool_choice::mode::required, ""), "required");
  EXPECT_EQ(choice_of(model::tool_choice::mode::named, "python"),
            json::parse(R"({"type":"function","function":{"name":"python"}})"));
}

TEST(ChatBackendEncode, TypedSamplingWinsOverTheExtraBag) {
  model::chat_request req;
  req.sampling.temperature = 1.0;
  req.sampling.extra = json::parse(R"({"temperature":0.1,"mirostat":2})");
  const json body = encode_openai_request(req);
  EXPECT_EQ(body["temperature"], 1.0);
  EXPECT_EQ(body["mirostat"], 2);
}

TEST(ChatBackendEncode, EveryMessageKindInOneRequest) {
  model::chat_request req;
  req.messages = {
      msg(model::role::system, {model::text_part{"You are terse."}}),
      msg(model::role::user, {model::text_part{"What is this?"}, model::image_part{"https://e.com/i.png", "auto"}}, "bob"),
      msg(model::role::assistant, {model::reasoning_part{"Need a tool."}, model::tool_call_part{"call_1", "python", R"({"code":"1+1"})"}}),
      msg(model::role::tool, {model::tool_result_part{"call_1", "2", false}}),
      msg(model::role::assistant, {model::text_part{"It is 2."}}, "", json::parse(R"({"refusal":null})")),
  };
  const json want = json::parse(R"({"messages":[
      {"role":"system","content":"You are terse."},
      {"role":"user","name":"bob","content":[{"type":"text","text":"What is this?"},
                                             {"type":"image_url","image_url":{"url":"https://e.com/i.png","detail":"auto"}}]},
      {"role":"assistant","content":null,"reasoning_content":"Need a tool.",
       "tool_calls":[{"id":"call_1","type":"function","function":{"name":"python","arguments":"{\"code\":\"1+1\"}"}}]},
      {"role":"tool","tool_call_id":"call_1","content":"2"},
      {"role":"assistant","content":"It is 2.","refusal":null}],
    "stream_options":{"include_usage":true}})");
  EXPECT_EQ(encode_openai_request(req), want);
}

}  // namespace
}  // namespace warden::engine
