// Owners on the control surface (issue 22, part 3): with named keys (alice and bob, users; ops,
// admin) every route that names or lists approvals, rules, cancels or audit rows acts only on the
// caller's own, and answers another key's id exactly like an unknown one (404). Driven through
// http::router, as app/serve.cpp mounts the routes.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include <algorithm>

#include "agent/agent_fakes.h"
#include "agent/approvals.h"
#include "agent/rule_book.h"
#include "api/control/audit_routes.h"
#include "api/control/routes.h"
#include "api/control/store_adapters.h"
#include "common/json_util.h"
#include "common/testing/recording_writer.h"
#include "http/router.h"
#include "http/testing/route_once.h"
#include "store/call_records.h"
#include "store/database.h"
#include "store/permission_rules_store.h"

namespace warden::api {
namespace {

using testing::recording_writer;

const std::string k_alice = "alice-key-0123456789abcdef";
const std::string k_bob = "bob-key-0123456789abcdef00";
const std::string k_ops = "ops-key-0123456789abcdef000";

std::unique_ptr<store::database> open_db() {
  auto db = store::database::open_memory();
  if (!db) throw std::runtime_error(db.error().message);
  return std::move(*db);
}

struct owners : ::testing::Test {
  boost::asio::io_context ioc;  // the tickets' waiter executor (never run: nobody waits here)
  agent::testing::fake_registry tools;
  agent::approval_registry approvals{std::chrono::milliseconds(60000)};
  agent::cancel_registry cancels;
  agent::tool_runtime rt{approvals, cancels, tools.reg, "/tmp/unused", std::chrono::milliseconds(10000)};
  std::unique_ptr<store::database> db = open_db();
  store::rule_store rule_rows{*db};
  control::stored_rules kept{rule_rows};
  agent::rule_book book{&kept};
  store::call_log log{*db};
  control::control_deps ctl{&rt, [] { return control::health_report{}; }, nullptr};
  http::router router = make_router();

  http::router make_router() {
    rt.rules = &book;
    std::vector<route> table = control::routes(ctl);
    for (auto& r : control::audit_routes(&log, nullptr)) table.push_back(std::move(r));
    std::vector<http::named_key> keys = {{"alice", key_role::user, k_alice},
                                         {"bob", key_role::user, k_bob},
                                         {"ops", key_role::admin, k_ops}};
    return http::router({http::key_ring(std::move(keys))}, std::move(table), control::control_surface());
  }

  recording_writer call(const std::string& key, std::string method, std::string target, std::string body = {}) {
    http_request r;
    r.method = std::move(method);
    const auto q = target.find('?');
    r.path = target.substr(0, q);
    if (q != std::string::npos) r.query = target.substr(q + 1);
    r.body = std::move(body);
    r.headers.emplace_back("host", "127.0.0.1:8888");
    if (r.method == "POST") r.headers.emplace_back("content-type", "application/json");
    if (!key.empty()) r.headers.emplace_back("authorization", "Bearer " + key);
    return http::testing::route_once(router, r);
  }
  recording_writer confirm(const std::string& key, const std::string& id, const std::string& decision) {
    return call(key, "POST", "/api/inference/tool-confirm",
                json{{"approval_id", id}, {"decision", decision}}.dump());
  }

  std::unique_ptr<agent::approval_registry::ticket> ask(const std::string& owner, const std::string& session) {
    agent::approval_info info;
    info.session_id = session;
    info.owner = owner;
    info.tool = "python";
    info.call_id = "call_" + owner;
    info.arguments = json{{"code", "print('" + owner + "')"}};
    return approvals.open(std::move(info), ioc.get_executor());
  }

  static std::vector<std::string> field_of(const recording_writer& w, const char* key) {
    EXPECT_EQ(w.status, 200) << w.body;
    std::vector<std::string> out;
    const json body = json::parse(w.body);
    for (const auto& e : body["data"]) out.push_back(e[key].get<std::string>());
    return out;
  }
};

using strings = std::vector<std::string>;

TEST_F(owners, TheInboxListsOnlyTheCallersOwnQuestionsAndTheAdminSeesAll) {
  auto a = ask("alice", "s1");
  auto b = ask("bob", "s1");  // the same session id: a session is the pair (owner, session_id)
  auto w = call(k_alice, "GET", "/api/inference/approvals");
  ASSERT_EQ(w.status, 200) << w.body;
  EXPECT_EQ(field_of(w, "approval_id"), strings{a->id()});
  EXPECT_EQ(field_of(w, "owner"), strings{"alice"});
  EXPECT_EQ(field_of(call(k_bob, "GET", "/api/inference/approvals?session_id=s1"), "approval_id"), strings{b->id()});
  auto all = field_of(call(k_ops, "GET", "/api/inference/approvals"), "owner");
  std::sort(all.begin(), all.end());  // oldest first; these two were opened in the same millisecond
  EXPECT_EQ(all, (strings{"alice", "bob"}));
  EXPECT_EQ(call("", "GET", "/api/inference/approvals").status, 401);
  EXPECT_EQ(call("not-a-key-of-the-file", "GET", "/api/inference/approvals").status, 401);
}

TEST_F(owners, AnotherKeysApprovalIdIsAnsweredLikeAnUnknownOne) {
  auto a = ask("alice", "s1");
  for (const char* d : {"allow", "deny", "allow_session", "allow_always"}) {
    auto w = confirm(k_bob, a->id(), d);
    EXPECT_EQ(w.status, 404) << d << ": " << w.body;
    EXPECT_EQ(json::parse(w.body)["error"]["code"], "approval_not_found");
    EXPECT_EQ(w.body, confirm(k_bob, "no-such-id-at-all", d).body) << d << ": the same answer as an unknown id";
  }
  EXPECT_TRUE(book.list("", 0).empty()) << "bob's allow_session/allow_always made no rule";
  EXPECT_TRUE(approvals.find(a->id(), std::nullopt)) << "still pending";
  EXPECT_EQ(confirm(k_alice, a->id(), "allow").status, 200);
  EXPECT_FALSE(approvals.find(a->id(), std::nullopt));
}

TEST_F(owners, TheAdminAnswersAnyonesCallAndTheRuleIsTheCallOwners) {
  auto a = ask("alice", "s1");
  auto w = confirm(k_ops, a->id(), "allow_session");
  ASSERT_EQ(w.status, 200) << w.body;
  const json rule = json::parse(w.body)["rule"];
  EXPECT_EQ(rule["owner"], "alice");
  EXPECT_EQ(rule["session_id"], "s1");
  const json args = json{{"code", "print('alice')"}};
  EXPECT_TRUE(book.match("s1", "python", args, 0, {}, "alice")) << "covers alice's calls in her session s1";
  EXPECT_FALSE(book.match("s1", "python", args, 0, {}, "bob")) << "never bob's, in his session s1";
  EXPECT_FALSE(book.match("s1", "python", args, 0, {}, "ops"));
  EXPECT_FALSE(book.match("s1", "python", args, 0, {}, ""));
}

TEST_F(owners, RulesAreListedAndRevokedByTheirOwnerOrTheAdminOnly) {
  auto a = ask("alice", "s1");
  auto b = ask("bob", "s2");
  ASSERT_EQ(confirm(k_alice, a->id(), "allow_always").status, 200);
  ASSERT_EQ(confirm(k_bob, b->id(), "allow_session").status, 200);
  const auto alice_rules = field_of(call(k_alice, "GET", "/api/permissions/rules"), "id");
  const auto bob_rules = field_of(call(k_bob, "GET", "/api/permissions/rules"), "id");
  ASSERT_EQ(alice_rules.size(), 1u);
  ASSERT_EQ(bob_rules.size(), 1u);
  EXPECT_EQ(field_of(call(k_ops, "GET", "/api/permissions/rules"), "owner"), (strings{"alice", "bob"}));
  // an always-rule of alice's covers no call of bob's
  EXPECT_FALSE(book.match("s2", "python", json{{"code", "print('alice')"}}, 0, {}, "bob"));
  EXPECT_TRUE(book.match("s2", "python", json{{"code", "print('alice')"}}, 0, {}, "alice"));
  auto w = call(k_bob, "DELETE", "/api/permissions/rules/" + alice_rules[0]);
  EXPECT_EQ(w.status, 404);
  EXPECT_EQ(json::parse(w.body)["error"]["code"], "rule_not_found");
  EXPECT_EQ(field_of(call(k_alice, "GET", "/api/permissions/rules"), "id"), alice_rules) << "still there";
  EXPECT_EQ(call(k_ops, "DELETE", "/api/permissions/rules/" + alice_rules[0]).status, 200);
  EXPECT_EQ(call(k_bob, "DELETE", "/api/permissions/rules/" + bob_rules[0]).status, 200);
  EXPECT_TRUE(book.list("", 0).empty());
  auto stored = rule_rows.list();
  ASSERT_TRUE(stored);
  EXPECT_TRUE(stored->empty());
}

TEST_F(owners, CancelStopsOnlyTheCallersOwnLoops) {
  auto ta = cancel_token::make(), tb = cancel_token::make();
  auto ra = cancels.add(agent::cancel_key::session_id, "s1", ta, "alice");
  auto rb = cancels.add(agent::cancel_key::session_id, "s1", tb, "bob");
  auto rc = cancels.add(agent::cancel_key::cancel_id, "run-1", ta, "alice");
  auto w = call(k_bob, "POST", "/api/inference/cancel", R"({"cancel_id":"run-1"})");
  ASSERT_EQ(w.status, 200) << w.body;
  EXPECT_EQ(json::parse(w.body)["cancelled"], 0);  // alice's run: the same as an unknown id
  EXPECT_FALSE(ta->cancelled());
  w = call(k_bob, "POST", "/api/inference/cancel", R"({"session_id":"s1"})");
  EXPECT_EQ(json::parse(w.body)["cancelled"], 1);
  EXPECT_TRUE(tb->cancelled());
  EXPECT_FALSE(ta->cancelled()) << "bob's session s1 is not alice's session s1";
  auto t2 = cancel_token::make();
  auto r2 = cancels.add(agent::cancel_key::session_id, "s1", t2, "bob");
  w = call(k_ops, "POST", "/api/inference/cancel", R"({"session_id":"s1"})");
  EXPECT_EQ(json::parse(w.body)["cancelled"], 3);  // the admin: every loop under the id (tb again too)
  EXPECT_TRUE(ta->cancelled());
  EXPECT_TRUE(t2->cancelled());
}

TEST_F(owners, TheAuditLogShowsAUserItsOwnRowsOnly) {
  for (const char* owner : {"alice", "bob", "alice", ""}) {
    store::call_record r;
    r.call_id = std::string("call_") + owner;
    r.session_id = "s1";
    r.owner = owner;
    r.tool = "terminal";
    r.arguments = R"({"command":"ls"})";
    ASSERT_TRUE(log.insert(r).ok());
  }
  EXPECT_EQ(field_of(call(k_alice, "GET", "/api/audit"), "owner"), (strings{"alice", "alice"}));
  EXPECT_EQ(field_of(call(k_bob, "GET", "/api/audit?session_id=s1"), "owner"), strings{"bob"});
  EXPECT_EQ(field_of(call(k_ops, "GET", "/api/audit"), "owner"), (strings{"alice", "bob", "alice", ""}));
  auto page = json::parse(call(k_bob, "GET", "/api/audit?limit=1").body);
  EXPECT_EQ(page["has_more"], false) << "paging counts only bob's rows";
  EXPECT_EQ(call("", "GET", "/api/audit").status, 401);
}

}  // namespace
}  // namespace warden::api
