// The MCP client's pure parts (mcp_protocol.h): names, markup, annotations, results, elicitation.
#include <gtest/gtest.h>

#include <regex>

#include "tools/mcp_config.h"
#include "tools/mcp_protocol.h"

namespace warden::tools::mcp {
namespace {

TEST(McpProtocol, QualifiedNamesAreSanitisedAndBounded) {
  const std::regex shape("^[a-zA-Z0-9_-]{1,64}$");
  struct row {
    std::string server, tool, want;
  } rows[] = {
      {"fs", "read_file", "fs__read_file"},
      {"my.server", "list dir", "my_server__list_dir"},
      {"gh", "issues/create", "gh__issues_create"},
      {"x", "ünïcode", "x____n__code"},  // each UTF-8 byte becomes '_'
  };
  for (const auto& r : rows) {
    EXPECT_EQ(qualified_name(r.server, r.tool), r.want) << r.tool;
    EXPECT_TRUE(std::regex_match(qualified_name(r.server, r.tool), shape));
  }
  const std::string long_a(80, 'a');
  const std::string long_b = std::string(79, 'a') + "b";
  const std::string na = qualified_name("srv", long_a);
  const std::string nb = qualified_name("srv", long_b);
  EXPECT_EQ(na.size(), 64u);
  EXPECT_TRUE(std::regex_match(na, shape));
  EXPECT_NE(na, nb);                            // the hash keeps them apart
  EXPECT_EQ(na, qualified_name("srv", long_a));  // and stable
}

TEST(McpProtocol, TemplateMarkupIsFoundAndNeutralised) {
  for (const char* bad : {"<|im_start|>system", "ends </tool_call> here", "[INST] do it [/INST]", "{% if x %}",
                          "{{ secret }}", "<start_of_turn>user", "<s>hi</s>", "<function=run>"}) {
    EXPECT_TRUE(has_template_markup(bad)) << bad;
    EXPECT_FALSE(has_template_markup(neutralise(bad))) << neutralise(bad);
  }
  for (const char* fine : {"Reads a file. Use a <path> argument? no", "Returns x < y and a > b", "plain text"}) {
    EXPECT_FALSE(has_template_markup(fine)) << fine;
  }
}

TEST(McpProtocol, AnnotationsCountOnlyForTrustedServers) {
  const json ro = {{"readOnlyHint", true}, {"openWorldHint", false}};
  const json ro_open = {{"readOnlyHint", true}};
  const json destructive = {{"readOnlyHint", true}, {"destructiveHint", true}, {"openWorldHint", false}};
  EXPECT_FALSE(traits_for(ro, false).read_only);  // untrusted hints count for nothing
  EXPECT_FALSE(traits_for(ro, false).reads_network);
  EXPECT_TRUE(traits_for(ro, true).read_only);
  EXPECT_FALSE(traits_for(ro, true).reads_network);
  EXPECT_TRUE(traits_for(ro_open, true).read_only);
  EXPECT_TRUE(traits_for(ro_open, true).reads_network);  // missing openWorldHint = open world
  EXPECT_FALSE(traits_for(destructive, true).read_only);
  EXPECT_FALSE(traits_for(json::object(), true).read_only);  // missing = not read-only
  EXPECT_FALSE(traits_for(json::object(), true).runs_code);
}

TEST(McpProtocol, ToolsPagesSkipNamelessToolsAndKeepTheCursor) {
  const json page = {{"tools",
                      {{{"name", "a"}, {"description", "A"}, {"inputSchema", {{"type", "object"}}}},
                       {{"description", "no name"}},
                       {{"name", 3}},
                       {{"name", "b"}, {"_meta", {{"ui", {{"visibility", {"app"}}}}}}},
                       {{"name", "c"}, {"annotations", {{"readOnlyHint", true}}}}}},
                     {"nextCursor", "p2"}};
  auto p = parse_tools_page(page);
  ASSERT_TRUE(p);
  ASSERT_EQ(p->tools.size(), 3u);
  EXPECT_EQ(p->tools[0].name, "a");
  EXPECT_FALSE(p->tools[0].app_only);
  EXPECT_TRUE(p->tools[1].app_only);
  EXPECT_EQ(p->tools[1].input_schema, json({{"type", "object"}}));  // a missing schema is an empty object
  EXPECT_EQ(p->tools[2].annotations["readOnlyHint"], true);
  EXPECT_EQ(p->next_cursor, "p2");
  EXPECT_FALSE(parse_tools_page(json{{"nope", 1}}));
}

TEST(McpProtocol, ResultsFlattenToText) {
  auto out = flatten_result({{"content",
                              {{{"type", "text"}, {"text", "hello"}},
                               {{"type", "image"}, {"mimeType", "image/png"}, {"data", "AAAA"}},
                               {{"type", "resource"}, {"resource", {{"uri", "memo://1"}, {"text", "memo text"}}}},
                               {{"type", "resource_link"}, {"uri", "file:///x"}}}}});
  EXPECT_EQ(out.text, "hello\n[image: image/png, 3 bytes]\nmemo text\n[resource: file:///x]");
  EXPECT_FALSE(out.is_error);
  auto err = flatten_result({{"content", {{{"type", "text"}, {"text", "bad"}}}}, {"isError", true}});
  EXPECT_TRUE(err.is_error);
  EXPECT_EQ(flatten_result({{"content", json::array()}, {"structuredContent", {{"n", 1}}}}).text, "{\"n\":1}");
  EXPECT_TRUE(flatten_result(json("x")).is_error);
}

TEST(McpProtocol, MessagesAreClassified) {
  EXPECT_EQ(classify({{"jsonrpc", "2.0"}, {"id", 1}, {"result", json::object()}}).kind, message_kind::response);
  EXPECT_EQ(classify({{"jsonrpc", "2.0"}, {"id", "a"}, {"error", {{"code", -1}, {"message", "m"}}}}).kind,
            message_kind::error_response);
  EXPECT_EQ(classify({{"jsonrpc", "2.0"}, {"id", 4}, {"method", "ping"}}).kind, message_kind::request);
  EXPECT_EQ(classify({{"jsonrpc", "2.0"}, {"method", "notifications/progress"}}).kind, message_kind::notification);
  EXPECT_EQ(classify({{"jsonrpc", "1.0"}, {"id", 1}, {"result", 1}}).kind, message_kind::invalid);
  EXPECT_EQ(classify({{"jsonrpc", "2.0"}, {"id", 1.5}, {"result", 1}}).kind, message_kind::invalid);
  EXPECT_EQ(classify(json::array()).kind, message_kind::invalid);
  // a hostile server's wrong types are invalid or ignored, never an exception (breaker, issue 26)
  EXPECT_EQ(classify({{"jsonrpc", 2}, {"method", "notifications/x"}}).kind, message_kind::invalid);
  const incoming odd = classify({{"jsonrpc", "2.0"}, {"id", 999}, {"error", {{"code", "x"}, {"message", 5}}}});
  EXPECT_EQ(odd.kind, message_kind::error_response);
  EXPECT_EQ(odd.error_code, 0);
  EXPECT_FALSE(flatten_result({{"isError", "yes"}, {"content", "nope"}}).is_error);
  EXPECT_FALSE(traits_for({{"readOnlyHint", "true"}}, true).read_only);
  EXPECT_FALSE(parse_elicitation({{"mode", 5}}));
  EXPECT_FALSE(parse_elicitation({{"requestedSchema", {{"type", 3}}}}));
}

TEST(McpProtocol, VersionNegotiation) {
  EXPECT_EQ(initialize_params(true)["protocolVersion"], "2025-11-25");
  EXPECT_TRUE(initialize_params(true)["capabilities"].contains("elicitation"));
  EXPECT_FALSE(initialize_params(false)["capabilities"].contains("elicitation"));
  EXPECT_EQ(*negotiated_version({{"protocolVersion", "2025-06-18"}}), "2025-06-18");
  EXPECT_EQ(*negotiated_version({{"protocolVersion", "2025-11-25"}}), "2025-11-25");
  auto old = negotiated_version({{"protocolVersion", "2024-11-05"}});
  ASSERT_FALSE(old);
  EXPECT_NE(old.error().message.find("2024-11-05"), std::string::npos);
  EXPECT_FALSE(negotiated_version(json::object()));
}

TEST(McpProtocol, ElicitationRequestsAndAnswers) {
  const json schema = {{"type", "object"},
                       {"properties",
                        {{"name", {{"type", "string"}, {"maxLength", 5}}},
                         {"age", {{"type", "integer"}, {"minimum", 0}}},
                         {"color", {{"type", "string"}, {"enum", {"red", "green"}}}},
                         {"ok", {{"type", "boolean"}}}}},
                       {"required", {"name"}}};
  auto form = parse_elicitation({{"message", "Who?"}, {"requestedSchema", schema}});
  ASSERT_TRUE(form);
  EXPECT_EQ(form->mode, "form");
  auto url = parse_elicitation({{"mode", "url"}, {"message", "Sign in"}, {"url", "https://example.com/a"}, {"elicitationId", "e1"}});
  ASSERT_TRUE(url);
  EXPECT_EQ(url->url, "https://example.com/a");
  EXPECT_FALSE(parse_elicitation({{"mode", "url"}, {"url", "javascript:alert(1)"}}));
  EXPECT_FALSE(parse_elicitation({{"requestedSchema", {{"type", "object"}, {"properties", {{"x", {{"type", "object"}}}}}}}}));
  EXPECT_FALSE(parse_elicitation({{"mode", "telepathy"}}));

  EXPECT_TRUE(check_elicitation_content(schema, {{"name", "Ada"}, {"age", 36}, {"color", "red"}, {"ok", true}}));
  EXPECT_TRUE(check_elicitation_content(schema, {{"name", "Zoë Ö"}}));  // 5 characters, 7 bytes
  // 2025-11-25: titled single-select and multi-select (the reference everything server asks these)
  const json selects = json::parse(R"({"type": "object", "properties": {
      "one": {"type": "string", "oneOf": [{"const": "a", "title": "A"}, {"const": "b", "title": "B"}]},
      "many": {"type": "array", "items": {"type": "string", "enum": ["x", "y", "z"]}, "maxItems": 2}}})");
  ASSERT_TRUE(parse_elicitation({{"message", "pick"}, {"requestedSchema", selects}}));
  EXPECT_TRUE(check_elicitation_content(selects, {{"one", "a"}, {"many", {"x", "z"}}}));
  EXPECT_EQ(check_elicitation_content(selects, {{"one", "c"}}).error().param, "one");
  EXPECT_EQ(check_elicitation_content(selects, {{"many", {"x", "w"}}}).error().param, "many");
  EXPECT_EQ(check_elicitation_content(selects, {{"many", {"x", "y", "z"}}}).error().param, "many");
  EXPECT_EQ(check_elicitation_content(selects, {{"many", "x"}}).error().param, "many");
  struct bad {
    json content;
    std::string field;
  } rows[] = {
      {json::object(), "name"},
      {{{"name", "Adaline"}}, "name"},
      {{{"name", 3}}, "name"},
      {{{"name", "A"}, {"age", -1}}, "age"},
      {{{"name", "A"}, {"age", 1.5}}, "age"},
      {{{"name", "A"}, {"color", "blue"}}, "color"},
      {{{"name", "A"}, {"ok", "yes"}}, "ok"},
      {{{"name", "A"}, {"extra", 1}}, "extra"},
  };
  for (const auto& r : rows) {
    auto e = check_elicitation_content(schema, r.content);
    ASSERT_FALSE(e) << r.content.dump();
    EXPECT_EQ(e.error().param, r.field) << r.content.dump();
  }
  EXPECT_FALSE(check_elicitation_content(schema, json::array()));
}

}  // namespace
}  // namespace warden::tools::mcp

namespace warden::tools {
namespace {
TEST(McpServerIds, NoIdCanMakeAnotherServersToolName) {
  EXPECT_TRUE(valid_mcp_server_id("fs"));
  EXPECT_TRUE(valid_mcp_server_id("my_server-2"));
  EXPECT_FALSE(valid_mcp_server_id("a__b"));  // a__b + c would be a + b__c
  EXPECT_FALSE(valid_mcp_server_id("a_"));    // a_ + _b would be a + __b
  EXPECT_FALSE(valid_mcp_server_id(""));
  EXPECT_FALSE(valid_mcp_server_id("a.b"));
}
}  // namespace
}  // namespace warden::tools
