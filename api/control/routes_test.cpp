#include <gtest/gtest.h>

#include "agent/agent_fakes.h"
#include "api/control/routes.h"
#include "api/openai/chat_handler.h"
#include "common/json_util.h"
#include "common/testing/recording_writer.h"
#include "engine/http_client.h"
#include "http/router.h"
#include "http/testing/route_once.h"

// The surfaces' route tables (api/openai, api/control) served by http::router, as app/serve.cpp
// assembles them.
namespace warden::api {
namespace {

class fake_upstream final : public engine::upstream {
 public:
  engine::upstream_state st = engine::upstream_state::starting;
  result<void> start() override { return {}; }
  void stop() override {}
  engine::upstream_state state() const override { return st; }
  std::string status_message() const override { return "loading model m1"; }
  std::string model_id() const override { return "m1"; }
  std::string url_for(std::string_view p) const override { return "http://127.0.0.1:9/v1/" + std::string(p); }
  std::vector<std::string> request_headers() const override { return {}; }
  bool is_local() const override { return true; }
};

using testing::recording_writer;

struct fixture : ::testing::Test {
  fake_upstream up;
  engine::http_client client;
  engine::chat_service chat{up, client, std::chrono::milliseconds(1000)};
  engine::openai_chat_backend backend{chat};
  agent::testing::fake_registry tools;
  agent::approval_registry approvals{std::chrono::milliseconds(60000)};
  agent::cancel_registry cancels;
  agent::tool_runtime rt{approvals, cancels, tools.reg, "/tmp/unused", std::chrono::milliseconds(1000)};
  openai::openai_deps oai{chat, backend, &rt, 0};
  control::control_deps ctl{&rt, [this] { return health(); }, nullptr};

  http::router make(std::string key) {
    std::vector<route> table = control::routes(ctl);
    for (auto& r : openai::routes(oai)) table.push_back(std::move(r));
    return http::router({std::move(key)}, std::move(table), openai::openai_surface());
  }

  recording_writer run(http::router& r, http_request req) { return http::testing::route_once(r, req); }
  static http_request req(std::string method, std::string path, std::string body = {},
                          std::vector<std::pair<std::string, std::string>> headers = {}) {
    http_request r;
    r.method = std::move(method);
    r.path = std::move(path);
    r.body = std::move(body);
    // What every HTTP/1.1 client sends: a Host naming warden, and JSON bodies as JSON.
    bool has_host = false, has_type = false;
    for (const auto& [k, v] : headers) {
      has_host = has_host || k == "host";
      has_type = has_type || k == "content-type";
    }
    if (!has_host) headers.emplace_back("host", "127.0.0.1:8888");
    if (!has_type && r.method == "POST") headers.emplace_back("content-type", "application/json");
    r.headers = std::move(headers);
    return r;
  }
  control::health_report health() const {
    return up.st == engine::upstream_state::ready ? control::health_report{true, "ok", ""}
                                                  : control::health_report{false, "loading", up.status_message()};
  }
};

TEST_F(fixture, HealthIs503WhileLoadingThen200) {
  auto r = make("");
  auto w = run(r, req("GET", "/health"));
  EXPECT_EQ(w.status, 503);
  EXPECT_EQ(json::parse(w.body)["status"], "loading");
  EXPECT_EQ(json::parse(w.body)["message"], "loading model m1");
  up.st = engine::upstream_state::ready;
  w = run(r, req("GET", "/health"));
  EXPECT_EQ(w.status, 200);
  EXPECT_EQ(json::parse(w.body), json::parse(R"({"status":"ok"})"));
}

TEST_F(fixture, ApiKeyRequiredOnV1ButNotOnHealth) {
  auto r = make("s3cret");
  up.st = engine::upstream_state::ready;
  auto w = run(r, req("GET", "/v1/models"));
  EXPECT_EQ(w.status, 401);
  EXPECT_EQ(json::parse(w.body)["error"]["type"], "authentication_error");
  w = run(r, req("GET", "/v1/models", "", {{"authorization", "Bearer wrong"}}));
  EXPECT_EQ(w.status, 401);
  w = run(r, req("GET", "/v1/models", "", {{"authorization", "Bearer s3cret"}}));
  EXPECT_EQ(w.status, 200);
  EXPECT_EQ(json::parse(w.body)["data"][0]["id"], "m1");
  w = run(r, req("GET", "/v1/models", "", {{"x-api-key", "s3cret"}}));
  EXPECT_EQ(w.status, 200);
  w = run(r, req("GET", "/v1/models", "", {{"authorization", "bearer s3cret"}}));
  EXPECT_EQ(w.status, 200);
  w = run(r, req("GET", "/v1/models", "", {{"authorization", "Bearer  s3cret "}}));
  EXPECT_EQ(w.status, 200);
  w = run(r, req("GET", "/v1/models", "", {{"authorization", "Basic s3cret"}}));
  EXPECT_EQ(w.status, 401);
  w = run(r, req("GET", "/v1/models", "", {{"authorization", "Bearer s3cret2"}}));
  EXPECT_EQ(w.status, 401);
  w = run(r, req("GET", "/v1/models", "", {{"x-api-key", "s3cre"}}));
  EXPECT_EQ(w.status, 401);
  w = run(r, req("GET", "/health"));
  EXPECT_EQ(w.status, 200);
}

TEST_F(fixture, UnknownRouteAndWrongMethodUseTheEnvelope) {
  auto r = make("");
  auto w = run(r, req("GET", "/v1/nothing"));
  EXPECT_EQ(w.status, 404);
  EXPECT_EQ(json::parse(w.body)["error"]["type"], "not_found_error");
  w = run(r, req("GET", "/v1/chat/completions"));
  EXPECT_EQ(w.status, 405);
  EXPECT_EQ(json::parse(w.body)["error"]["type"], "invalid_request_error");
  w = run(r, req("GET", "/v1/models/other"));
  EXPECT_EQ(w.status, 404);
  EXPECT_EQ(json::parse(w.body)["error"]["code"], "model_not_found");
  w = run(r, req("GET", "/v1/models/m1"));
  EXPECT_EQ(w.status, 200);
  EXPECT_EQ(json::parse(w.body)["id"], "m1");
}

TEST_F(fixture, ValidationComesBeforeTheUpstreamState) {
  auto r = make("");
  auto w = run(r, req("POST", "/v1/chat/completions", ""));
  EXPECT_EQ(w.status, 400);
  w = run(r, req("POST", "/v1/chat/completions", R"({"messages":[{"role":"user","content":"hi"}]})"));
  EXPECT_EQ(w.status, 503);
  EXPECT_EQ(json::parse(w.body)["error"]["type"], "api_error");
  EXPECT_EQ(json::parse(w.body)["error"]["message"], "loading model m1");
  w = run(r, req("POST", "/v1/chat/completions", R"({"messages":[{"role":"user","content":"hi"}],"stream":true})"));
  EXPECT_EQ(w.status, 503);
  EXPECT_FALSE(w.streamed);
}

TEST_F(fixture, UnreachableUpstreamGives503) {
  up.st = engine::upstream_state::ready;  // claims ready, but nothing listens on port 9
  auto r = make("");
  auto w = run(r, req("POST", "/v1/chat/completions", R"({"messages":[{"role":"user","content":"hi"}],"stream":true})"));
  EXPECT_EQ(w.status, 503) << w.body;
  EXPECT_FALSE(w.streamed);
  w = run(r, req("POST", "/v1/chat/completions", R"({"messages":[{"role":"user","content":"hi"}]})"));
  EXPECT_EQ(w.status, 503) << w.body;
}

TEST_F(fixture, ControlEndpointsValidateTheirBodies) {
  auto r = make("");
  auto w = run(r, req("POST", "/api/inference/tool-confirm", R"({"approval_id":"x","decision":"maybe"})"));
  EXPECT_EQ(w.status, 400);
  EXPECT_EQ(json::parse(w.body)["error"]["param"], "decision");
  w = run(r, req("POST", "/api/inference/tool-confirm", R"({"approval_id":"x","decision":"allow"})"));
  EXPECT_EQ(w.status, 404);
  EXPECT_EQ(json::parse(w.body)["error"]["code"], "approval_not_found");
  w = run(r, req("POST", "/api/inference/tool-confirm", R"({"approval_id":"x","approval_id":"y","decision":"allow"})"));
  EXPECT_EQ(w.status, 400);
  EXPECT_EQ(json::parse(w.body)["error"]["code"], "duplicate_key");
  w = run(r, req("POST", "/api/inference/cancel", R"({})"));
  EXPECT_EQ(w.status, 400);
  w = run(r, req("POST", "/api/inference/cancel", R"({"session_id":7})"));
  EXPECT_EQ(w.status, 400);
  EXPECT_EQ(json::parse(w.body)["error"]["code"], "invalid_type");
  w = run(r, req("POST", "/api/inference/cancel", R"({"session_id":"nobody"})"));
  EXPECT_EQ(w.status, 200);
  EXPECT_EQ(json::parse(w.body), json::parse(R"({"cancelled":0})"));
}

TEST_F(fixture, EnabledToolsAreCheckedAgainstTheRegistry) {
  auto r = make("");
  auto w = run(r, req("POST", "/v1/chat/completions",
                      R"({"messages":[{"role":"user","content":"hi"}],"enable_tools":true,"enabled_tools":["web"],"stream":true})"));
  EXPECT_EQ(w.status, 400);
  EXPECT_NE(json::parse(w.body)["error"]["message"].get<std::string>().find("python, terminal, render_html"), std::string::npos);
}

}  // namespace
}  // namespace warden::api
