// `warden mcp add`'s request body (mcp_command.h mcp_add_body).
#include "client/mcp_command.h"

#include <gtest/gtest.h>

namespace warden::client {
namespace {

TEST(mcp_command, StdioAddTakesTheWordsAfterTheId) {
  mcp_options o;
  o.args = {"fs", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp"};
  o.env = {"TOKEN=${env:FS_TOKEN}", "MODE=a=b"};
  o.read_only_paths = {"/usr/lib/node_modules"};
  o.network = true;
  auto b = mcp_add_body(o);
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(*b, json::parse(R"({"id":"fs","command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","/tmp"],
      "env":{"TOKEN":"${env:FS_TOKEN}","MODE":"a=b"},"network":true,"read_only_paths":["/usr/lib/node_modules"]})"));
}

TEST(mcp_command, HttpAddWithHeaders) {
  mcp_options o;
  o.args = {"gh"};
  o.url = "https://api.githubcopilot.com/mcp/";
  o.headers = {"Authorization: Bearer ${env:GITHUB_TOKEN}", "X-MCP-Toolsets:repos"};
  o.trusted = true;
  o.no_sandbox = true;
  auto b = mcp_add_body(o);
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(*b, json::parse(R"({"id":"gh","url":"https://api.githubcopilot.com/mcp/","headers":{
      "Authorization":"Bearer ${env:GITHUB_TOKEN}","X-MCP-Toolsets":"repos"},"trusted":true,"sandbox":false})"));
  o.headers.clear();
  o.bearer_token_env = "GITHUB_TOKEN";
  EXPECT_EQ((*mcp_add_body(o))["bearer_token_env"], "GITHUB_TOKEN");
}

TEST(mcp_command, BadArgumentsSayWhy) {
  auto message = [](mcp_options o) {
    auto b = mcp_add_body(o);
    return b.ok() ? std::string() : b.error().message;
  };
  mcp_options none;
  EXPECT_NE(message(none).find("give the server's id"), std::string::npos);
  mcp_options only_id;
  only_id.args = {"fs"};
  EXPECT_NE(message(only_id).find("-- COMMAND"), std::string::npos);
  mcp_options both;
  both.args = {"fs", "npx"};
  both.url = "http://h/";
  EXPECT_NE(message(both).find("not both"), std::string::npos);
  mcp_options header_on_stdio;
  header_on_stdio.args = {"fs", "npx"};
  header_on_stdio.headers = {"A: b"};
  EXPECT_NE(message(header_on_stdio).find("--url servers"), std::string::npos);
  mcp_options bad_header;
  bad_header.args = {"gh"};
  bad_header.url = "http://h/";
  bad_header.headers = {"no colon"};
  EXPECT_NE(message(bad_header).find("'Name: value'"), std::string::npos);
  mcp_options bad_env;
  bad_env.args = {"fs", "npx"};
  bad_env.env = {"=x"};
  EXPECT_NE(message(bad_env).find("NAME=VALUE"), std::string::npos);
}

}  // namespace
}  // namespace warden::client
