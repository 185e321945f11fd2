// The MCP registry routes (mcp_routes.h) through http::router, as app/serve.cpp mounts them, on
// an in-memory database and a fake manager that records configure() and answers canned
// statuses; and import_mcp_config_file.
#include "api/control/mcp_routes.h"

#include <gtest/gtest.h>

#include <fstream>

#include "common/json_util.h"
#include "common/testing/recording_writer.h"
#include "common/testing/temp_dir.h"
#include "http/router.h"
#include "http/testing/route_once.h"
#include "store/database.h"

namespace warden::api {
namespace {

using testing::recording_writer;
using tools::mcp_server_config;
using tools::mcp_server_status;

const std::string k_alice = "alice-key-0123456789abcdef";
const std::string k_ops = "ops-key-0123456789abcdef000";

class fake_control final : public tools::mcp_control {
 public:
  std::vector<std::vector<mcp_server_config>> configured;  ///< every configure() call
  std::vector<mcp_server_status> canned;                   ///< statuses()
  std::vector<mcp_server_config> tested;                   ///< every test() call
  std::optional<error> test_error;                         ///< test() fails with this
  json prompts = json::array();

  void configure(std::vector<mcp_server_config> servers) override { configured.push_back(std::move(servers)); }
  boost::asio::awaitable<std::optional<mcp_server_status>> refresh(std::string id) override {
    for (const auto& s : canned) {
      if (s.id == id) co_return s;
    }
    co_return std::nullopt;
  }
  boost::asio::awaitable<result<mcp_server_status>> test(mcp_server_config cfg) override {
    tested.push_back(cfg);
    if (test_error) co_return *test_error;
    co_return ready(cfg.id);
  }
  std::vector<mcp_server_status> statuses() const override { return canned; }
  boost::asio::awaitable<result<json>> list_prompts(std::string id) override {
    if (id == "down") co_return make_error(errc::upstream_unavailable, "connecting to down: refused");
    co_return prompts;
  }

  static mcp_server_status ready(const std::string& id) {
    mcp_server_status s;
    s.id = id;
    s.state = "ready";
    s.protocol_version = "2025-06-18";
    tools::mcp_tool_status t;
    t.name = id + "__read_file";
    t.tool = "read_file";
    s.tools.push_back(t);
    return s;
  }
};

const char* k_fs = R"({"id":"fs","command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","/tmp"]})";

struct mcp_routes_fixture : ::testing::Test {
  std::unique_ptr<store::database> db = open_db();
  store::mcp_server_store st{*db};
  fake_control control;
  control::mcp_deps deps{&st, &control, permission_mode::full, nullptr};
  bool named_keys = false;

  static std::unique_ptr<store::database> open_db() {
    auto db = store::database::open_memory();
    if (!db) throw std::runtime_error(db.error().message);
    return std::move(*db);
  }

  http::router make_router() {
    http::router_options opts;
    if (named_keys) {
      opts.keys = http::key_ring(std::vector<http::named_key>{{"alice", key_role::user, k_alice},
                                                              {"ops", key_role::admin, k_ops}});
    }
    return http::router(std::move(opts), control::mcp_routes(deps), control::control_surface());
  }

  recording_writer call(std::string method, std::string target, std::string body = {}, const std::string& key = "") {
    auto router = make_router();
    http_request r;
    r.method = std::move(method);
    r.path = std::move(target);
    r.body = std::move(body);
    r.headers.emplace_back("host", "127.0.0.1:8888");
    if (r.method == "POST" || r.method == "PUT") r.headers.emplace_back("content-type", "application/json");
    if (!key.empty()) r.headers.emplace_back("authorization", "Bearer " + key);
    return http::testing::route_once(router, r);
  }

  static json body_of(const recording_writer& w) { return json::parse(w.body); }
  static std::string code_of(const recording_writer& w) { return body_of(w)["error"]["code"].get<std::string>(); }
};

TEST_F(mcp_routes_fixture, CreateListShowAndConfigure) {
  auto w = call("POST", "/api/mcp/servers", k_fs);
  ASSERT_EQ(w.status, 201) << w.body;
  json e = body_of(w);
  EXPECT_EQ(e["id"], "fs");
  EXPECT_EQ(e["transport"], "stdio");
  EXPECT_EQ(e["owner"], "");
  EXPECT_GT(e["created_at_ms"].get<std::int64_t>(), 0);
  EXPECT_EQ(e["status"]["state"], "idle");
  ASSERT_EQ(control.configured.size(), 1u);
  ASSERT_EQ(control.configured[0].size(), 1u);
  EXPECT_EQ(control.configured[0][0].command, "npx");

  control.canned = {fake_control::ready("fs")};
  w = call("GET", "/api/mcp/servers");
  ASSERT_EQ(w.status, 200) << w.body;
  json l = body_of(w);
  EXPECT_EQ(l["object"], "list");
  ASSERT_EQ(l["data"].size(), 1u);
  EXPECT_EQ(l["data"][0]["id"], "fs");
  EXPECT_EQ(l["data"][0]["status"]["state"], "ready");
  EXPECT_EQ(l["data"][0]["status"]["tool_count"], 1);
  EXPECT_FALSE(l["data"][0]["status"].contains("tools"));

  w = call("GET", "/api/mcp/servers/fs");
  ASSERT_EQ(w.status, 200) << w.body;
  json d = body_of(w);
  EXPECT_EQ(d["args"][1], "@modelcontextprotocol/server-filesystem");
  EXPECT_EQ(d["status"]["protocol_version"], "2025-06-18");
  ASSERT_EQ(d["tools"].size(), 1u);
  EXPECT_EQ(d["tools"][0]["name"], "fs__read_file");
  EXPECT_EQ(call("GET", "/api/mcp/servers/nope").status, 404);
}

TEST_F(mcp_routes_fixture, CreateErrors) {
  ASSERT_EQ(call("POST", "/api/mcp/servers", k_fs).status, 201);
  auto dup = call("POST", "/api/mcp/servers", k_fs);
  EXPECT_EQ(dup.status, 400) << dup.body;
  EXPECT_EQ(code_of(dup), "mcp_server_exists");
  EXPECT_NE(body_of(dup)["error"]["message"].get<std::string>().find("an MCP server with id fs exists"), std::string::npos);
  auto bad = call("POST", "/api/mcp/servers", R"({"id":"x","command":"y","colour":1})");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(body_of(bad)["error"]["param"], "colour");
  auto secret = call("POST", "/api/mcp/servers",
                     R"({"id":"gh","url":"https://h/","headers":{"Authorization":"Bearer abcdef0123456789"}})");
  EXPECT_EQ(secret.status, 400);
  EXPECT_EQ(code_of(secret), "literal_secret");
  EXPECT_EQ(call("POST", "/api/mcp/servers", "not json").status, 400);
  EXPECT_EQ(control.configured.size(), 1u);  // only the one change
}

TEST_F(mcp_routes_fixture, PutReplacesAndKeepsCreated) {
  ASSERT_EQ(call("POST", "/api/mcp/servers", k_fs).status, 201);
  const auto created = st.find("fs")->value().created_unix_ms;
  auto w = call("PUT", "/api/mcp/servers/fs", R"({"command":"uvx","args":["mcp-server-fs"],"enabled":false})");
  ASSERT_EQ(w.status, 200) << w.body;
  json e = body_of(w);
  EXPECT_EQ(e["command"], "uvx");
  EXPECT_EQ(e["enabled"], false);
  EXPECT_EQ(e["created_at_ms"], created);
  EXPECT_EQ(e["status"]["state"], "disabled");
  ASSERT_EQ(control.configured.size(), 2u);
  EXPECT_EQ(control.configured[1][0].command, "uvx");
  EXPECT_EQ(call("PUT", "/api/mcp/servers/nope", R"({"command":"x"})").status, 404);
  auto other = call("PUT", "/api/mcp/servers/fs", R"({"id":"gh","command":"x"})");
  EXPECT_EQ(other.status, 400);
  EXPECT_EQ(body_of(other)["error"]["param"], "id");
}

TEST_F(mcp_routes_fixture, DeleteRemovesAndReconfigures) {
  ASSERT_EQ(call("POST", "/api/mcp/servers", k_fs).status, 201);
  auto w = call("DELETE", "/api/mcp/servers/fs");
  ASSERT_EQ(w.status, 200) << w.body;
  EXPECT_EQ(body_of(w), json::parse(R"({"deleted":true,"id":"fs"})"));
  ASSERT_EQ(control.configured.size(), 2u);
  EXPECT_TRUE(control.configured[1].empty());
  auto again = call("DELETE", "/api/mcp/servers/fs");
  EXPECT_EQ(again.status, 404);
  EXPECT_EQ(code_of(again), "mcp_server_not_found");
}

TEST_F(mcp_routes_fixture, RefreshTestAndPrompts) {
  ASSERT_EQ(call("POST", "/api/mcp/servers", k_fs).status, 201);
  EXPECT_EQ(call("POST", "/api/mcp/servers/fs/refresh").status, 404);  // the manager does not know it
  control.canned = {fake_control::ready("fs")};
  auto r = call("POST", "/api/mcp/servers/fs/refresh");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body_of(r)["state"], "ready");
  EXPECT_EQ(body_of(r)["tools"].size(), 1u);
  EXPECT_EQ(call("POST", "/api/mcp/servers/nope/refresh").status, 404);

  auto t = call("POST", "/api/mcp/servers/fs/test");
  ASSERT_EQ(t.status, 200) << t.body;
  ASSERT_EQ(control.tested.size(), 1u);
  EXPECT_EQ(control.tested[0].command, "npx");
  control.test_error = make_error(errc::upstream_unavailable, "initialize: the server closed its stdout");
  auto broken = call("POST", "/api/mcp/servers/fs/test");
  EXPECT_EQ(broken.status, 502) << broken.body;
  EXPECT_EQ(body_of(broken)["error"]["message"], "initialize: the server closed its stdout");
  EXPECT_EQ(body_of(broken)["error"]["type"], "api_error");

  control.test_error.reset();
  auto unsaved = call("POST", "/api/mcp/servers/test", R"({"url":"https://example.com/mcp"})");
  ASSERT_EQ(unsaved.status, 200) << unsaved.body;
  EXPECT_EQ(control.tested.back().id, "test");
  EXPECT_EQ(control.tested.back().url, "https://example.com/mcp");
  EXPECT_EQ(call("POST", "/api/mcp/servers/test", R"({"id":"named","command":"x"})").status, 200);
  EXPECT_EQ(control.tested.back().id, "named");
  EXPECT_FALSE(st.find("named")->has_value());  // never saved

  control.prompts = json::parse(R"([{"name":"review","description":"Review a PR"}])");
  auto p = call("GET", "/api/mcp/servers/fs/prompts");
  ASSERT_EQ(p.status, 200) << p.body;
  EXPECT_EQ(body_of(p)["object"], "list");
  EXPECT_EQ(body_of(p)["data"][0]["name"], "review");
  ASSERT_EQ(call("POST", "/api/mcp/servers", R"({"id":"down","url":"http://127.0.0.1:9/mcp"})").status, 201);
  EXPECT_EQ(call("GET", "/api/mcp/servers/down/prompts").status, 502);
  EXPECT_EQ(call("GET", "/api/mcp/servers/fs/nonsense").status, 404);
  EXPECT_EQ(call("GET", "/api/mcp/servers/fs/refresh").status, 405);
}

TEST_F(mcp_routes_fixture, ImportAddsAndRefusesExistingUnlessReplace) {
  const std::string doc = R"({"document":{"mcpServers":{
      "filesystem":{"command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","/tmp"]},
      "github":{"url":"https://api.githubcopilot.com/mcp/","headers":{"Authorization":"Bearer ${env:GITHUB_TOKEN}"}}}}})";
  auto w = call("POST", "/api/mcp/import", doc);
  ASSERT_EQ(w.status, 200) << w.body;
  json l = body_of(w);
  ASSERT_EQ(l["data"].size(), 2u);
  EXPECT_EQ(l["data"][0]["id"], "filesystem");
  EXPECT_EQ(l["data"][1]["headers"]["Authorization"], "Bearer ${env:GITHUB_TOKEN}");
  EXPECT_EQ(control.configured.back().size(), 2u);

  auto again = call("POST", "/api/mcp/import", doc);
  EXPECT_EQ(again.status, 400) << again.body;
  EXPECT_EQ(code_of(again), "mcp_server_exists");
  auto replaced = call("POST", "/api/mcp/import", R"({"replace":true,"document":{"filesystem":{"command":"uvx"}}})");
  ASSERT_EQ(replaced.status, 200) << replaced.body;
  EXPECT_EQ(st.find("filesystem")->value().config_json.find("uvx") != std::string::npos, true);
  EXPECT_EQ(st.list()->size(), 2u);

  auto bad = call("POST", "/api/mcp/import", R"({"document":{"mcpServers":{"gh":{"command":"npx","env":{"GH_TOKEN":"x1"}}}}})");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(body_of(bad)["error"]["param"], "document.servers.gh.env.GH_TOKEN");
  EXPECT_EQ(call("POST", "/api/mcp/import", R"({})").status, 400);
  EXPECT_EQ(call("POST", "/api/mcp/import", R"({"document":{},"extra":1})").status, 400);
}

TEST_F(mcp_routes_fixture, SandboxOffNeedsMaxPermissionFull) {
  const std::string unjailed = R"({"id":"raw","command":"node","args":["server.js"],"sandbox":false})";
  deps.max_permission = permission_mode::off;
  auto w = call("POST", "/api/mcp/servers", unjailed);
  EXPECT_EQ(w.status, 403) << w.body;
  EXPECT_EQ(code_of(w), "permission_mode_not_allowed");
  EXPECT_NE(body_of(w)["error"]["message"].get<std::string>().find("--max-permission full"), std::string::npos);
  EXPECT_EQ(call("POST", "/api/mcp/servers/test", unjailed).status, 403);
  EXPECT_EQ(call("POST", "/api/mcp/import", R"({"document":{"raw":{"command":"x","sandbox":false}}})").status, 403);
  EXPECT_TRUE(control.tested.empty());
  deps.max_permission = permission_mode::full;
  EXPECT_EQ(call("POST", "/api/mcp/servers", unjailed).status, 201);
}

TEST_F(mcp_routes_fixture, NamedUserKeysReadButOnlyAdminsChange) {
  named_keys = true;
  ASSERT_EQ(call("POST", "/api/mcp/servers", k_fs, k_ops).status, 201);
  EXPECT_EQ(st.find("fs")->value().owner, "ops");
  EXPECT_EQ(call("GET", "/api/mcp/servers", "", k_alice).status, 200);
  EXPECT_EQ(call("GET", "/api/mcp/servers/fs", "", k_alice).status, 200);
  for (auto [method, path, body] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"POST", "/api/mcp/servers", R"({"id":"b","command":"x"})"},
           {"PUT", "/api/mcp/servers/fs", R"({"command":"x"})"},
           {"DELETE", "/api/mcp/servers/fs", ""},
           {"POST", "/api/mcp/import", R"({"document":{}})"},
           {"POST", "/api/mcp/servers/test", R"({"command":"x"})"},
           {"POST", "/api/mcp/servers/fs/refresh", ""}}) {
    auto w = call(method, path, body, k_alice);
    EXPECT_EQ(w.status, 403) << method << " " << path << ": " << w.body;
    EXPECT_EQ(code_of(w), "admin_only");
  }
  EXPECT_EQ(call("GET", "/api/mcp/servers").status, 401);
  EXPECT_EQ(st.list()->size(), 1u);
  EXPECT_EQ(control.configured.size(), 1u);
}

TEST_F(mcp_routes_fixture, WithoutStoreOrManager503) {
  deps.control = nullptr;
  EXPECT_EQ(call("GET", "/api/mcp/servers").status, 503);
  deps.control = &control;
  deps.store = nullptr;
  EXPECT_EQ(call("POST", "/api/mcp/servers", k_fs).status, 503);
}

struct mcp_import_file : mcp_routes_fixture {
  warden::testing::temp_dir dir;
  std::string write(const std::string& text) {
    const std::string path = dir.path + "/mcp.json";
    std::ofstream(path) << text;
    return path;
  }
};

TEST_F(mcp_import_file, UpsertsEveryEntryAsTheSingleUser) {
  ASSERT_TRUE(st.insert({"filesystem", "ops", R"({"command":"old"})", 5, 5}).ok());
  const auto path = write(R"({"mcpServers":{
      "filesystem":{"command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","/tmp"]},
      "remote":{"url":"https://mcp.example.com/mcp","headers":{"Authorization":"Bearer ${env:REMOTE_TOKEN}"}}}})");
  auto r = control::import_mcp_config_file(path, st);
  ASSERT_TRUE(r.ok()) << r.error().message;
  auto all = control::load_mcp_servers(st);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].command, "npx");
  EXPECT_EQ((*all)[0].created_unix_ms, 5);  // replaced in place
  EXPECT_EQ((*all)[1].owner, "");
  EXPECT_EQ((*all)[1].transport, tools::mcp_transport::http);
  EXPECT_TRUE(control::import_mcp_config_file(path, st).ok());  // again: the same two
  EXPECT_EQ(st.list()->size(), 2u);
}

TEST_F(mcp_import_file, ErrorsNameTheFileAndWriteNothing) {
  auto missing = control::import_mcp_config_file(dir.path + "/none.json", st);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find(dir.path + "/none.json"), std::string::npos) << missing.error().message;
  const auto not_json = write("{mcpServers:");
  auto bad = control::import_mcp_config_file(not_json, st);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find(not_json), std::string::npos);
  EXPECT_NE(bad.error().message.find("JSON"), std::string::npos);
  const auto with_secret = write(R"({"mcpServers":{"ok":{"command":"a"},"gh":{"command":"npx",
      "env":{"GITHUB_PERSONAL_ACCESS_TOKEN":"<YOUR_TOKEN>"}}}})");
  auto refused = control::import_mcp_config_file(with_secret, st);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find(with_secret), std::string::npos);
  EXPECT_NE(refused.error().message.find("server 'gh'"), std::string::npos) << refused.error().message;
  const auto unjailed = write(R"({"raw":{"command":"node","sandbox":false}})");
  EXPECT_FALSE(control::import_mcp_config_file(unjailed, st, permission_mode::auto_).ok());
  EXPECT_TRUE(st.list()->empty());
}

}  // namespace
}  // namespace warden::api
