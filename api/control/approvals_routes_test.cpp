#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <thread>

#include "agent/agent_fakes.h"
#include "agent/approvals.h"
#include "agent/rule_book.h"
#include "agent/testing/rule_fixtures.h"
#include "api/control/store_adapters.h"
#include "api/control/approvals_routes.h"
#include "common/json_util.h"
#include "common/testing/recording_writer.h"
#include "store/database.h"
#include "store/permission_rules_store.h"

// The approvals inbox and remembered-rule routes (approvals_routes.h), driven directly: each test
// calls a route's handler with a recording response_writer on an io_context.
namespace warden::api {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

std::int64_t unix_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

using testing::recording_writer;

std::unique_ptr<store::database> open_db() {
  auto db = store::database::open_memory();
  if (!db) throw std::runtime_error(db.error().message);
  return std::move(*db);
}

/// "event: <name>\ndata: <json>\n\n" → {name, json}.
std::pair<std::string, json> parse_frame(const std::string& frame) {
  const std::string ev = "event: ";
  const std::string data = "\ndata: ";
  if (frame.rfind(ev, 0) != 0) return {frame, nullptr};
  const auto d = frame.find(data);
  if (d == std::string::npos || frame.size() < 2 || frame.substr(frame.size() - 2) != "\n\n") return {frame, nullptr};
  const std::string name = frame.substr(ev.size(), d - ev.size());
  const std::string payload = frame.substr(d + data.size(), frame.size() - 2 - (d + data.size()));
  return {name, json::parse(payload)};
}

struct approvals_routes : ::testing::Test {
  asio::io_context ioc;
  agent::testing::fake_registry tools;
  agent::approval_registry approvals{std::chrono::milliseconds(60000)};
  agent::cancel_registry cancels;
  agent::tool_runtime rt{approvals, cancels, tools.reg, "/tmp/unused", std::chrono::milliseconds(10000)};
  std::unique_ptr<store::database> db = open_db();
  store::rule_store st{*db};
  control::stored_rules kept{st};
  agent::rule_book book{&kept};
  control::control_deps ctl{&rt, [] { return control::health_report{}; }, nullptr};
  std::vector<route> table = control::approval_routes(ctl);
  std::vector<std::pair<std::string, std::string>> settled;  // (approval_id, outcome) heard by a listener
  std::uint64_t listener_id = 0;

  approvals_routes() {
    rt.rules = &book;
    listener_id = approvals.subscribe([this](const agent::approval_event& ev) {
      if (ev.settled) settled.emplace_back(ev.info.approval_id, ev.outcome);
    });
  }
  ~approvals_routes() override { approvals.unsubscribe(listener_id); }

  const route& find_route(std::string_view method, std::string_view path) const {
    for (const auto& r : table) {
      if (r.method != method) continue;
      if (r.prefix ? path.substr(0, r.path.size()) == r.path : path == r.path) return r;
    }
    throw std::runtime_error("no route " + std::string(method) + " " + std::string(path));
  }

  static http_request req(std::string method, std::string path, std::string body = {}, std::string query = {}) {
    http_request r;
    r.method = std::move(method);
    r.path = std::move(path);
    r.query = std::move(query);
    r.body = std::move(body);
    r.headers.emplace_back("host", "127.0.0.1:8888");
    return r;
  }

  /// Runs one request to completion on `ioc`.
  recording_writer run(const http_request& rq) {
    recording_writer w;
    run_into(rq, w);
    return w;
  }
  void run_into(const http_request& rq, recording_writer& w) {
    const route& r = find_route(rq.method, rq.path);
    bool done = false;
    asio::co_spawn(ioc, r.handler(rq, w), [&done](std::exception_ptr p) {
      done = true;
      if (p) std::rethrow_exception(p);
    });
    ioc.restart();
    ioc.run_for(5s);
    EXPECT_TRUE(done) << rq.method << " " << rq.path;
  }
  recording_writer confirm(const std::string& body) { return run(req("POST", "/api/inference/tool-confirm", body)); }
  static std::string confirm_body(const std::string& id, const std::string& decision, const json& extra = json::object()) {
    json b = extra;
    b["approval_id"] = id;
    b["decision"] = decision;
    return b.dump();
  }

  std::unique_ptr<agent::approval_registry::ticket> open(std::string session, std::string tool = "python",
                                                         json args = json{{"code", "print(1)"}}) {
    agent::approval_info info;
    info.session_id = std::move(session);
    info.tool = std::move(tool);
    info.call_id = "call_" + std::to_string(++calls_);
    info.arguments = std::move(args);
    return approvals.open(std::move(info), ioc.get_executor());
  }
  std::string outcome_of(const std::string& id) const {
    for (const auto& [k, v] : settled) {
      if (k == id) return v;
    }
    return "";
  }

  static json error_of(const recording_writer& w) { return w.json_body()["error"]; }

 private:
  int calls_ = 0;
};

// ---- tool-confirm ------------------------------------------------------------------------

TEST_F(approvals_routes, AllowAndDenyResolveTheTicket) {
  auto t1 = open("s1");
  auto t2 = open("s1");
  auto w = confirm(confirm_body(t1->id(), "allow", json{{"session_id", "s1"}}));
  EXPECT_EQ(w.status, 200) << w.body;
  EXPECT_EQ(w.json_body(), json::parse(R"({"resolved":true})"));
  EXPECT_EQ(outcome_of(t1->id()), "allowed");
  EXPECT_FALSE(approvals.find(t1->id(), std::nullopt));

  w = confirm(confirm_body(t2->id(), "deny"));  // no session_id: the scope is not checked
  EXPECT_EQ(w.status, 200) << w.body;
  EXPECT_EQ(w.json_body(), json::parse(R"({"resolved":true})"));
  EXPECT_EQ(outcome_of(t2->id()), "denied");

  // A second decision, in either direction, is 404 and changes nothing.
  w = confirm(confirm_body(t1->id(), "deny"));
  EXPECT_EQ(w.status, 404);
  EXPECT_EQ(error_of(w)["code"], "approval_not_found");
  EXPECT_EQ(error_of(w)["param"], "approval_id");
  w = confirm(confirm_body(t2->id(), "allow_session"));
  EXPECT_EQ(w.status, 404);
  EXPECT_TRUE(book.list("", unix_now_ms()).empty());
  EXPECT_EQ(outcome_of(t1->id()), "allowed");
  EXPECT_EQ(settled.size(), 2u);

  w = confirm(confirm_body("apr_unknown", "allow"));
  EXPECT_EQ(w.status, 404);
  EXPECT_EQ(error_of(w)["code"], "approval_not_found");
}

TEST_F(approvals_routes, AnotherSessionCannotDecide) {
  auto t = open("s1");
  for (const char* d : {"allow", "deny", "allow_session", "allow_always"}) {
    auto w = confirm(confirm_body(t->id(), d, json{{"session_id", "s2"}}));
    EXPECT_EQ(w.status, 404) << d;
    EXPECT_EQ(error_of(w)["code"], "approval_not_found") << d;
  }
  EXPECT_TRUE(approvals.find(t->id(), std::nullopt));
  EXPECT_TRUE(book.list("", unix_now_ms()).empty());
  auto w = confirm(confirm_body(t->id(), "deny", json{{"session_id", "s1"}}));
  EXPECT_EQ(w.status, 200) << w.body;
  EXPECT_EQ(outcome_of(t->id()), "denied");
}

TEST_F(approvals_routes, AllowSessionRemembersTheseExactArgumentsForThisSession) {
  const json args = {{"code", "print(1)"}, {"n", 2}};
  auto t = open("s1", "python", args);
  const std::int64_t before = unix_now_ms();
  auto w = confirm(confirm_body(t->id(), "allow_session"));
  ASSERT_EQ(w.status, 200) << w.body;
  const json body = w.json_body();
  EXPECT_EQ(body["resolved"], true);
  const json rule = body["rule"];
  ASSERT_TRUE(rule.is_object()) << w.body;
  EXPECT_EQ(rule["scope"], "session");
  EXPECT_EQ(rule["session_id"], "s1");
  EXPECT_EQ(rule["tool"], "python");
  EXPECT_EQ(rule["arguments"], args);
  EXPECT_TRUE(rule["arguments"].is_object());
  EXPECT_FALSE(rule.contains("command_prefix"));
  EXPECT_FALSE(rule.contains("path_prefix"));
  EXPECT_TRUE(rule["expires_at_ms"].is_null());
  EXPECT_GE(rule["created_at_ms"].get<std::int64_t>(), before);
  const std::string id = rule["id"].get<std::string>();
  EXPECT_EQ(id.rfind("rule_", 0), 0u) << id;
  EXPECT_EQ(outcome_of(t->id()), "allowed");

  const auto now = unix_now_ms();
  EXPECT_EQ(book.match("s1", "python", args, now, agent::testing::low_risk()), std::optional<std::string>(id));
  EXPECT_EQ(book.match("s2", "python", args, now, agent::testing::low_risk()), std::nullopt);
  EXPECT_EQ(book.match("s1", "python", json{{"code", "print(2)"}, {"n", 2}}, now, agent::testing::low_risk()), std::nullopt);
  auto rows = st.list();
  ASSERT_TRUE(rows.ok());
  EXPECT_TRUE(rows->empty());  // session rules are not stored
}

TEST_F(approvals_routes, AllowAlwaysStoresARuleForEverySession) {
  auto t = open("s1", "terminal", json{{"command", "ls -la -s"}});
  const json extra = {{"session_id", "s1"},
                      {"rule", {{"tool", "terminal"}, {"command_prefix", " ls -la "}, {"expires_in_s", 3600}}}};
  auto w = confirm(confirm_body(t->id(), "allow_always", extra));
  ASSERT_EQ(w.status, 200) << w.body;
  const json rule = w.json_body()["rule"];
  EXPECT_EQ(rule["scope"], "always");
  EXPECT_EQ(rule["session_id"], "");
  EXPECT_EQ(rule["tool"], "terminal");
  EXPECT_EQ(rule["command_prefix"], "ls -la");
  EXPECT_FALSE(rule.contains("arguments"));
  ASSERT_TRUE(rule["expires_at_ms"].is_number_integer()) << w.body;
  EXPECT_EQ(rule["expires_at_ms"].get<std::int64_t>(), rule["created_at_ms"].get<std::int64_t>() + 3'600'000);
  const std::string id = rule["id"].get<std::string>();
  EXPECT_EQ(outcome_of(t->id()), "allowed");

  const auto now = unix_now_ms();
  EXPECT_EQ(book.match("s2", "terminal", json{{"command", "ls -la"}}, now, agent::testing::low_risk()), std::optional<std::string>(id));
  EXPECT_EQ(book.match("s2", "terminal", json{{"command", "ls -la; rm -rf ~"}}, now, agent::testing::low_risk()), std::nullopt);
  auto rows = st.list();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].id, id);
  EXPECT_EQ((*rows)[0].scope, "always");
  agent::rule_book restarted(&kept);
  ASSERT_TRUE(restarted.load().ok());
  EXPECT_EQ(restarted.match("s9", "terminal", json{{"command", "ls -la"}}, now, agent::testing::low_risk()), std::optional<std::string>(id));
}

TEST_F(approvals_routes, ARuleThatDoesNotCoverTheCallIs400AndTheCallStaysPending) {
  auto t = open("s1", "terminal", json{{"command", "rm -rf /tmp/x"}});
  const json extra = {{"rule", {{"tool", "terminal"}, {"command_prefix", "ls -la"}}}};
  auto w = confirm(confirm_body(t->id(), "allow_always", extra));
  EXPECT_EQ(w.status, 400) << w.body;
  EXPECT_EQ(error_of(w)["param"].get<std::string>().rfind("rule", 0), 0u) << w.body;
  EXPECT_EQ(error_of(w)["param"], "rule.command_prefix");
  EXPECT_TRUE(approvals.find(t->id(), std::nullopt));
  EXPECT_TRUE(book.list("", unix_now_ms()).empty());
  EXPECT_TRUE(settled.empty());

  const json other_tool = {{"rule", {{"tool", "python"}}}};
  w = confirm(confirm_body(t->id(), "allow_session", other_tool));
  EXPECT_EQ(w.status, 400) << w.body;
  EXPECT_EQ(error_of(w)["param"], "rule.tool");
  const json not_string = {{"rule", {{"tool", "terminal"}, {"command_prefix", 3}}}};
  w = confirm(confirm_body(t->id(), "allow_session", not_string));
  EXPECT_EQ(w.status, 400) << w.body;
  EXPECT_EQ(error_of(w)["param"], "rule.command_prefix");
  EXPECT_EQ(error_of(w)["code"], "invalid_type");
  const json bad_expiry = {{"rule", {{"tool", "terminal"}, {"expires_in_s", "soon"}}}};
  w = confirm(confirm_body(t->id(), "allow_session", bad_expiry));
  EXPECT_EQ(w.status, 400) << w.body;
  EXPECT_EQ(error_of(w)["param"], "rule.expires_in_s");
  const json not_object = {{"rule", "git"}};
  w = confirm(confirm_body(t->id(), "allow_session", not_object));
  EXPECT_EQ(w.status, 400) << w.body;
  EXPECT_EQ(error_of(w)["param"], "rule");
  EXPECT_TRUE(approvals.find(t->id(), std::nullopt));
  EXPECT_TRUE(book.list("", unix_now_ms()).empty());

  // It can still be answered.
  w = confirm(confirm_body(t->id(), "deny"));
  EXPECT_EQ(w.status, 200) << w.body;
  EXPECT_EQ(outcome_of(t->id()), "denied");
}

TEST_F(approvals_routes, APrefixForAProgramThatRunsProgramsIs400AndTheCallStaysPending) {
  auto t = open("s1", "terminal", json{{"command", "python3 -c 'print(1)'"}});
  for (const char* d : {"allow_session", "allow_always"}) {
    auto w = confirm(confirm_body(t->id(), d, json{{"rule", {{"command_prefix", "python3"}}}}));
    EXPECT_EQ(w.status, 400) << w.body;
    EXPECT_EQ(error_of(w)["param"], "rule.command_prefix");
    EXPECT_EQ(error_of(w)["code"], "prefix_runs_programs");
    EXPECT_NE(error_of(w)["message"].get<std::string>().find("python3"), std::string::npos) << w.body;
  }
  EXPECT_TRUE(approvals.find(t->id(), std::nullopt));
  EXPECT_TRUE(book.list("", unix_now_ms()).empty());
  EXPECT_TRUE(settled.empty());
  // exactly these arguments may still be remembered
  auto w = confirm(confirm_body(t->id(), "allow_session"));
  ASSERT_EQ(w.status, 200) << w.body;
  EXPECT_EQ(w.json_body()["rule"]["arguments"], (json{{"command", "python3 -c 'print(1)'"}}));
}

TEST_F(approvals_routes, AllowSessionWithoutASessionIsAllowedOnceAndRemembersNothing) {
  // a request that named no session_id: its calls are asked in the shared session
  auto t = open(std::string(agent::k_shared_session), "python", json{{"code", "print(1)"}});
  auto w = confirm(confirm_body(t->id(), "allow_session"));
  ASSERT_EQ(w.status, 200) << w.body;
  const json body = w.json_body();
  EXPECT_EQ(body["resolved"], true);
  EXPECT_TRUE(body["rule"].is_null()) << w.body;
  EXPECT_NE(body["note"].get<std::string>().find("no rule"), std::string::npos) << w.body;
  EXPECT_EQ(outcome_of(t->id()), "allowed");
  EXPECT_TRUE(book.list("", unix_now_ms()).empty());
  // also when a rule body is sent, and allow_always still remembers (it is not a session rule)
  auto t2 = open(std::string(agent::k_shared_session), "terminal", json{{"command", "ls -la"}});
  w = confirm(confirm_body(t2->id(), "allow_session", json{{"rule", {{"command_prefix", "ls"}}}}));
  ASSERT_EQ(w.status, 200) << w.body;
  EXPECT_TRUE(w.json_body()["rule"].is_null()) << w.body;
  EXPECT_TRUE(book.list("", unix_now_ms()).empty());
  auto t3 = open(std::string(agent::k_shared_session), "python", json{{"code", "print(3)"}});
  w = confirm(confirm_body(t3->id(), "allow_always"));
  ASSERT_EQ(w.status, 200) << w.body;
  EXPECT_EQ(w.json_body()["rule"]["scope"], "always");
}

TEST_F(approvals_routes, ARuleWithAllowOrDenyIs400) {
  auto t = open("s1");
  const json extra = {{"rule", {{"tool", "python"}}}};
  for (const char* d : {"allow", "deny"}) {
    auto w = confirm(confirm_body(t->id(), d, extra));
    EXPECT_EQ(w.status, 400) << d << " " << w.body;
    EXPECT_EQ(error_of(w)["param"], "rule") << d;
  }
  EXPECT_TRUE(approvals.find(t->id(), std::nullopt));
  EXPECT_TRUE(settled.empty());
  // A null rule is the same as none.
  const json null_rule = {{"rule", nullptr}};
  auto w = confirm(confirm_body(t->id(), "allow", null_rule));
  EXPECT_EQ(w.status, 200) << w.body;
}

TEST_F(approvals_routes, MalformedBodiesAre400) {
  auto t = open("s1");
  auto w = confirm(confirm_body(t->id(), "maybe"));
  EXPECT_EQ(w.status, 400);
  EXPECT_EQ(error_of(w)["param"], "decision");
  w = confirm(R"({"approval_id":")" + t->id() + R"("})");
  EXPECT_EQ(w.status, 400);
  EXPECT_EQ(error_of(w)["param"], "decision");
  w = confirm(R"({"decision":"allow"})");
  EXPECT_EQ(w.status, 400);
  EXPECT_EQ(error_of(w)["param"], "approval_id");
  w = confirm(R"({"approval_id":7,"decision":"allow"})");
  EXPECT_EQ(w.status, 400);
  EXPECT_EQ(error_of(w)["code"], "invalid_type");
  w = confirm("not json");
  EXPECT_EQ(w.status, 400);
  w = confirm("[]");
  EXPECT_EQ(w.status, 400);
  EXPECT_TRUE(approvals.find(t->id(), std::nullopt));
  EXPECT_TRUE(settled.empty());
}

TEST_F(approvals_routes, WithoutARuleBookRememberingIs503AndTheCallStaysPending) {
  rt.rules = nullptr;
  auto t = open("s1");
  auto w = confirm(confirm_body(t->id(), "allow_session"));
  EXPECT_EQ(w.status, 503) << w.body;
  EXPECT_TRUE(approvals.find(t->id(), std::nullopt));
  w = run(req("GET", "/api/permissions/rules"));
  EXPECT_EQ(w.status, 200);
  EXPECT_EQ(w.json_body(), json::parse(R"({"object":"list","data":[]})"));
  w = confirm(confirm_body(t->id(), "allow"));
  EXPECT_EQ(w.status, 200) << w.body;
}

TEST_F(approvals_routes, ACappedRuleBookRefusesAndTheCallStaysPending) {
  for (std::size_t i = 0; i < agent::k_max_rules; ++i) {
    agent::permission_rule r;
    r.id = "rule_" + std::to_string(i);
    r.session_id = "sx" + std::to_string(i / agent::k_max_session_rules);  // each session at its own cap
    r.tool = "python";
    ASSERT_TRUE(book.add(std::move(r)).ok());
  }
  auto t = open("s1");
  auto w = confirm(confirm_body(t->id(), "allow_session"));
  EXPECT_EQ(w.status, 400) << w.body;
  EXPECT_EQ(error_of(w)["code"], "too_many_rules");
  EXPECT_TRUE(approvals.find(t->id(), std::nullopt));
  EXPECT_TRUE(settled.empty());
}

TEST_F(approvals_routes, WithoutToolsEveryRouteIs503) {
  control::control_deps none{nullptr, [] { return control::health_report{}; }, nullptr};
  table = control::approval_routes(none);
  for (const auto& [m, p] : std::vector<std::pair<std::string, std::string>>{
           {"POST", "/api/inference/tool-confirm"},
           {"GET", "/api/inference/approvals"},
           {"GET", "/api/inference/approvals/stream"},
           {"GET", "/api/permissions/rules"},
           {"DELETE", "/api/permissions/rules/rule_x"}}) {
    auto w = run(req(m, p, m == "POST" ? confirm_body("x", "allow") : ""));
    EXPECT_EQ(w.status, 503) << m << " " << p;
    EXPECT_FALSE(w.streamed);
  }
}

// ---- the inbox ------------------------------------------------------------------------------

TEST_F(approvals_routes, ListsPendingApprovalsOldestFirstAndBySession) {
  agent::approval_info info;
  info.session_id = "s1";
  info.tool = "terminal";
  info.call_id = "call_a";
  info.arguments = json{{"command", "rm -rf /tmp/x"}};
  agent::risk_note risk;
  risk.level = "high";
  risk.reasons = {"deletes files"};
  info.risk = risk;
  auto t1 = approvals.open(info, ioc.get_executor());
  // The inbox orders by creation time in ms, then by (random) id: make t2 strictly younger.
  std::this_thread::sleep_for(3ms);
  auto t2 = open("s2");
  auto t3 = open("s1");
  ASSERT_TRUE(approvals.resolve(t3->id(), agent::approval_decision::deny, std::nullopt));  // decided: not listed

  auto w = run(req("GET", "/api/inference/approvals"));
  ASSERT_EQ(w.status, 200) << w.body;
  EXPECT_EQ(w.content_type, "application/json");
  json body = w.json_body();
  EXPECT_EQ(body["object"], "list");
  ASSERT_EQ(body["data"].size(), 2u) << w.body;
  const json a = body["data"][0];
  const auto asked = approvals.find(t1->id(), std::nullopt);
  ASSERT_TRUE(asked);
  json want = {{"approval_id", t1->id()},
               {"session_id", "s1"},
               {"owner", ""},
               {"tool", "terminal"},
               {"tool_call_id", "call_a"},
               {"arguments", {{"command", "rm -rf /tmp/x"}}},
               {"risk", {{"level", "high"}, {"reasons", json::array({"deletes files"})}}},
               {"created_at_ms", asked->created_unix_ms},
               {"expires_at_ms", asked->created_unix_ms + 60000},
               {"kind", "tool_call"}};
  EXPECT_EQ(a, want);
  EXPECT_EQ(body["data"][1]["approval_id"], t2->id());
  EXPECT_TRUE(body["data"][1]["risk"].is_null());
  EXPECT_EQ(body["data"][1]["session_id"], "s2");

  w = run(req("GET", "/api/inference/approvals", "", "session_id=s1"));
  ASSERT_EQ(w.status, 200) << w.body;
  body = w.json_body();
  ASSERT_EQ(body["data"].size(), 1u);
  EXPECT_EQ(body["data"][0]["approval_id"], t1->id());
  w = run(req("GET", "/api/inference/approvals", "", "session_id=nobody"));
  EXPECT_EQ(w.json_body()["data"], json::array());
  w = run(req("GET", "/api/inference/approvals", "", "session_id="));  // empty: every session
  EXPECT_EQ(w.json_body()["data"].size(), 2u);

  for (const char* q : {"session_id=a%20b", "session_id=%G1", "session_id=a/b"}) {
    w = run(req("GET", "/api/inference/approvals", "", q));
    EXPECT_EQ(w.status, 400) << q;
    EXPECT_EQ(error_of(w)["param"], "session_id") << q;
  }
}

// ---- rules ----------------------------------------------------------------------------------

TEST_F(approvals_routes, ListsAndDeletesRules) {
  auto t1 = open("s1");
  auto t2 = open("s2", "terminal", json{{"command", "ls"}});
  auto w = confirm(confirm_body(t1->id(), "allow_session"));
  ASSERT_EQ(w.status, 200) << w.body;
  const json session_rule = w.json_body()["rule"];
  w = confirm(confirm_body(t2->id(), "allow_always"));
  ASSERT_EQ(w.status, 200) << w.body;
  const json always_rule = w.json_body()["rule"];

  w = run(req("GET", "/api/permissions/rules"));
  ASSERT_EQ(w.status, 200) << w.body;
  json body = w.json_body();
  EXPECT_EQ(body["object"], "list");
  ASSERT_EQ(body["data"].size(), 2u);
  EXPECT_EQ(body["data"][0], session_rule);
  EXPECT_EQ(body["data"][1], always_rule);
  w = run(req("GET", "/api/permissions/rules", "", "session_id=s2"));
  body = w.json_body();
  ASSERT_EQ(body["data"].size(), 1u);
  EXPECT_EQ(body["data"][0], always_rule);
  w = run(req("GET", "/api/permissions/rules", "", "session_id=bad!"));
  EXPECT_EQ(w.status, 400);
  EXPECT_EQ(error_of(w)["param"], "session_id");

  const std::string sid = session_rule["id"].get<std::string>();
  const std::string aid = always_rule["id"].get<std::string>();
  for (const std::string& id : {sid, aid}) {
    w = run(req("DELETE", "/api/permissions/rules/" + id));
    EXPECT_EQ(w.status, 200) << w.body;
    EXPECT_EQ(w.json_body(), (json{{"deleted", true}, {"id", id}}));
    w = run(req("DELETE", "/api/permissions/rules/" + id));
    EXPECT_EQ(w.status, 404) << w.body;
    EXPECT_EQ(error_of(w)["code"], "rule_not_found");
  }
  EXPECT_TRUE(book.list("", unix_now_ms()).empty());
  auto rows = st.list();
  ASSERT_TRUE(rows.ok());
  EXPECT_TRUE(rows->empty());
  w = run(req("GET", "/api/permissions/rules"));
  EXPECT_EQ(w.json_body()["data"], json::array());

  for (const char* p : {"/api/permissions/rules/", "/api/permissions/rules/a/b", "/api/permissions/rules/nope"}) {
    w = run(req("DELETE", p));
    EXPECT_EQ(w.status, 404) << p;
  }
}

// ---- the stream -----------------------------------------------------------------------------

struct stream_run {
  recording_writer w;
  bool done = false;
};

TEST_F(approvals_routes, StreamSendsPendingThenLiveQuestionsAndTheirOutcomes) {
  auto first = open("s1");
  std::unique_ptr<agent::approval_registry::ticket> live, other;
  std::string live_id, other_id;
  auto strand = asio::make_strand(ioc);
  stream_run s;
  s.w.stop_when = [](const std::string& f) { return f.rfind("event: approval_settled", 0) == 0; };
  s.w.on_frame = [&](const std::string&) {
    if (s.w.frames.size() != 1) return;
    // The stream has subscribed and sent what was pending: open and answer questions from
    // another handler, as the tool loop and a person would.
    asio::post(ioc, [&] {
      other = open("s2");  // another session's: not on this stream
      other_id = other->id();
      live = open("s1", "terminal", json{{"command", "ls"}});
      live_id = live->id();
      EXPECT_TRUE(approvals.resolve(live_id, agent::approval_decision::allow, std::nullopt));
    });
  };
  const auto rq = req("GET", "/api/inference/approvals/stream", "", "session_id=s1");
  const route& r = find_route("GET", rq.path);
  asio::co_spawn(strand, r.handler(rq, s.w), [&s](std::exception_ptr p) {
    s.done = true;
    if (p) std::rethrow_exception(p);
  });
  ioc.run_for(5s);
  ASSERT_TRUE(s.done);
  EXPECT_TRUE(s.w.streamed);
  ASSERT_EQ(s.w.frames.size(), 3u) << ::testing::PrintToString(s.w.frames);

  auto [n0, d0] = parse_frame(s.w.frames[0]);
  EXPECT_EQ(n0, "approval_requested");
  EXPECT_EQ(d0["type"], "approval_requested");
  EXPECT_EQ(d0["approval"]["approval_id"], first->id());
  EXPECT_EQ(d0["approval"]["session_id"], "s1");

  auto [n1, d1] = parse_frame(s.w.frames[1]);
  EXPECT_EQ(n1, "approval_requested");
  EXPECT_EQ(d1["approval"]["approval_id"], live_id);
  EXPECT_EQ(d1["approval"]["tool"], "terminal");
  EXPECT_EQ(d1["approval"]["arguments"], json::parse(R"({"command":"ls"})"));
  EXPECT_TRUE(d1["approval"].contains("tool_call_id"));
  EXPECT_TRUE(d1["approval"].contains("expires_at_ms"));

  auto [n2, d2] = parse_frame(s.w.frames[2]);
  EXPECT_EQ(n2, "approval_settled");
  EXPECT_EQ(d2, (json{{"type", "approval_settled"}, {"approval_id", live_id}, {"session_id", "s1"}, {"outcome", "allowed"}}));
  for (const auto& f : s.w.frames) EXPECT_EQ(f.find(other_id), std::string::npos) << f;
}

TEST_F(approvals_routes, StreamReportsWithdrawnAndDeniedQuestions) {
  auto strand = asio::make_strand(ioc);
  stream_run s;
  std::string withdrawn_id, denied_id;
  s.w.stop_when = [](const std::string& f) { return f.find("\"denied\"") != std::string::npos; };
  s.w.on_frame = [&](const std::string&) {
    if (s.w.frames.size() != 1) return;
    asio::post(ioc, [&] {
      auto gone = open("s1");
      withdrawn_id = gone->id();
      gone.reset();  // its stream went away undecided
      auto no = open("s2");
      denied_id = no->id();
      EXPECT_TRUE(approvals.resolve(denied_id, agent::approval_decision::deny, std::nullopt));
    });
  };
  auto pending = open("s3");
  const auto rq = req("GET", "/api/inference/approvals/stream");
  asio::co_spawn(strand, find_route("GET", rq.path).handler(rq, s.w), [&s](std::exception_ptr p) {
    s.done = true;
    if (p) std::rethrow_exception(p);
  });
  ioc.run_for(5s);
  ASSERT_TRUE(s.done);
  ASSERT_EQ(s.w.frames.size(), 5u) << ::testing::PrintToString(s.w.frames);
  EXPECT_EQ(parse_frame(s.w.frames[0]).second["approval"]["approval_id"], pending->id());
  EXPECT_EQ(parse_frame(s.w.frames[1]).second["approval"]["approval_id"], withdrawn_id);
  EXPECT_EQ(parse_frame(s.w.frames[2]).second["outcome"], "withdrawn");
  EXPECT_EQ(parse_frame(s.w.frames[2]).second["approval_id"], withdrawn_id);
  EXPECT_EQ(parse_frame(s.w.frames[3]).second["approval"]["approval_id"], denied_id);
  EXPECT_EQ(parse_frame(s.w.frames[4]).second["outcome"], "denied");
}

TEST_F(approvals_routes, StreamSendsPingsAndTheListenerGoesWhenItEnds) {
  rt.ping_interval = std::chrono::milliseconds(10);
  auto strand = asio::make_strand(ioc);
  stream_run s;
  s.w.stop_when = [](const std::string& f) { return f == ": ping\n\n"; };
  const auto rq = req("GET", "/api/inference/approvals/stream");
  asio::co_spawn(strand, find_route("GET", rq.path).handler(rq, s.w), [&s](std::exception_ptr p) {
    s.done = true;
    if (p) std::rethrow_exception(p);
  });
  ioc.run_for(5s);
  ASSERT_TRUE(s.done);
  EXPECT_EQ(s.w.frames, std::vector<std::string>{": ping\n\n"});

  // The stream has ended: the registry no longer calls its listener, so opening and settling
  // questions posts nothing to the finished stream's executor and the stream sees nothing.
  // (poll() stops the io_context when it runs out of work: restart before each.)
  auto t = open("s1");
  ioc.restart();
  EXPECT_EQ(ioc.poll(), 0u);  // a live listener would have posted its wake-up
  auto t2 = open("s1");
  t2.reset();                 // withdrawn: listeners only, nothing else posts
  ioc.restart();
  EXPECT_EQ(ioc.poll(), 0u);
  EXPECT_TRUE(approvals.resolve(t->id(), agent::approval_decision::allow, std::nullopt));
  ioc.restart();
  EXPECT_EQ(ioc.poll(), 1u);  // only the ticket's own wake-up
  EXPECT_EQ(s.w.frames.size(), 1u);
  EXPECT_EQ(outcome_of(t->id()), "allowed");
  auto t3 = open("s1");
  EXPECT_EQ(approvals.list().size(), 1u);
  EXPECT_EQ(approvals.list()[0].approval_id, t3->id());
}

TEST_F(approvals_routes, StreamWithABadSessionIs400) {
  auto w = run(req("GET", "/api/inference/approvals/stream", "", "session_id=no%20spaces"));
  EXPECT_EQ(w.status, 400);
  EXPECT_FALSE(w.streamed);
  EXPECT_EQ(error_of(w)["param"], "session_id");
}

// A question opened while the stream is suspended in a write (as a socket write suspends) must
// still be sent promptly, not only after the next ping interval.
// DISABLED: known bug in approvals_stream(). The listener's wake-up (timer.cancel() posted to the
// stream's strand) runs while the coroutine is suspended inside flush()'s write_stream, when no
// wait is pending, so it is a no-op; flush() took the queue before that write, so the new frame
// stays queued and the coroutine then sleeps a full ping interval (15 s by default) before sending
// it. Fix: make flush() take() again until the queue is empty (or check for queued frames before
// arming the timer). Enable this test with the fix.
TEST_F(approvals_routes, StreamDoesNotLoseAWakeUpDuringAWrite) {
  rt.ping_interval = std::chrono::milliseconds(300);
  auto pending = open("s1");
  std::unique_ptr<agent::approval_registry::ticket> live;
  auto strand = asio::make_strand(ioc);
  stream_run s;
  s.w.yield_in_write = true;
  s.w.stop_when = [&s](const std::string&) { return s.w.frames.size() >= 2; };
  s.w.on_frame = [&](const std::string&) {
    if (s.w.frames.size() == 1) live = open("s1");  // arrives while the first frame is being written
  };
  const auto rq = req("GET", "/api/inference/approvals/stream");
  asio::co_spawn(strand, find_route("GET", rq.path).handler(rq, s.w), [&s](std::exception_ptr p) {
    s.done = true;
    if (p) std::rethrow_exception(p);
  });
  ioc.run_for(5s);
  ASSERT_TRUE(s.done);
  ASSERT_EQ(s.w.frames.size(), 2u);
  ASSERT_TRUE(live);
  EXPECT_EQ(parse_frame(s.w.frames[1]).second["approval"]["approval_id"], live->id())
      << "the new question waited for the ping: " << ::testing::PrintToString(s.w.frames);
}

}  // namespace
}  // namespace warden::api
