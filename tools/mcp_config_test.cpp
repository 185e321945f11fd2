// mcp_config (mcp_config.h) and the status JSON of mcp_control.h: entries, every validation
// error, the three import formats, secrets refused, references resolved.
#include "tools/mcp_config.h"

#include <gtest/gtest.h>

#include "tools/mcp_control.h"

namespace warden::tools {
namespace {

json j(const char* text) { return json::parse(text); }

mcp_server_config must_parse(const json& entry, std::string_view id = "") {
  auto c = parse_server_config(entry, id);
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().message + " [" + c.error().param + "]");
  return c.ok() ? *c : mcp_server_config{};
}

TEST(mcp_config, StdioEntryWithDefaults) {
  auto c = must_parse(j(R"({"id":"fs","command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","/home/me"]})"));
  EXPECT_EQ(c.id, "fs");
  EXPECT_EQ(c.name, "fs");
  EXPECT_EQ(c.transport, mcp_transport::stdio);
  EXPECT_EQ(c.command, "npx");
  EXPECT_EQ(c.args.size(), 3u);
  EXPECT_TRUE(c.enabled);
  EXPECT_EQ(c.timeout_ms, 60000);
  EXPECT_FALSE(c.allowed_tools.has_value());
  EXPECT_FALSE(c.trusted);
  EXPECT_FALSE(c.network);
  EXPECT_TRUE(c.sandbox);
  EXPECT_TRUE(c.read_only_paths.empty());
}

TEST(mcp_config, HttpEntryEveryField) {
  auto c = must_parse(j(R"({"id":"gh","name":"GitHub","url":"https://api.githubcopilot.com/mcp/",
      "headers":{"X-MCP-Toolsets":"repos,issues"},"bearer_token_env":"GITHUB_TOKEN","enabled":false,
      "timeout_ms":1000,"allowed_tools":["search_issues"],"trusted":true,"network":true,"sandbox":true,
      "read_only_paths":["/opt/mcp"]})"));
  EXPECT_EQ(c.transport, mcp_transport::http);  // defaulted from url
  EXPECT_EQ(c.name, "GitHub");
  EXPECT_EQ(c.headers.at("X-MCP-Toolsets"), "repos,issues");
  EXPECT_EQ(c.bearer_token_env, "GITHUB_TOKEN");
  EXPECT_FALSE(c.enabled);
  EXPECT_EQ(c.timeout_ms, 1000);
  ASSERT_TRUE(c.allowed_tools.has_value());
  EXPECT_EQ(*c.allowed_tools, std::vector<std::string>{"search_issues"});
  EXPECT_TRUE(c.trusted);
  EXPECT_TRUE(c.network);
  EXPECT_EQ(c.read_only_paths, std::vector<std::string>{"/opt/mcp"});
}

TEST(mcp_config, PathIdFillsAndMustMatch) {
  EXPECT_EQ(must_parse(j(R"({"command":"x"})"), "srv").id, "srv");
  EXPECT_EQ(must_parse(j(R"({"id":"srv","command":"x"})"), "srv").id, "srv");
  auto e = parse_server_config(j(R"({"id":"other","command":"x"})"), "srv");
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().param, "id");
}

struct bad_case {
  const char* body;
  const char* param;
  const char* says;  ///< a piece of the message
};

TEST(mcp_config, EveryValidationErrorNamesItsField) {
  const bad_case cases[] = {
      {R"({"command":"x"})", "id", "required"},
      {R"({"id":"","command":"x"})", "id", "required"},
      {R"({"id":"a b","command":"x"})", "id", "1 to 32"},
      {R"({"id":"abcdefghijabcdefghijabcdefghijabc","command":"x"})", "id", "1 to 32"},
      {R"({"id":7,"command":"x"})", "id", "string"},
      {R"({"id":"a","command":"x","colour":"red"})", "colour", "unknown field"},
      {R"({"id":"a","name":"0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789x","command":"x"})",
       "name", "100"},
      {R"({"id":"a","transport":"sse","url":"http://x/"})", "transport", "stdio"},
      {R"({"id":"a"})", "command", "required"},
      {R"({"id":"a","command":""})", "command", "required"},
      {R"({"id":"a","command":"x","args":"-y"})", "args", "array"},
      {R"({"id":"a","command":"x","args":["ok",3]})", "args[1]", "string"},
      {R"({"id":"a","command":"x","env":{"1BAD":"v"}})", "env.1BAD", "variable name"},
      {R"({"id":"a","command":"x","env":{"A":1}})", "env.A", "string"},
      {R"({"id":"a","command":"x","env":{"A":"${input:token}"}})", "env.A", "${env:NAME}"},
      {R"({"id":"a","command":"x","env":{"A":"${env:X"}})", "env.A", "unclosed"},
      {R"({"id":"a","transport":"stdio","command":"x","url":"http://h/"})", "url", "http servers"},
      {R"({"id":"a","transport":"http"})", "url", "required"},
      {R"({"id":"a","url":"ftp://h/"})", "url", "http://"},
      {R"({"id":"a","url":"http://h/","command":"x"})", "command", "stdio servers"},
      {R"({"id":"a","url":"http://h/","headers":{"Bad Name":"v"}})", "headers.Bad Name", "header name"},
      {R"({"id":"a","url":"http://h/","headers":{"X":"a\nb"}})", "headers.X", "one line"},
      {R"({"id":"a","url":"http://h/","bearer_token_env":"not-a-var"})", "bearer_token_env", "environment variable"},
      {R"({"id":"a","url":"http://h/","bearer_token_env":"T","headers":{"Authorization":"Bearer ${env:T}"}})",
       "bearer_token_env", "not both"},
      {R"({"id":"a","command":"x","enabled":"yes"})", "enabled", "boolean"},
      {R"({"id":"a","command":"x","timeout_ms":999})", "timeout_ms", ""},
      {R"({"id":"a","command":"x","timeout_ms":3600001})", "timeout_ms", ""},
      {R"({"id":"a","command":"x","allowed_tools":"all"})", "allowed_tools", "array"},
      {R"({"id":"a","command":"x","allowed_tools":[""]})", "allowed_tools[0]", "tool name"},
      {R"({"id":"a","command":"x","trusted":1})", "trusted", "boolean"},
      {R"({"id":"a","command":"x","network":null,"sandbox":"no"})", "sandbox", "boolean"},
      {R"({"id":"a","command":"x","read_only_paths":["relative/dir"]})", "read_only_paths[0]", "absolute"},
      {R"({"id":"a","command":"x","read_only_paths":["/opt/../etc"]})", "read_only_paths[0]", ".."},
      {R"({"id":"a","command":"x","cwd":5})", "cwd", "string"},
  };
  for (const auto& c : cases) {
    auto r = parse_server_config(json::parse(c.body));
    ASSERT_FALSE(r.ok()) << c.body;
    EXPECT_EQ(r.error().code, errc::invalid_request) << c.body;
    EXPECT_EQ(r.error().param, c.param) << c.body << ": " << r.error().message;
    EXPECT_NE(r.error().message.find(c.says), std::string::npos) << c.body << ": " << r.error().message;
  }
  auto not_object = parse_server_config(json::array());
  ASSERT_FALSE(not_object.ok());
  EXPECT_EQ(not_object.error().code, errc::invalid_request);
}

TEST(mcp_config, LiteralSecretsAreRefused) {
  const bad_case cases[] = {
      {R"({"id":"a","url":"https://h/","headers":{"Authorization":"Bearer abcdef0123456789"}})", "headers.Authorization",
       "${env:NAME}"},
      {R"({"id":"a","url":"https://h/","headers":{"authorization":"token"}})", "headers.authorization", "Authorization"},
      {R"({"id":"a","url":"https://h/","headers":{"Authorization":"Bearer abc${env:T}"}})", "headers.Authorization",
       "Authorization"},
      {R"({"id":"a","url":"https://h/","headers":{"X-Api-Key":"k3y-value"}})", "headers.X-Api-Key", "${env:NAME}"},
      {R"({"id":"a","url":"https://h/","headers":{"X-Extra":"sk-proj-abcdefghij0123456789ABCDEFGHIJ"}})",
       "headers.X-Extra", "secret"},
      {R"({"id":"a","command":"npx","env":{"GITHUB_PERSONAL_ACCESS_TOKEN":"<YOUR_TOKEN>"}})",
       "env.GITHUB_PERSONAL_ACCESS_TOKEN", "${env:NAME}"},
      {R"({"id":"a","command":"npx","env":{"CONFIG":"ghp_abcdefghijklmnopqrstuvwxyz0123456789AB"}})", "env.CONFIG",
       "secret"},
      {R"({"id":"a","command":"npx","args":["--api-key","sk-proj-abcdefghij0123456789ABCDEFGHIJ"]})", "args", "secret"},
      {R"({"id":"a","url":"https://h/mcp?access_token=abc123"})", "url", "credential"},
  };
  for (const auto& c : cases) {
    auto r = parse_server_config(json::parse(c.body));
    ASSERT_FALSE(r.ok()) << c.body;
    EXPECT_EQ(r.error().param, c.param) << c.body << ": " << r.error().message;
    EXPECT_EQ(r.error().type_code, "literal_secret") << c.body;
    EXPECT_NE(r.error().message.find(c.says), std::string::npos) << c.body << ": " << r.error().message;
  }
}

TEST(mcp_config, ReferencesAndPlainValuesAreAccepted) {
  auto c = must_parse(j(R"({"id":"a","url":"https://h/","headers":{"Authorization":"Bearer ${env:GITHUB_TOKEN}",
      "X-Api-Key":"${API_KEY}","Accept-Language":"en"}})"));
  EXPECT_EQ(c.headers.at("Authorization"), "Bearer ${env:GITHUB_TOKEN}");
  auto s = must_parse(j(R"({"id":"b","command":"npx","env":{"GITHUB_TOKEN":"${env:GITHUB_TOKEN}","LOG_LEVEL":"debug",
      "EMPTY_TOKEN":""}})"));
  EXPECT_EQ(s.env.at("LOG_LEVEL"), "debug");
}

TEST(mcp_config, ResolveReferences) {
  const std::map<std::string, std::string> env = {{"GITHUB_TOKEN", "ghp_secret"}, {"HOST", "h"}};
  auto lookup = [&](const std::string& n) -> std::optional<std::string> {
    auto it = env.find(n);
    return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  EXPECT_EQ(*resolve_references("Bearer ${env:GITHUB_TOKEN}", lookup), "Bearer ghp_secret");
  EXPECT_EQ(*resolve_references("${HOST}:${env:HOST}/x", lookup), "h:h/x");
  EXPECT_EQ(*resolve_references("plain $HOST", lookup), "plain $HOST");
  auto unset = resolve_references("Bearer ${env:NOPE_NOT_SET}", lookup);
  ASSERT_FALSE(unset.ok());
  EXPECT_EQ(unset.error().code, errc::invalid_request);
  EXPECT_NE(unset.error().message.find("NOPE_NOT_SET"), std::string::npos) << unset.error().message;
  EXPECT_FALSE(resolve_references("${input:x}", lookup).ok());
}

TEST(mcp_config, ToJsonRoundTripsAndShowsOnlyReferences) {
  for (const char* body : {
           R"({"id":"fs","command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","/tmp"],
               "env":{"TOKEN":"${env:FS_TOKEN}"},"cwd":"/srv","read_only_paths":["/usr/lib/node_modules"]})",
           R"({"id":"gh","url":"https://h/mcp","headers":{"Authorization":"Bearer ${env:GITHUB_TOKEN}"},
               "allowed_tools":["a","b"],"trusted":true,"timeout_ms":5000,"enabled":false})"}) {
    auto c = must_parse(json::parse(body));
    c.owner = "alice";
    c.created_unix_ms = 1700000000000;
    c.updated_unix_ms = 1700000000001;
    const json out = to_json(c);
    EXPECT_EQ(out["created_at_ms"], 1700000000000);
    EXPECT_EQ(out["owner"], "alice");
    auto back = parse_server_config(out);
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(*back, c) << out.dump();
    EXPECT_EQ(to_json(*back), out);
  }
  ::setenv("WARDEN_MCP_TEST_SECRET", "ghp_resolved_value_never_shown", 1);
  auto c = must_parse(j(R"({"id":"gh","url":"https://h/","headers":{"Authorization":"Bearer ${env:WARDEN_MCP_TEST_SECRET}"}})"));
  const std::string text = to_json(c).dump();
  EXPECT_EQ(text.find("ghp_resolved_value_never_shown"), std::string::npos) << text;
  EXPECT_NE(text.find("${env:WARDEN_MCP_TEST_SECRET}"), std::string::npos) << text;
  EXPECT_EQ(to_json(must_parse(j(R"({"id":"x","command":"y"})")))["allowed_tools"], nullptr);
}

TEST(mcp_config_import, ClaudeDesktopFilesystemServer) {
  const json doc = j(R"({
    "mcpServers": {
      "filesystem": {
        "command": "npx",
        "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/username/Desktop", "/Users/username/Downloads"]
      },
      "github": {
        "command": "npx",
        "args": ["-y", "@modelcontextprotocol/server-github"],
        "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${env:GITHUB_TOKEN}"}
      }
    },
    "globalShortcut": "Ctrl+Space"
  })");
  auto r = parse_mcp_servers_document(doc);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->size(), 2u);
  const auto& fs = (*r)[0];
  EXPECT_EQ(fs.id, "filesystem");
  EXPECT_EQ(fs.transport, mcp_transport::stdio);
  EXPECT_EQ(fs.command, "npx");
  EXPECT_EQ(fs.args.back(), "/Users/username/Downloads");
  EXPECT_TRUE(fs.sandbox);
  EXPECT_EQ((*r)[1].env.at("GITHUB_PERSONAL_ACCESS_TOKEN"), "${env:GITHUB_TOKEN}");
}

TEST(mcp_config_import, CursorHttpServerWithHeaders) {
  const json doc = j(R"({
    "mcpServers": {
      "github remote": {
        "url": "https://api.githubcopilot.com/mcp/",
        "headers": {"Authorization": "Bearer ${env:GITHUB_TOKEN}"}
      },
      "linear": {"serverUrl": "https://mcp.linear.app/sse", "type": "sse", "disabled": true, "autoApprove": ["x"]},
      "local": {"url": "http://localhost:3000/mcp", "type": "streamable-http", "trusted": true}
    }
  })");
  auto r = parse_mcp_servers_document(doc);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->size(), 3u);
  const auto& gh = (*r)[0];
  EXPECT_EQ(gh.id, "github_remote");
  EXPECT_EQ(gh.name, "github remote");
  EXPECT_EQ(gh.transport, mcp_transport::http);
  EXPECT_EQ(gh.url, "https://api.githubcopilot.com/mcp/");
  EXPECT_EQ(gh.headers.at("Authorization"), "Bearer ${env:GITHUB_TOKEN}");
  EXPECT_EQ((*r)[1].url, "https://mcp.linear.app/sse");
  EXPECT_FALSE((*r)[1].enabled);
  EXPECT_TRUE((*r)[2].trusted);
}

TEST(mcp_config_import, VsCodeServersAndBareMaps) {
  auto vs = parse_mcp_servers_document(j(R"({
    "inputs": [{"type": "promptString", "id": "token", "password": true}],
    "servers": {
      "memory": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]},
      "fetch": {"type": "http", "url": "https://remote.mcpservers.org/fetch/mcp"}
    }
  })"));
  ASSERT_TRUE(vs.ok()) << vs.error().message;
  ASSERT_EQ(vs->size(), 2u);  // the map's own order: fetch, memory
  EXPECT_EQ((*vs)[0].id, "fetch");
  EXPECT_EQ((*vs)[0].transport, mcp_transport::http);
  EXPECT_EQ((*vs)[1].transport, mcp_transport::stdio);
  auto bare = parse_mcp_servers_document(j(R"({"time": {"command": "uvx", "args": ["mcp-server-time"]}})"));
  ASSERT_TRUE(bare.ok()) << bare.error().message;
  ASSERT_EQ(bare->size(), 1u);
  EXPECT_EQ((*bare)[0].command, "uvx");
  auto empty = parse_mcp_servers_document(j(R"({"mcpServers": {}})"));
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST(mcp_config_import, ErrorsNameTheEntry) {
  const bad_case cases[] = {
      {R"({"mcpServers": {"gh": {"command": "npx", "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "<YOUR_TOKEN>"}}}})",
       "servers.gh.env.GITHUB_PERSONAL_ACCESS_TOKEN", "server 'gh'"},
      {R"({"servers": {"x": {"type": "stdio"}}})", "servers.x.command", "server 'x'"},
      {R"({"servers": {"x": {"type": "websocket", "url": "ws://h"}}})", "servers.x.type", "sse"},
      {R"({"mcpServers": {"x": {"command": "a", "envFile": "/e"}}})", "servers.x.envFile", "unknown field"},
      {R"({"mcpServers": {"x": 3}})", "servers.x", "object"},
      {R"({"mcpServers": {"a.b": {"command": "a"}, "a_b": {"command": "b"}}})", "servers.a_b", "both become id"},
      {R"({"mcpServers": []})", "mcpServers", "object"},
      {R"({"name": "not servers"})", "document", "not an MCP servers document"},
      {R"([1])", "document", "object"},
  };
  for (const auto& c : cases) {
    auto r = parse_mcp_servers_document(json::parse(c.body));
    ASSERT_FALSE(r.ok()) << c.body;
    EXPECT_EQ(r.error().code, errc::invalid_request) << c.body;
    EXPECT_EQ(r.error().param, c.param) << c.body << ": " << r.error().message;
    EXPECT_NE(r.error().message.find(c.says), std::string::npos) << c.body << ": " << r.error().message;
  }
}

TEST(mcp_status, ToJson) {
  mcp_server_status s;
  s.id = "gh";
  s.state = "ready";
  s.protocol_version = "2025-06-18";
  s.server_info = {{"name", "github"}, {"version", "1.0"}};
  mcp_tool_status t;
  t.name = "gh__search";
  t.tool = "search";
  t.description = "Search issues";
  t.input_schema = {{"type", "object"}};
  t.executable = false;
  t.excluded_reason = "not in allowed_tools";
  s.tools.push_back(t);
  s.restarts = 2;
  const json out = to_json(s);
  EXPECT_EQ(out["id"], "gh");
  EXPECT_EQ(out["state"], "ready");
  EXPECT_EQ(out["error"], "");
  EXPECT_EQ(out["protocol_version"], "2025-06-18");
  EXPECT_EQ(out["server_info"]["name"], "github");
  EXPECT_EQ(out["restarts"], 2);
  ASSERT_EQ(out["tools"].size(), 1u);
  EXPECT_EQ(out["tools"][0], to_json(t));
  EXPECT_EQ(out["tools"][0]["name"], "gh__search");
  EXPECT_EQ(out["tools"][0]["tool"], "search");
  EXPECT_EQ(out["tools"][0]["executable"], false);
  EXPECT_EQ(out["tools"][0]["excluded_reason"], "not in allowed_tools");
  EXPECT_EQ(out["tools"][0]["input_schema"]["type"], "object");
  EXPECT_EQ(out["tools"][0]["annotations"], json::object());
}

}  // namespace
}  // namespace warden::tools
