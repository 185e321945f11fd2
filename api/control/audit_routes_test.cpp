#include "api/control/audit_routes.h"

#include <gtest/gtest.h>

#include "api/control/routes.h"
#include "common/json_util.h"
#include "common/testing/recording_writer.h"
#include "http/router.h"
#include "http/testing/route_once.h"
#include "store/database.h"
#include "store/sha256.h"

// GET /api/audit served by http::router, as app/serve.cpp mounts it.
namespace warden::api {
namespace {

using audit_writer = testing::recording_writer;

constexpr std::int64_t k_dec_1_2026_10h = 1796119200000;  // 2026-12-01T10:00:00Z

struct audit_fixture : ::testing::Test {
  std::unique_ptr<store::database> db;
  std::unique_ptr<store::call_log> log;

  void SetUp() override {
    auto opened = store::database::open_memory();
    ASSERT_TRUE(opened.ok()) << opened.error().message;
    db = std::move(*opened);
    log = std::make_unique<store::call_log>(*db);
  }

  /// Five calls: s1, s2, s1, s2, s1, one second apart from 2026-12-01T10:00:00Z on.
  void fill() {
    for (int i = 0; i < 5; ++i) {
      store::call_record r;
      r.call_id = "call_" + std::to_string(i);
      r.session_id = i % 2 == 0 ? "s1" : "s2";
      r.tool = "terminal";
      r.arguments = R"({"command":"echo )" + std::to_string(i) + R"("})";
      r.started_unix_ms = k_dec_1_2026_10h + i * 1000;
      r.finished_unix_ms = r.started_unix_ms + 5;
      r.duration_ms = 5;
      ASSERT_TRUE(log->insert(r).ok());
    }
  }

  http::router make(std::string key = "", blocking_pool* pool = nullptr, bool with_log = true) {
    return http::router({std::move(key)}, control::audit_routes(with_log ? log.get() : nullptr, pool),
                        control::control_surface());
  }

  static audit_writer run(http::router& r, const std::string& method, const std::string& target,
                          std::vector<std::pair<std::string, std::string>> headers = {}) {
    http_request req;
    req.method = method;
    const auto q = target.find('?');
    req.path = target.substr(0, q);
    if (q != std::string::npos) req.query = target.substr(q + 1);
    headers.emplace_back("host", "127.0.0.1:8888");
    if (method == "POST") headers.emplace_back("content-type", "application/json");
    req.headers = std::move(headers);
    return http::testing::route_once(r, req);
  }

  /// The call ids of a 200 list body.
  static std::vector<std::string> call_ids(const audit_writer& w) {
    std::vector<std::string> out;
    const json body = json::parse(w.body);
    for (const auto& r : body["data"]) out.push_back(r["call_id"].get<std::string>());
    return out;
  }
};

using ids = std::vector<std::string>;

TEST_F(audit_fixture, EmptyLogIsAnEmptyList) {
  auto r = make();
  auto w = run(r, "GET", "/api/audit");
  ASSERT_EQ(w.status, 200) << w.body;
  EXPECT_EQ(json::parse(w.body), json::parse(R"({"object":"list","data":[],"has_more":false,"last_id":0})"));
}

TEST_F(audit_fixture, RecordShape) {
  store::call_record rec;
  rec.call_id = "call_x";
  rec.session_id = "s9";
  rec.surface = "openai.chat";
  rec.tool = "python";
  rec.arguments = R"j({"code":"print(1)"})j";
  rec.mode = "ask";
  rec.risk_level = "high";
  rec.risk_reasons = {"runs code"};
  rec.decision = "ask";
  rec.decided_by = "expired";
  rec.approval_id = "ap1";
  rec.reason = "nobody answered";
  rec.started_unix_ms = 1000;
  rec.finished_unix_ms = 4000;
  rec.duration_ms = 3000;
  rec.approval_latency_ms = 2999;
  rec.output_bytes = 12;
  ASSERT_TRUE(log->insert(rec).ok());
  rec.arguments = "not json";
  rec.decided_by = "rule";
  rec.rule_id = "rule_1";
  rec.allowed = true;
  rec.approval_latency_ms.reset();
  rec.exit_status = 0;
  ASSERT_TRUE(log->insert(rec).ok());
  auto r = make();
  auto w = run(r, "GET", "/api/audit");
  ASSERT_EQ(w.status, 200) << w.body;
  const json body = json::parse(w.body);
  json first = body["data"][0];
  EXPECT_EQ(first["row_hash"].get<std::string>().size(), 64u);  // its place in the hash chain
  first.erase("row_hash");
  json want = json::parse(R"j({
    "id":1,"call_id":"call_x","session_id":"s9","owner":"","surface":"openai.chat","tool":"python",
    "arguments":{"code":"print(1)"},"mode":"ask","risk":{"level":"high","reasons":["runs code"]},
    "decision":"ask","decided_by":"expired","rule_id":"","allowed":false,"approval_id":"ap1",
    "reason":"nobody answered","started_at":1000,"finished_at":4000,"duration_ms":3000,
    "approval_latency_ms":2999,"exit_status":null,"is_error":false,"output_bytes":12,
    "status":"not_run","notes":[]})j");
  want["arguments_sha256"] = store::sha256_hex(R"j({"code":"print(1)"})j");
  EXPECT_EQ(first, want);
  const json second = body["data"][1];
  EXPECT_EQ(second["id"], 2);
  EXPECT_EQ(second["arguments"], "not json");
  EXPECT_EQ(second["decided_by"], "rule");
  EXPECT_EQ(second["rule_id"], "rule_1");
  EXPECT_EQ(second["allowed"], true);
  EXPECT_TRUE(second["approval_latency_ms"].is_null());
  EXPECT_EQ(second["exit_status"], 0);
  EXPECT_EQ(body["last_id"], 2);
}

TEST_F(audit_fixture, FiltersBySessionAndTime) {
  fill();
  auto r = make();
  auto w = run(r, "GET", "/api/audit?session_id=s1");
  ASSERT_EQ(w.status, 200) << w.body;
  EXPECT_EQ(call_ids(w), (ids{"call_0", "call_2", "call_4"}));
  w = run(r, "GET", "/api/audit?since=" + std::to_string(k_dec_1_2026_10h + 2000));
  EXPECT_EQ(call_ids(w), (ids{"call_2", "call_3", "call_4"}));
  w = run(r, "GET", "/api/audit?since=2026-12-01T10:00:03Z");
  EXPECT_EQ(call_ids(w), (ids{"call_3", "call_4"}));
  w = run(r, "GET", "/api/audit?since=2026-12-01T10:00:02.001Z");
  EXPECT_EQ(call_ids(w), (ids{"call_3", "call_4"}));
  w = run(r, "GET", "/api/audit?since=2026-12-01T11:00:03%2B01:00&session_id=s2");  // +01:00, encoded
  EXPECT_EQ(call_ids(w), (ids{"call_3"}));
  w = run(r, "GET", "/api/audit?since=2026-12-01T09:00:05-01:00");
  EXPECT_EQ(call_ids(w), (ids{}));
  w = run(r, "GET", "/api/audit?session_id=&since=0");  // empty = every session
  EXPECT_EQ(call_ids(w).size(), 5u);
  w = run(r, "GET", "/api/audit?session_id=nobody");
  EXPECT_EQ(call_ids(w), (ids{}));
}

TEST_F(audit_fixture, PagesWithLimitAndAfter) {
  fill();
  auto r = make();
  auto w = run(r, "GET", "/api/audit?limit=2");
  ASSERT_EQ(w.status, 200) << w.body;
  json body = json::parse(w.body);
  EXPECT_EQ(call_ids(w), (ids{"call_0", "call_1"}));
  EXPECT_EQ(body["has_more"], true);
  EXPECT_EQ(body["last_id"], 2);
  w = run(r, "GET", "/api/audit?limit=2&after=2");
  body = json::parse(w.body);
  EXPECT_EQ(call_ids(w), (ids{"call_2", "call_3"}));
  EXPECT_EQ(body["has_more"], true);
  w = run(r, "GET", "/api/audit?limit=2&after=4");
  body = json::parse(w.body);
  EXPECT_EQ(call_ids(w), (ids{"call_4"}));
  EXPECT_EQ(body["has_more"], false);
  EXPECT_EQ(body["last_id"], 5);
  w = run(r, "GET", "/api/audit?limit=2&after=5");  // polling past the end
  body = json::parse(w.body);
  EXPECT_EQ(call_ids(w), (ids{}));
  EXPECT_EQ(body["last_id"], 5);
  w = run(r, "GET", "/api/audit?limit=3&session_id=s1");  // exactly a full page: no more
  EXPECT_EQ(json::parse(w.body)["has_more"], false);
  w = run(r, "GET", "/api/audit?limit=1000");
  EXPECT_EQ(call_ids(w).size(), 5u);
}

TEST_F(audit_fixture, BadParametersAre400NamingThem) {
  auto r = make();
  const std::pair<const char*, const char*> cases[] = {
      {"session_id=bad%20id", "session_id"},
      {"session_id=" "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "session_id"},  // 65
      {"since=yesterday", "since"},
      {"since=-5", "since"},
      {"since=2026-02-30T00:00:00Z", "since"},
      {"since=2026-12-01T10:00:00", "since"},  // no zone
      {"since=2026-12-01T25:00:00Z", "since"},
      {"since=2026-12-01T10:00:00+01:00", "since"},  // a plain + is a space
      {"since=%ZZ", "since"},
      {"limit=0", "limit"},
      {"limit=1001", "limit"},
      {"limit=ten", "limit"},
      {"limit=", "limit"},
      {"after=-1", "after"},
      {"after=1.5", "after"},
  };
  for (const auto& [query, param] : cases) {
    auto w = run(r, "GET", std::string("/api/audit?") + query);
    EXPECT_EQ(w.status, 400) << query;
    const json body = json::parse(w.body, nullptr, false);
    EXPECT_EQ(body["error"]["param"], param) << query << " " << w.body;
    EXPECT_NE(body["error"]["message"].get<std::string>().find(param), std::string::npos) << w.body;
  }
}

TEST_F(audit_fixture, ApiKeyRequiredWhenSet) {
  fill();
  auto r = make("s3cret");
  auto w = run(r, "GET", "/api/audit");
  EXPECT_EQ(w.status, 401);
  w = run(r, "GET", "/api/audit", {{"authorization", "Bearer wrong"}});
  EXPECT_EQ(w.status, 401);
  w = run(r, "GET", "/api/audit", {{"authorization", "Bearer s3cret"}});
  EXPECT_EQ(w.status, 200);
  EXPECT_EQ(call_ids(w).size(), 5u);
  w = run(r, "GET", "/api/audit", {{"x-api-key", "s3cret"}});
  EXPECT_EQ(w.status, 200);
}

TEST_F(audit_fixture, OnlyGet) {
  auto r = make();
  EXPECT_EQ(run(r, "POST", "/api/audit").status, 405);
  EXPECT_EQ(run(r, "DELETE", "/api/audit").status, 405);
  EXPECT_EQ(run(r, "HEAD", "/api/audit").status, 200);
}

TEST_F(audit_fixture, RunsOnTheBlockingPool) {
  fill();
  blocking_pool pool(1);
  auto r = make("", &pool);
  auto w = run(r, "GET", "/api/audit?session_id=s2");
  ASSERT_EQ(w.status, 200) << w.body;
  EXPECT_EQ(call_ids(w), (ids{"call_1", "call_3"}));
  pool.stop();
  w = run(r, "GET", "/api/audit");  // a stopped pool is a 500, not a crash
  EXPECT_EQ(w.status, 500);
}

TEST_F(audit_fixture, DatabaseErrorIs500) {
  ASSERT_TRUE(db->with_connection([](store::connection& c) { return c.exec("DROP TABLE call_records"); }).ok());
  auto r = make();
  auto w = run(r, "GET", "/api/audit");
  EXPECT_EQ(w.status, 500);
  const json body = json::parse(w.body);
  EXPECT_EQ(body["error"]["message"], "the audit log could not be read");
  EXPECT_EQ(w.body.find("no such table"), std::string::npos);  // details stay in the server log
}

TEST_F(audit_fixture, NoLogIs503) {
  auto r = make("", nullptr, false);
  EXPECT_EQ(run(r, "GET", "/api/audit").status, 503);
}

}  // namespace
}  // namespace warden::api
