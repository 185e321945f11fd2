// api/anthropic/messages_request.h: what /v1/messages accepts, how it maps, and the 400s.
#include <gtest/gtest.h>

#include "api/anthropic/messages_request.h"

namespace warden::api::anthropic {
namespace {

const std::vector<std::string> k_tools = {"python", "terminal", "edit_file"};

messages_request ok(const std::string& body, body_kind kind = body_kind::messages) {
  auto r = parse_messages_request(body, k_tools, kind);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? std::move(*r) : messages_request{};
}

TEST(MessagesRequest, MinimalBodyMapsToTheModel) {
  auto r = ok(R"({"model":"m","max_tokens":64,"messages":[{"role":"user","content":"hi"}],
                 "temperature":0.5,"top_p":0.9,"top_k":40,"metadata":{"user_id":"u"},"unknown_field":{"x":1}})");
  EXPECT_EQ(r.model, "m");
  EXPECT_FALSE(r.stream);
  ASSERT_EQ(r.conv.messages.size(), 1u);
  EXPECT_EQ(r.conv.sampling.max_tokens, std::optional<std::int64_t>(64));
  EXPECT_EQ(r.conv.sampling.temperature, std::optional<double>(0.5));
  EXPECT_EQ(r.conv.sampling.top_p, std::optional<double>(0.9));
  EXPECT_EQ(r.conv.sampling.extra["top_k"], 40);
  EXPECT_FALSE(r.conv.sampling.extra.contains("metadata"));
  EXPECT_FALSE(r.conv.sampling.extra.contains("unknown_field"));
  EXPECT_FALSE(r.loop.enable_tools);
  EXPECT_EQ(r.loop.surface, "anthropic.messages");
}

TEST(MessagesRequest, ClientToolsAndToolChoice) {
  auto r = ok(R"({"model":"m","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}],
                 "tools":[{"name":"get_weather","description":"Weather","input_schema":{"type":"object","properties":{}}},
                          {"type":"custom","name":"other","input_schema":{"type":"object"}}],
                 "tool_choice":{"type":"tool","name":"get_weather","disable_parallel_tool_use":true}})");
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.client_tools);
  ASSERT_EQ(r.conv.tools.size(), 2u);
  EXPECT_EQ(r.conv.tools[0].name, "get_weather");
  EXPECT_EQ(r.conv.tools[0].description, "Weather");
  ASSERT_TRUE(r.conv.tool_choice.has_value());
  EXPECT_EQ(r.conv.tool_choice->kind, model::tool_choice::mode::named);
  EXPECT_EQ(r.conv.tool_choice->name, "get_weather");
  EXPECT_EQ(r.conv.parallel_tool_calls, std::optional<bool>(false));
  auto any = ok(R"({"model":"m","max_tokens":64,"messages":[{"role":"user","content":"hi"}],
                   "tools":[{"name":"f","input_schema":{"type":"object"}},{"name":"g","input_schema":{"type":"object"}}],
                   "tool_choice":{"type":"any"}})");
  EXPECT_EQ(any.conv.tool_choice->kind, model::tool_choice::mode::required);
  auto any_one = ok(R"({"model":"m","max_tokens":64,"messages":[{"role":"user","content":"hi"}],
                       "tools":[{"name":"f","input_schema":{"type":"object"}}],"tool_choice":{"type":"any"}})");
  EXPECT_EQ(any_one.conv.tool_choice->kind, model::tool_choice::mode::named);  // the only tool: enforceable
  EXPECT_EQ(any_one.conv.tool_choice->name, "f");
  auto none = ok(R"({"model":"m","max_tokens":64,"messages":[{"role":"user","content":"hi"}],"tool_choice":{"type":"none"}})");
  EXPECT_EQ(none.conv.tool_choice->kind, model::tool_choice::mode::none);
}

TEST(MessagesRequest, ServerToolsTurnTheLoopOn) {
  auto r = ok(R"({"model":"m","max_tokens":64,"messages":[{"role":"user","content":"hi"}],
                 "tools":[{"type":"python","name":"python"},{"type":"terminal","name":"terminal"},{"type":"python"}],
                 "permission_mode":"off","session_id":"s1"})");
  EXPECT_TRUE(r.loop.enable_tools);
  EXPECT_EQ(r.server_tools, (std::vector<std::string>{"python", "terminal"}));
  EXPECT_EQ(r.loop.enabled_tools, (std::optional<std::vector<std::string>>{{"python", "terminal"}}));
  EXPECT_EQ(r.loop.gate.permission_mode, std::optional<std::string>("off"));
  EXPECT_EQ(r.loop.session_id, "s1");
  EXPECT_TRUE(r.conv.tools.empty());
}

TEST(MessagesRequest, ThinkingAndStopSequences) {
  auto r = ok(R"({"model":"m","max_tokens":4096,"messages":[{"role":"user","content":"hi"}],
                 "thinking":{"type":"enabled","budget_tokens":2048},"stop_sequences":["END","\n\n"]})");
  EXPECT_EQ(r.conv.sampling.extra["chat_template_kwargs"], json::parse(R"({"enable_thinking":true})"));
  EXPECT_EQ(r.conv.sampling.extra["thinking_budget_tokens"], 2048);
  EXPECT_EQ(r.stop_sequences, (std::vector<std::string>{"END", "\n\n"}));
  EXPECT_FALSE(r.conv.sampling.stop.has_value());
  auto off = ok(R"({"model":"m","max_tokens":64,"messages":[{"role":"user","content":"hi"}],"thinking":{"type":"disabled"}})");
  EXPECT_EQ(off.conv.sampling.extra["chat_template_kwargs"], json::parse(R"({"enable_thinking":false})"));
}

TEST(MessagesRequest, OutputFormatBecomesAJsonSchemaResponseFormat) {
  for (const char* field : {R"("output_config":{"format":{"type":"json_schema","schema":{"type":"object"}},"effort":"low"})",
                            R"("output_format":{"type":"json_schema","schema":{"type":"object"}})"}) {
    auto r = ok(std::string(R"({"model":"m","max_tokens":64,"messages":[{"role":"user","content":"hi"}],)") + field + "}");
    const json& rf = r.conv.sampling.extra["response_format"];
    EXPECT_EQ(rf["type"], "json_schema") << field;
    EXPECT_EQ(rf["json_schema"]["schema"], json({{"type", "object"}})) << field;
  }
  auto plain = ok(R"({"model":"m","max_tokens":64,"messages":[{"role":"user","content":"hi"}],"output_config":{"effort":"low"}})");
  EXPECT_FALSE(plain.conv.sampling.extra.contains("response_format"));
}

TEST(MessagesRequest, ThreadsAreRefusedWithTheCodesTheSdksRecoverFrom) {
  const std::string head = R"({"model":"m","max_tokens":64,"messages":[{"role":"user","content":"hi"}],)";
  auto create = parse_messages_request(head + R"("thread":{"type":"create"}})", k_tools);
  ASSERT_FALSE(create.ok());
  EXPECT_EQ(create.error().code, errc::invalid_request);
  EXPECT_EQ(create.error().type_code, "thread_unsupported_request");
  auto cont = parse_messages_request(head + R"("thread":{"type":"continue","previous_message_id":"msg_1"}})", k_tools);
  ASSERT_FALSE(cont.ok());
  EXPECT_EQ(cont.error().code, errc::not_found);
  EXPECT_EQ(cont.error().type_code, "thread_not_found");
  EXPECT_TRUE(parse_messages_request(head + R"("thread":null})", k_tools).ok());
}

TEST(MessagesRequest, CountTokensNeedsNoMaxTokens) {
  auto r = ok(R"({"model":"m","messages":[{"role":"user","content":"hi"}],"system":"s"})", body_kind::count_tokens);
  EXPECT_EQ(r.conv.messages.size(), 2u);
  EXPECT_FALSE(parse_messages_request(R"({"model":"m","messages":[{"role":"user","content":"hi"}]})", k_tools).ok());
}

struct reject_case {
  const char* name;
  const char* body;
  const char* param;
};

class MessagesRequestRejects : public ::testing::TestWithParam<reject_case> {};

TEST_P(MessagesRequestRejects, With400AndParam) {
  auto r = parse_messages_request(GetParam().body, k_tools);
  ASSERT_FALSE(r.ok()) << GetParam().body;
  EXPECT_EQ(r.error().code, errc::invalid_request);
  EXPECT_EQ(r.error().param, GetParam().param) << r.error().message;
  EXPECT_FALSE(r.error().message.empty());
}

#define MSG R"("messages":[{"role":"user","content":"hi"}])"
const reject_case k_rejects[] = {
    {"empty_body", "", ""},
    {"not_json", "{", ""},
    {"array_body", "[]", ""},
    {"duplicate_key", R"({"model":"m","model":"n","max_tokens":1,)" MSG "}", "model"},
    {"no_model", R"({"max_tokens":1,)" MSG "}", "model"},
    {"model_number", R"({"model":1,"max_tokens":1,)" MSG "}", "model"},
    {"no_max_tokens", R"({"model":"m",)" MSG "}", "max_tokens"},
    {"max_tokens_zero", R"({"model":"m","max_tokens":0,)" MSG "}", "max_tokens"},
    {"max_tokens_string", R"({"model":"m","max_tokens":"5",)" MSG "}", "max_tokens"},
    {"no_messages", R"({"model":"m","max_tokens":1})", "messages"},
    {"empty_messages", R"({"model":"m","max_tokens":1,"messages":[]})", "messages"},
    {"messages_object", R"({"model":"m","max_tokens":1,"messages":{}})", "messages"},
    {"system_role", R"({"model":"m","max_tokens":1,"messages":[{"role":"system","content":"x"}]})", "messages[0].role"},
    {"content_missing", R"({"model":"m","max_tokens":1,"messages":[{"role":"user"}]})", "messages[0].content"},
    {"content_number", R"({"model":"m","max_tokens":1,"messages":[{"role":"user","content":5}]})", "messages[0].content"},
    {"block_not_object", R"({"model":"m","max_tokens":1,"messages":[{"role":"user","content":["x"]}]})", "messages[0].content[0]"},
    {"text_without_text", R"({"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"text"}]}]})",
     "messages[0].content[0].text"},
    {"tool_use_input_string",
     R"({"model":"m","max_tokens":1,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":"{}"}]}]})",
     "messages[0].content[0].input"},
    {"tool_result_without_id",
     R"({"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"tool_result","content":"x"}]}]})",
     "messages[0].content[0].tool_use_id"},
    {"unknown_user_block", R"({"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"video"}]}]})",
     "messages[0].content[0].type"},
    {"system_number", R"({"model":"m","max_tokens":1,"system":3,)" MSG "}", "system"},
    {"system_block_not_text", R"({"model":"m","max_tokens":1,"system":[{"type":"image"}],)" MSG "}", "system[0]"},
    {"temperature_over_1", R"({"model":"m","max_tokens":1,"temperature":1.5,)" MSG "}", "temperature"},
    {"top_p_string", R"({"model":"m","max_tokens":1,"top_p":"x",)" MSG "}", "top_p"},
    {"top_k_negative", R"({"model":"m","max_tokens":1,"top_k":-1,)" MSG "}", "top_k"},
    {"stream_string", R"({"model":"m","max_tokens":1,"stream":"yes",)" MSG "}", "stream"},
    {"metadata_string", R"({"model":"m","max_tokens":1,"metadata":"x",)" MSG "}", "metadata"},
    {"output_config_string", R"({"model":"m","max_tokens":1,"output_config":"x",)" MSG "}", "output_config"},
    {"output_format_text", R"({"model":"m","max_tokens":1,"output_format":{"type":"text"},)" MSG "}", "output_format.type"},
    {"output_format_no_schema", R"({"model":"m","max_tokens":1,"output_config":{"format":{"type":"json_schema"}},)" MSG "}",
     "output_config.format.schema"},
    {"output_format_both",
     R"({"model":"m","max_tokens":1,"output_format":{"type":"json_schema","schema":{}},"output_config":{"format":{"type":"json_schema","schema":{}}},)" MSG "}",
     "output_format"},
    {"stop_sequences_string", R"({"model":"m","max_tokens":1,"stop_sequences":"x",)" MSG "}", "stop_sequences"},
    {"stop_sequence_empty", R"({"model":"m","max_tokens":1,"stop_sequences":[""],)" MSG "}", "stop_sequences"},
    {"tools_object", R"({"model":"m","max_tokens":1,"tools":{},)" MSG "}", "tools"},
    {"tool_not_object", R"({"model":"m","max_tokens":1,"tools":[1],)" MSG "}", "tools[0]"},
    {"tool_without_schema", R"({"model":"m","max_tokens":1,"tools":[{"type":"custom","name":"f"}],)" MSG "}",
     "tools[0].input_schema"},
    {"tool_without_name", R"({"model":"m","max_tokens":1,"tools":[{"input_schema":{}}],)" MSG "}", "tools[0].name"},
    {"unknown_server_tool", R"({"model":"m","max_tokens":1,"tools":[{"type":"bash_20250124","name":"bash"}],)" MSG "}",
     "tools[0].type"},
    {"web_search_not_here", R"({"model":"m","max_tokens":1,"tools":[{"type":"web_search_20250305","name":"web_search"}],)" MSG "}",
     "tools[0].type"},
    {"mixed_tools",
     R"({"model":"m","max_tokens":1,"tools":[{"name":"f","input_schema":{}},{"type":"python","name":"python"}],)" MSG "}",
     "tools"},
    {"client_tools_with_enable_tools", R"({"model":"m","max_tokens":1,"enable_tools":true,"tools":[{"name":"f","input_schema":{}}],)" MSG "}",
     "tools"},
    {"tool_choice_string", R"({"model":"m","max_tokens":1,"tool_choice":"auto",)" MSG "}", "tool_choice"},
    {"tool_choice_bad_type", R"({"model":"m","max_tokens":1,"tool_choice":{"type":"required"},)" MSG "}", "tool_choice.type"},
    {"tool_choice_unknown_name",
     R"({"model":"m","max_tokens":1,"tools":[{"name":"f","input_schema":{}}],"tool_choice":{"type":"tool","name":"g"},)" MSG "}",
     "tool_choice.name"},
    {"tool_choice_parallel_string",
     R"({"model":"m","max_tokens":1,"tool_choice":{"type":"auto","disable_parallel_tool_use":"yes"},)" MSG "}",
     "tool_choice.disable_parallel_tool_use"},
    {"thinking_string", R"({"model":"m","max_tokens":5000,"thinking":"on",)" MSG "}", "thinking"},
    {"thinking_small_budget", R"({"model":"m","max_tokens":5000,"thinking":{"type":"enabled","budget_tokens":100},)" MSG "}",
     "thinking.budget_tokens"},
    {"thinking_budget_over_max", R"({"model":"m","max_tokens":2000,"thinking":{"type":"enabled","budget_tokens":2000},)" MSG "}",
     "thinking.budget_tokens"},
    {"thinking_bad_type", R"({"model":"m","max_tokens":2000,"thinking":{"type":"maybe"},)" MSG "}", "thinking.type"},
    {"mcp_servers", R"({"model":"m","max_tokens":1,"mcp_servers":[{"type":"url","url":"https://x"}],)" MSG "}", "mcp_servers"},
    {"enabled_tools_unknown", R"({"model":"m","max_tokens":1,"enable_tools":true,"enabled_tools":["rm"],)" MSG "}",
     "enabled_tools"},
    {"session_id_bad", R"({"model":"m","max_tokens":1,"session_id":"../x",)" MSG "}", "session_id"},
    {"tool_result_without_tool_use",
     R"({"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_x","content":"r"}]}]})",
     "messages[0].content[0].tool_use_id"},
    {"tool_result_for_another_id",
     R"({"model":"m","max_tokens":1,"messages":[{"role":"user","content":"q"},
        {"role":"assistant","content":[{"type":"tool_use","id":"toolu_a","name":"f","input":{}}]},
        {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_b","content":"r"}]}]})",
     "messages[2].content[0].tool_use_id"},
    {"tool_result_answered_twice",
     R"({"model":"m","max_tokens":1,"messages":[{"role":"user","content":"q"},
        {"role":"assistant","content":[{"type":"tool_use","id":"toolu_a","name":"f","input":{}}]},
        {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_a","content":"r"},
                                  {"type":"tool_result","tool_use_id":"toolu_a","content":"r"}]}]})",
     "messages[2].content[1].tool_use_id"},
    {"tool_use_left_unanswered",
     R"({"model":"m","max_tokens":1,"messages":[{"role":"user","content":"q"},
        {"role":"assistant","content":[{"type":"tool_use","id":"toolu_a","name":"f","input":{}},
                                       {"type":"tool_use","id":"toolu_b","name":"f","input":{}}]},
        {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_a","content":"r"}]}]})",
     "messages[2]"},
    {"tool_use_id_repeated",
     R"({"model":"m","max_tokens":1,"messages":[{"role":"user","content":"q"},
        {"role":"assistant","content":[{"type":"tool_use","id":"toolu_a","name":"f","input":{}},
                                       {"type":"tool_use","id":"toolu_a","name":"f","input":{}}]}]})",
     "messages[1].content[1].id"},
    {"text_before_tool_result",
     R"({"model":"m","max_tokens":1,"messages":[{"role":"user","content":"q"},
        {"role":"assistant","content":[{"type":"tool_use","id":"toolu_a","name":"f","input":{}}]},
        {"role":"user","content":[{"type":"text","text":"first"},{"type":"tool_result","tool_use_id":"toolu_a","content":"r"}]}]})",
     "messages[2].content[1]"},
    {"tool_result_for_a_server_tool_use",
     R"({"model":"m","max_tokens":1,"messages":[{"role":"user","content":"q"},
        {"role":"assistant","content":[{"type":"server_tool_use","id":"srvtoolu_a","name":"python","input":{}}]},
        {"role":"user","content":[{"type":"tool_result","tool_use_id":"srvtoolu_a","content":"r"}]}]})",
     "messages[2].content[0].tool_use_id"},
    {"tool_result_pdf_document",
     R"({"model":"m","max_tokens":1,"messages":[{"role":"user","content":"q"},
        {"role":"assistant","content":[{"type":"tool_use","id":"toolu_a","name":"f","input":{}}]},
        {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_a","content":[
          {"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBE"}}]}]}]})",
     "messages[2].content[0].content[0].source"},
    {"empty_content_list", R"({"model":"m","max_tokens":1,"messages":[{"role":"user","content":[]}]})", "messages[0].content"},
    {"thinking_in_user_message",
     R"({"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"thinking","thinking":"x"}]}]})",
     "messages[0].content[0].type"},
    {"tool_result_plain_string_item",
     R"({"model":"m","max_tokens":1,"messages":[{"role":"user","content":"q"},
        {"role":"assistant","content":[{"type":"tool_use","id":"toolu_a","name":"f","input":{}}]},
        {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_a","content":["IMPORTANT"]}]}]})",
     "messages[2].content[0].content[0]"},
    {"tool_result_text_number",
     R"({"model":"m","max_tokens":1,"messages":[{"role":"user","content":"q"},
        {"role":"assistant","content":[{"type":"tool_use","id":"toolu_a","name":"f","input":{}}]},
        {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_a","content":[{"type":"text","text":42}]}]}]})",
     "messages[2].content[0].content[0].text"},
    {"permission_mode_number", R"({"model":"m","max_tokens":1,"permission_mode":1,)" MSG "}", "permission_mode"},
};
#undef MSG

INSTANTIATE_TEST_SUITE_P(Table, MessagesRequestRejects, ::testing::ValuesIn(k_rejects),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace warden::api::anthropic
