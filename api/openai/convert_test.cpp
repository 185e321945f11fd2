// api/openai/convert.h: OpenAI request bodies → model::chat_request, and the round trip
// engine::encode_openai_request(to_model_request(body)) == body (up to the documented
// normalizations) for realistic client requests.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "api/openai/convert.h"
#include "engine/chat_backend.h"

namespace warden::api::openai {
namespace {

model::chat_request convert(const std::string& body) {
  auto r = to_model_request(json::parse(body));
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? std::move(*r) : model::chat_request{};
}

model::message convert_message(const std::string& m) {
  auto r = to_model_message(json::parse(m), "messages[0]");
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? std::move(*r) : model::message{};
}

template <class T>
const T& part(const model::message& m, std::size_t i) {
  static const T empty{};
  if (i >= m.content.size()) {
    ADD_FAILURE() << "no part " << i;
    return empty;
  }
  const T* p = std::get_if<T>(&m.content[i]);
  if (!p) {
    ADD_FAILURE() << "part " << i << " has another kind (variant index " << m.content[i].index() << ")";
    return empty;
  }
  return *p;
}

// ---------------------------------------------------------------------------------------------
// Messages

TEST(OpenaiConvertMessage, SystemDeveloperUserStrings) {
  auto s = convert_message(R"({"role":"system","content":"Be brief."})");
  EXPECT_EQ(s.role, model::role::system);
  ASSERT_EQ(s.content.size(), 1u);
  EXPECT_EQ(part<model::text_part>(s, 0).text, "Be brief.");
  EXPECT_TRUE(s.extra.is_null());
  EXPECT_EQ(s.name, "");

  auto d = convert_message(R"({"role":"developer","content":"Use tools."})");
  EXPECT_EQ(d.role, model::role::system);
  EXPECT_EQ(d.text(), "Use tools.");

  auto u = convert_message(R"({"role":"user","content":"hi","name":"alice"})");
  EXPECT_EQ(u.role, model::role::user);
  EXPECT_EQ(u.text(), "hi");
  EXPECT_EQ(u.name, "alice");
  EXPECT_TRUE(u.extra.is_null()) << u.extra.dump();
}

TEST(OpenaiConvertMessage, ListContentWithImagesAndAudio) {
  const json audio = json::parse(R"({"type":"input_audio","input_audio":{"data":"UklGRiQAAABXQVZF","format":"wav"}})");
  json m = json::parse(R"({"role":"user","content":[
      {"type":"text","text":"Describe"},
      {"type":"image_url","image_url":{"url":"https://example.com/cat.png","detail":"high"}},
      {"type":"image_url","image_url":{"url":"data:image/jpeg;base64,/9j/4AAQ"}}]})");
  m["content"].push_back(audio);
  auto r = to_model_message(m, "messages[0]");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->content.size(), 4u);
  EXPECT_EQ(part<model::text_part>(*r, 0).text, "Describe");
  EXPECT_EQ(part<model::image_part>(*r, 1).url, "https://example.com/cat.png");
  EXPECT_EQ(part<model::image_part>(*r, 1).detail, "high");
  EXPECT_EQ(part<model::image_part>(*r, 2).url, "data:image/jpeg;base64,/9j/4AAQ");
  EXPECT_EQ(part<model::image_part>(*r, 2).detail, "");
  EXPECT_EQ(part<model::opaque_part>(*r, 3).value, audio);
}

TEST(OpenaiConvertMessage, UnusualImagePartsStayOpaque) {
  // an image_url with a field warden does not model is kept verbatim
  const json odd = json::parse(R"({"type":"image_url","image_url":{"url":"https://x/y.png","detail":"low","format":"png"}})");
  const json odd_detail = json::parse(R"({"type":"image_url","image_url":{"url":"https://x/y.png","detail":5}})");
  const json no_url = json::parse(R"({"type":"image_url","image_url":"https://x/y.png"})");
  json m = json{{"role", "user"}, {"content", json::array({odd, odd_detail, no_url})}};
  auto r = to_model_message(m, "messages[0]");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->content.size(), 3u);
  EXPECT_EQ(part<model::opaque_part>(*r, 0).value, odd);
  EXPECT_EQ(part<model::opaque_part>(*r, 1).value, odd_detail);
  EXPECT_EQ(part<model::opaque_part>(*r, 2).value, no_url);
}

TEST(OpenaiConvertMessage, AssistantToolCallsStringAndObjectArguments) {
  auto m = convert_message(R"({"role":"assistant","content":null,"tool_calls":[
      {"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Paris\"}"}},
      {"id":"call_2","type":"function","function":{"name":"get_time","arguments":{"tz":"CET","n":[1,2]}}},
      {"id":"call_3","type":"function","function":{"name":"ping"}}]})");
  EXPECT_EQ(m.role, model::role::assistant);
  ASSERT_EQ(m.content.size(), 3u) << "no text part for content null";
  const auto calls = m.tool_calls();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0]->id, "call_1");
  EXPECT_EQ(calls[0]->name, "get_weather");
  EXPECT_EQ(calls[0]->arguments, "{\"city\": \"Paris\"}") << "string arguments are kept byte for byte";
  EXPECT_EQ(calls[1]->id, "call_2");
  EXPECT_EQ(json::parse(calls[1]->arguments), json::parse(R"({"tz":"CET","n":[1,2]})"));
  EXPECT_EQ(calls[1]->arguments, dump_safe(json::parse(R"({"tz":"CET","n":[1,2]})")));
  EXPECT_EQ(calls[2]->arguments, "{}") << "absent arguments";
  EXPECT_TRUE(m.extra.is_null()) << m.extra.dump();
}

TEST(OpenaiConvertMessage, AssistantReasoningTextAndCalls) {
  auto m = convert_message(R"({"role":"assistant","reasoning_content":"think first","content":"Let me check.",
      "tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]})");
  ASSERT_EQ(m.content.size(), 3u);
  EXPECT_EQ(part<model::reasoning_part>(m, 0).text, "think first");
  EXPECT_EQ(part<model::text_part>(m, 1).text, "Let me check.");
  EXPECT_EQ(part<model::tool_call_part>(m, 2).name, "f");
  EXPECT_TRUE(m.extra.is_null()) << m.extra.dump();
}

TEST(OpenaiConvertMessage, ToolMessages) {
  auto t = convert_message(R"({"role":"tool","tool_call_id":"call_1","content":"22 C"})");
  EXPECT_EQ(t.role, model::role::tool);
  ASSERT_EQ(t.content.size(), 1u) << "the result part holds the content; no text part";
  EXPECT_EQ(part<model::tool_result_part>(t, 0).tool_call_id, "call_1");
  EXPECT_EQ(part<model::tool_result_part>(t, 0).content, "22 C");
  EXPECT_FALSE(part<model::tool_result_part>(t, 0).is_error);

  auto l = convert_message(R"({"role":"tool","tool_call_id":"call_2","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]})");
  ASSERT_EQ(l.content.size(), 1u);
  EXPECT_EQ(part<model::tool_result_part>(l, 0).tool_call_id, "call_2");
  EXPECT_EQ(part<model::tool_result_part>(l, 0).content, "ab");

  auto n = convert_message(R"({"role":"tool","tool_call_id":"call_3","name":"get_weather","content":"x"})");
  EXPECT_EQ(n.name, "get_weather");
  EXPECT_TRUE(n.extra.is_null()) << n.extra.dump();
}

TEST(OpenaiConvertMessage, LegacyFunctionRole) {
  auto f = convert_message(R"({"role":"function","name":"get_weather","content":"sunny"})");
  EXPECT_EQ(f.role, model::role::tool);
  EXPECT_EQ(f.name, "get_weather");
  ASSERT_EQ(f.content.size(), 1u);
  EXPECT_EQ(part<model::tool_result_part>(f, 0).content, "sunny");
  EXPECT_EQ(part<model::tool_result_part>(f, 0).tool_call_id, "");
  EXPECT_TRUE(f.extra.is_null()) << f.extra.dump();
}

// Found by fuzz/chat_request.cpp: a tool message with tool_calls kept them as call parts that
// encode_openai_message then dropped, so the typed conversation (what the loop and the other
// dialects see) and the upstream's disagreed; with array content they were cleared instead.
TEST(OpenaiConvertMessage, AToolMessageIsItsResultAloneFuzzRegression) {
  const char* bodies[] = {
      R"({"role":"function","name":"f","content":"","reasoning_content":"r",)"
      R"("tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":{"a":1}}}]})",
      R"({"role":"tool","tool_call_id":"c1","content":[{"type":"text","text":"x"}],)"
      R"("tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]})",
      R"({"role":"tool","tool_call_id":"c1","content":"x","tool_calls":[{"not":"a call"}]})",
  };
  for (const char* body : bodies) {
    auto t = convert_message(body);
    ASSERT_EQ(t.content.size(), 1u) << body;
    EXPECT_TRUE(std::holds_alternative<model::tool_result_part>(t.content[0])) << body;
    const json encoded = engine::encode_openai_message(t);
    EXPECT_FALSE(encoded.contains("tool_calls")) << encoded.dump();
    auto again = to_model_message(encoded, "messages[0]");
    ASSERT_TRUE(again.ok());
    ASSERT_EQ(again->content.size(), 1u);
    EXPECT_EQ(std::get<model::tool_result_part>(again->content[0]).content,
              std::get<model::tool_result_part>(t.content[0]).content);
  }
}

TEST(OpenaiConvertMessage, UnknownFieldsRideInExtra) {
  auto m = convert_message(R"({"role":"user","content":"x","cache_control":{"type":"ephemeral"},"weight":1,"audio":null})");
  EXPECT_EQ(m.extra, json::parse(R"({"cache_control":{"type":"ephemeral"},"weight":1,"audio":null})"));
  auto a = convert_message(R"({"role":"assistant","content":"y","refusal":null,"annotations":[]})");
  EXPECT_EQ(a.extra, json::parse(R"({"refusal":null,"annotations":[]})"));
}

TEST(OpenaiConvertMessage, MalformedToolCallsAreErrorsNamingTheField) {
  auto r = to_model_message(json::parse(R"({"role":"assistant","tool_calls":[{"id":"c","type":"function"}]})"), "messages[1]");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, errc::invalid_request);
  EXPECT_EQ(r.error().param, "messages[1].tool_calls[0]");

  auto n = to_model_message(
      json::parse(R"({"role":"assistant","tool_calls":[{"id":"a","function":{"name":"f"}},{"id":"b","function":{"arguments":"{}"}}]})"),
      "messages[4]");
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.error().code, errc::invalid_request);
  EXPECT_EQ(n.error().param, "messages[4].tool_calls[1].function.name");

  auto req = to_model_request(json::parse(R"({"messages":[{"role":"user","content":"a"},{"role":"assistant","tool_calls":[7]}]})"));
  ASSERT_FALSE(req.ok());
  EXPECT_EQ(req.error().param, "messages[1].tool_calls[0]");
}

// ---------------------------------------------------------------------------------------------
// Request-level fields

TEST(OpenaiConvertRequest, ToolChoiceForms) {
  const std::string msgs = R"("messages":[{"role":"user","content":"hi"}])";
  EXPECT_FALSE(convert("{" + msgs + "}").tool_choice.has_value());
  auto mode_of = [&](const std::string& choice) {
    auto r = convert("{" + msgs + R"(,"tool_choice":)" + choice + "}");
    EXPECT_TRUE(r.tool_choice.has_value()) << choice;
    return r.tool_choice.value_or(model::tool_choice{});
  };
  EXPECT_EQ(mode_of(R"("auto")").kind, model::tool_choice::mode::auto_);
  EXPECT_EQ(mode_of(R"("none")").kind, model::tool_choice::mode::none);
  EXPECT_EQ(mode_of(R"("required")").kind, model::tool_choice::mode::required);
  const auto named = mode_of(R"({"type":"function","function":{"name":"python"}})");
  EXPECT_EQ(named.kind, model::tool_choice::mode::named);
  EXPECT_EQ(named.name, "python");
}

TEST(OpenaiConvertRequest, ParallelToolCallsAndUsage) {
  auto a = convert(R"({"messages":[],"parallel_tool_calls":false})");
  ASSERT_TRUE(a.parallel_tool_calls.has_value());
  EXPECT_FALSE(*a.parallel_tool_calls);
  EXPECT_TRUE(a.include_usage);
  auto b = convert(R"({"messages":[],"stream":true,"stream_options":{"include_usage":false}})");
  EXPECT_FALSE(b.parallel_tool_calls.has_value());
  EXPECT_TRUE(b.include_usage) << "the loop always asks the upstream for usage";
}

TEST(OpenaiConvertRequest, TypedSampling) {
  auto r = convert(R"({"messages":[],"temperature":0.7,"top_p":0.95,"max_tokens":100,"seed":7,"stop":"END"})");
  EXPECT_EQ(r.sampling.temperature, 0.7);
  EXPECT_EQ(r.sampling.top_p, 0.95);
  EXPECT_EQ(r.sampling.max_tokens, 100);
  EXPECT_EQ(r.sampling.seed, 7);
  EXPECT_EQ(r.sampling.stop, (std::vector<std::string>{"END"}));
  EXPECT_EQ(r.sampling.extra, json::object());

  auto l = convert(R"({"messages":[],"stop":["\n\n","User:"],"temperature":0,"seed":-1})");
  EXPECT_EQ(l.sampling.stop, (std::vector<std::string>{"\n\n", "User:"}));
  EXPECT_EQ(l.sampling.temperature, 0.0) << "an integer temperature is a number too";
  EXPECT_EQ(l.sampling.seed, -1);
  EXPECT_FALSE(l.sampling.max_tokens.has_value());
  EXPECT_FALSE(l.sampling.top_p.has_value());

  auto c = convert(R"({"messages":[],"max_completion_tokens":50})");
  EXPECT_EQ(c.sampling.max_tokens, 50);
  EXPECT_FALSE(c.sampling.extra.contains("max_completion_tokens"));

  auto both = convert(R"({"messages":[],"max_tokens":10,"max_completion_tokens":50})");
  EXPECT_EQ(both.sampling.max_tokens, 10) << "max_tokens wins when both are present";
  EXPECT_EQ(both.sampling.extra, json::object());
}

TEST(OpenaiConvertRequest, LlamaCppExtrasLandInSamplingExtra) {
  auto r = convert(R"({"model":"local","stream":true,"stream_options":{"include_usage":true},
      "messages":[{"role":"user","content":"hi"}],
      "tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],
      "tool_choice":"auto","parallel_tool_calls":true,
      "temperature":0.5,"max_tokens":64,
      "n_probs":5,"cache_prompt":true,"top_k":40,"min_p":0.05,"repeat_penalty":1.1,"typical_p":1.0,
      "samplers":["top_k","min_p","temperature"],"id_slot":0,"mirostat":0,
      "presence_penalty":0.1,"frequency_penalty":0.2,"logit_bias":{"15043":-100},
      "response_format":{"type":"json_object"},"user":"u-1","n":1,"logprobs":true,"top_logprobs":2})");
  const json want_extra = json::parse(R"({"n_probs":5,"cache_prompt":true,"top_k":40,"min_p":0.05,"repeat_penalty":1.1,
      "typical_p":1.0,"samplers":["top_k","min_p","temperature"],"id_slot":0,"mirostat":0,
      "presence_penalty":0.1,"frequency_penalty":0.2,"logit_bias":{"15043":-100},
      "response_format":{"type":"json_object"},"user":"u-1","n":1,"logprobs":true,"top_logprobs":2})");
  EXPECT_EQ(r.sampling.extra, want_extra);
  for (const char* k : {"messages", "tools", "tool_choice", "parallel_tool_calls", "stream", "stream_options", "model",
                        "temperature", "top_p", "max_tokens", "max_completion_tokens", "seed", "stop"}) {
    EXPECT_FALSE(r.sampling.extra.contains(k)) << k;
  }
  EXPECT_EQ(r.sampling.temperature, 0.5);
  EXPECT_EQ(r.sampling.max_tokens, 64);
  ASSERT_EQ(r.messages.size(), 1u);
  // The client's function tools become tool specs (healing names them; the loop offers its own).
  ASSERT_EQ(r.tools.size(), 1u);
  EXPECT_EQ(r.tools[0].name, "f");
  EXPECT_EQ(r.tools[0].parameters, json({{"type", "object"}}));
  EXPECT_EQ(r.parallel_tool_calls, true);
}

// ---------------------------------------------------------------------------------------------
// Property: encode_openai_request(to_model_request(body)) == body, up to the documented
// normalizations: stream / stream_options / model removed, max_completion_tokens renamed
// max_tokens, a stop string turned into a one-element list, a single-text-part content list
// turned into a string, stream_options.include_usage true added.

json expected_wire(json body) {
  body.erase("stream");
  body.erase("stream_options");
  body.erase("model");
  if (body.contains("max_completion_tokens")) {
    if (!body.contains("max_tokens")) body["max_tokens"] = body["max_completion_tokens"];
    body.erase("max_completion_tokens");
  }
  if (body.contains("stop") && body["stop"].is_string()) body["stop"] = json::array({body["stop"]});
  for (auto& m : body["messages"]) {
    auto c = m.find("content");
    if (c != m.end() && c->is_array() && c->size() == 1 && (*c)[0].value("type", "") == "text" && (*c)[0].size() == 2) {
      *c = (*c)[0]["text"];
    }
  }
  body["stream_options"] = json{{"include_usage", true}};
  return body;
}

const char* const k_realistic_bodies[] = {
    // 1. a plain streamed chat (OpenAI Python SDK shape)
    R"({"model":"gpt-4o","stream":true,"stream_options":{"include_usage":true},
        "messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Hello!"}],
        "temperature":0.7})",
    // 2. an agent's second turn: tool calls answered, tool_choice, parallel_tool_calls, max_completion_tokens, stop string
    R"({"model":"local","messages":[
          {"role":"system","content":"Use the tools when needed."},
          {"role":"user","content":"Weather in Paris and the time in Tokyo?"},
          {"role":"assistant","content":null,"tool_calls":[
              {"id":"call_abc123","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Paris\"}"}},
              {"id":"call_def456","type":"function","function":{"name":"get_time","arguments":"{\"tz\":\"Asia/Tokyo\"}"}}]},
          {"role":"tool","tool_call_id":"call_abc123","content":"18 C, cloudy"},
          {"role":"tool","tool_call_id":"call_def456","content":"21:04"}],
        "tool_choice":"auto","parallel_tool_calls":false,"max_completion_tokens":256,"stop":"\n\nUser:"})",
    // 3. vision with detail, sampling fields, stop list
    R"({"model":"llava","stream":false,"messages":[{"role":"user","content":[
          {"type":"text","text":"What is in this image?"},
          {"type":"image_url","image_url":{"url":"https://upload.wikimedia.org/a.jpg","detail":"low"}},
          {"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgoAAAANSUhEUg=="}}]}],
        "max_tokens":300,"top_p":1,"seed":1234,"stop":["</s>","User:"]})",
    // 4. a single text part in a list (LangChain, some UIs)
    R"({"messages":[{"role":"system","content":[{"type":"text","text":"Be brief."}]},
                    {"role":"user","content":[{"type":"text","text":"Hi"}]}],"stream":true})",
    // 5. llama.cpp's own extras (llama-server web UI / curl users)
    R"({"messages":[{"role":"user","content":"Write a haiku."}],"stream":true,
        "n_probs":5,"cache_prompt":true,"top_k":40,"min_p":0.05,"repeat_penalty":1.1,"repeat_last_n":64,
        "samplers":["top_k","typ_p","top_p","min_p","temperature"],"dynatemp_range":0,"id_slot":-1,"timings_per_token":true,
        "presence_penalty":0.0,"frequency_penalty":0.0,"logit_bias":{"15043":-100},"temperature":0.8,"max_tokens":-1})",
    // 6. history with reasoning, names, message extras, an audio part, a tool message with a name
    R"({"model":"qwen3","messages":[
          {"role":"system","content":"Think step by step."},
          {"role":"user","name":"alice","content":[{"type":"text","text":"Transcribe and answer."},
              {"type":"input_audio","input_audio":{"data":"UklGRiQAAABXQVZFZm10","format":"wav"}}]},
          {"role":"assistant","reasoning_content":"The audio asks for 2+2.","content":"","refusal":null,
           "tool_calls":[{"id":"call_1","type":"function","function":{"name":"python","arguments":"{\"code\":\"print(2+2)\"}"}}]},
          {"role":"tool","tool_call_id":"call_1","name":"python","content":"4\n"},
          {"role":"assistant","content":"It is 4.","annotations":[]},
          {"role":"user","content":"Thanks","cache_control":{"type":"ephemeral"}}],
        "tool_choice":{"type":"function","function":{"name":"python"}},"parallel_tool_calls":true,
        "response_format":{"type":"text"},"user":"alice@example.com","n":1})",
    // 7. tool_choice none / required, structured output
    R"({"messages":[{"role":"user","content":"List three colors as JSON."}],"tool_choice":"none",
        "response_format":{"type":"json_schema","json_schema":{"name":"colors","strict":true,
            "schema":{"type":"object","properties":{"colors":{"type":"array","items":{"type":"string"}}},"required":["colors"]}}},
        "logprobs":true,"top_logprobs":3,"seed":0})",
    R"({"messages":[{"role":"user","content":"Call something."}],"tool_choice":"required","temperature":1,
        "stream":true,"stream_options":{"include_usage":false}})",
    // 8. non-ASCII text, escapes, an empty system prompt, several images
    R"({"messages":[{"role":"system","content":""},
                    {"role":"user","content":"Grüße — 你好 \"quoted\" \\ back\\slash\ttab 🙂"},
                    {"role":"user","content":[{"type":"image_url","image_url":{"url":"https://e.com/1.png","detail":"auto"}},
                                              {"type":"image_url","image_url":{"url":"https://e.com/2.png","detail":"high"}}]}],
        "max_tokens":1,"top_p":0.5})",
};

TEST(OpenaiConvertProperty, EncodeOfConvertIsTheBodyUpToNormalizations) {
  for (std::size_t i = 0; i < std::size(k_realistic_bodies); ++i) {
    const json body = json::parse(k_realistic_bodies[i]);
    auto req = to_model_request(body);
    ASSERT_TRUE(req.ok()) << "body " << i << ": " << req.error().message;
    const json got = engine::encode_openai_request(*req);
    const json want = expected_wire(body);
    EXPECT_EQ(got, want) << "body " << i << "\n got: " << got.dump() << "\nwant: " << want.dump()
                         << "\ndiff: " << json::diff(want, got).dump();
  }
}

TEST(OpenaiConvertProperty, MessagesRoundTripOneByOne) {
  // encode_openai_message(to_model_message(m)) == m for messages already in the encoder's shape.
  const char* const messages[] = {
      R"({"role":"user","content":"hi"})",
      R"({"role":"user","content":"hi","name":"bob"})",
      R"({"role":"system","content":"sys"})",
      R"({"role":"assistant","content":"ok"})",
      R"({"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\": 1}"}}]})",
      R"({"role":"assistant","content":"x","reasoning_content":"r","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]})",
      R"({"role":"tool","tool_call_id":"c1","content":"result"})",
      R"({"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]})",
      R"({"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x"}}]})",
      R"({"role":"user","content":[{"type":"input_audio","input_audio":{"data":"AA==","format":"mp3"}}],"metadata":{"k":"v"}})",
  };
  for (const char* s : messages) {
    const json m = json::parse(s);
    auto conv = to_model_message(m, "messages[0]");
    ASSERT_TRUE(conv.ok()) << s;
    EXPECT_EQ(engine::encode_openai_message(*conv), m) << s;
  }
}

// Content parts with fields beyond what the typed parts hold (e.g. a `cache_control` marker on a
// text part, as OpenRouter / LiteLLM clients send) must not lose them on the way to the upstream.
TEST(OpenaiConvertProperty, PartLevelFieldsSurvive) {
  const json m = json::parse(R"({"role":"user","content":[
      {"type":"text","text":"long context ...","cache_control":{"type":"ephemeral"}},
      {"type":"image_url","image_url":{"url":"https://x/y.png"},"cache_control":{"type":"ephemeral"}}]})");
  auto conv = to_model_message(m, "messages[0]");
  ASSERT_TRUE(conv.ok());
  EXPECT_EQ(engine::encode_openai_message(*conv), m) << "got " << engine::encode_openai_message(*conv).dump();
}

}  // namespace
}  // namespace warden::api::openai
