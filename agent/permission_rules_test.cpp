#include <gtest/gtest.h>

#include "agent/permission_rules.h"

namespace warden::agent {
namespace {

constexpr std::int64_t k_now = 1'700'000'000'000;

json term(std::string_view command) { return json{{"command", std::string(command)}}; }
json file(std::string_view path) { return json{{"path", std::string(path)}, {"content", "x"}}; }

rule_request prefix_req(std::string_view prefix) { return rule_request{"terminal", std::string(prefix), std::nullopt, std::nullopt}; }
rule_request path_req(std::string_view prefix) { return rule_request{"edit_file", std::nullopt, std::string(prefix), std::nullopt}; }

permission_rule must(result<permission_rule> r) {
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : permission_rule{};
}

TEST(PermissionRules, ScopeNames) {
  EXPECT_STREQ(to_string(rule_scope::session), "session");
  EXPECT_STREQ(to_string(rule_scope::always), "always");
}

TEST(PermissionRules, DefaultsToExactArguments) {
  const json args = {{"b", 1}, {"a", "x"}};
  const permission_rule r = must(make_rule(std::nullopt, "python", args, rule_scope::session, "s1", k_now));
  EXPECT_EQ(r.tool, "python");
  EXPECT_EQ(r.scope, rule_scope::session);
  EXPECT_EQ(r.session_id, "s1");
  EXPECT_EQ(r.arguments, std::optional<std::string>(R"({"a":"x","b":1})"));
  EXPECT_FALSE(r.command_prefix || r.path_prefix);
  EXPECT_EQ(r.created_unix_ms, k_now);
  EXPECT_EQ(r.expires_unix_ms, 0);
  EXPECT_TRUE(r.id.empty());

  const rule_request bare{"python", std::nullopt, std::nullopt, 60};
  const permission_rule e = must(make_rule(bare, "python", args, rule_scope::always, "s1", k_now));
  EXPECT_EQ(e.arguments, r.arguments);
  EXPECT_EQ(e.session_id, "");
  EXPECT_EQ(e.expires_unix_ms, k_now + 60'000);
}

TEST(PermissionRules, MakeRuleErrors) {
  struct row {
    const char* name;
    rule_request req;
    std::string tool;
    json args;
    const char* param;
  };
  const row rows[] = {
      {"tool differs", {"python", std::nullopt, std::nullopt, std::nullopt}, "terminal", term("ls"), "rule.tool"},
      {"prefix not terminal", {"python", "print", std::nullopt, std::nullopt}, "python", json{{"code", "print(1)"}}, "rule.command_prefix"},
      {"prefix empty", prefix_req("  "), "terminal", term("ls"), "rule.command_prefix"},
      {"prefix not covering", prefix_req("git status"), "terminal", term("git log"), "rule.command_prefix"},
      {"prefix partial word", prefix_req("git stat"), "terminal", term("git status"), "rule.command_prefix"},
      {"compound not covered", prefix_req("ls"), "terminal", term("ls; rm -rf ~"), "rule.command_prefix"},
      {"seen is dynamic", prefix_req("echo"), "terminal", term("echo $HOME"), "rule.command_prefix"},
      {"seen does not parse", prefix_req("echo"), "terminal", term("echo 'x"), "rule.command_prefix"},
      {"seen has substitution", prefix_req("echo"), "terminal", term("echo `id`"), "rule.command_prefix"},
      {"prefix with redirect", prefix_req("ls > x"), "terminal", term("ls > x"), "rule.command_prefix"},
      {"prefix two commands", prefix_req("ls; ls"), "terminal", term("ls; ls"), "rule.command_prefix"},
      {"prefix with expansion", prefix_req("ls $X"), "terminal", term("ls $X"), "rule.command_prefix"},
      {"no command arg", prefix_req("ls"), "terminal", json{{"cmd", "ls"}}, "rule.command_prefix"},
      {"path without path arg", {"terminal", std::nullopt, "/workspace", std::nullopt}, "terminal", term("ls"), "rule.path_prefix"},
      {"path not covering", path_req("/workspace/a"), "edit_file", file("/workspace/ab"), "rule.path_prefix"},
      {"path prefix dotdot", path_req("/workspace/../etc"), "edit_file", file("/etc/x"), "rule.path_prefix"},
      {"seen path dotdot", path_req("/workspace"), "edit_file", file("/workspace/../etc/x"), "rule.path_prefix"},
      {"path prefix empty", path_req(""), "edit_file", file("/workspace/a"), "rule.path_prefix"},
      {"path arg not string", path_req("/workspace"), "edit_file", json{{"path", 3}}, "rule.path_prefix"},
      {"relative vs absolute", path_req("workspace"), "edit_file", file("/workspace/a"), "rule.path_prefix"},
      {"expiry zero", {"python", std::nullopt, std::nullopt, 0}, "python", json::object(), "rule.expires_in_s"},
      {"expiry negative", {"python", std::nullopt, std::nullopt, -5}, "python", json::object(), "rule.expires_in_s"},
      {"expiry too long", {"python", std::nullopt, std::nullopt, k_max_rule_expiry_s + 1}, "python", json::object(), "rule.expires_in_s"},
  };
  for (const row& r : rows) {
    const auto got = make_rule(r.req, r.tool, r.args, rule_scope::session, "s", k_now);
    ASSERT_FALSE(got.ok()) << r.name;
    EXPECT_EQ(got.error().code, errc::invalid_request) << r.name;
    EXPECT_EQ(got.error().param, r.param) << r.name;
    EXPECT_FALSE(got.error().message.empty()) << r.name;
  }
  const rule_request longest{"python", std::nullopt, std::nullopt, k_max_rule_expiry_s};
  EXPECT_TRUE(make_rule(longest, "python", json::object(), rule_scope::always, "", k_now).ok());
}

TEST(PermissionRules, CommandPrefixMatching) {
  const permission_rule r = must(make_rule(prefix_req("  git status "), "terminal", term("git status"), rule_scope::always, "", k_now));
  EXPECT_EQ(r.command_prefix, std::optional<std::string>("git status"));
  EXPECT_FALSE(r.arguments);
  struct row { std::string_view command; bool want; };
  const row rows[] = {
      {"git status", true},
      {"git status -s", true},
      {"git  'status'  --short", true},
      {"git status && git status", true},
      {"git status | git status", true},
      {"git status 2>&1", true},
      {"git status < /dev/null", true},
      {"git status # a comment", true},
      {"git status; rm -rf ~", false},
      {"git statusx", false},
      {"git", false},
      {"git log", false},
      {"git status $(rm x)", false},
      {"git status `rm x`", false},
      {"git status $HOME", false},
      {"git status > /etc/x", false},
      {"git status >> out.txt", false},
      {"(git status)", false},
      {"{ git status; }", false},
      {"sudo git status", false},
      {"FOO=1 git status", false},
      {"git status 'unterminated", false},
      {"", false},
      {"# only a comment", false},
      {"git status <(rm x)", false},
      {"bash -c 'git status'", false},
      {"git status\r# ; rm -f v", false},
      {"git status\x1b[2K", false},
      {"git status\ngit status", true},
      {"git status\t-s", true},
  };
  for (const row& c : rows) EXPECT_EQ(rule_matches(r, "any", "terminal", term(c.command), k_now), c.want) << c.command;
  EXPECT_FALSE(rule_matches(r, "any", "python", term("git status"), k_now));
  EXPECT_FALSE(rule_matches(r, "any", "terminal", json{{"command", 1}}, k_now));
  EXPECT_FALSE(rule_matches(r, "any", "terminal", json::array(), k_now));
}

TEST(PermissionRules, PrefixOfQuotedWords) {
  const permission_rule r = must(make_rule(prefix_req("python3 'my script.py'"), "terminal",
                                           term("python3 \"my script.py\" --fast"), rule_scope::always, "", k_now));
  EXPECT_TRUE(rule_matches(r, "", "terminal", term("python3 my\\ script.py"), k_now));
  EXPECT_FALSE(rule_matches(r, "", "terminal", term("python3 my script.py"), k_now));
}

TEST(PermissionRules, ExactArgumentsMatching) {
  const permission_rule r = must(make_rule(std::nullopt, "python", json{{"code", "print(1)"}}, rule_scope::always, "", k_now));
  EXPECT_TRUE(rule_matches(r, "s", "python", json{{"code", "print(1)"}}, k_now));
  EXPECT_TRUE(rule_matches(r, "", "python", json::parse(R"j({ "code" : "print(1)" })j"), k_now));
  EXPECT_FALSE(rule_matches(r, "s", "python", json{{"code", "print(2)"}}, k_now));
  EXPECT_FALSE(rule_matches(r, "s", "python", json{{"code", "print(1)"}, {"x", 1}}, k_now));
  EXPECT_FALSE(rule_matches(r, "s", "terminal", json{{"code", "print(1)"}}, k_now));

  const json nested = json::parse(R"({"z": {"b": 2, "a": [1, {"d": 0, "c": 1}]}, "y": null})");
  const permission_rule n = must(make_rule(std::nullopt, "mcp_tool", nested, rule_scope::always, "", k_now));
  EXPECT_TRUE(rule_matches(n, "", "mcp_tool", json::parse(R"({"y": null, "z": {"a": [1, {"c": 1, "d": 0}], "b": 2}})"), k_now));
}

TEST(PermissionRules, PathPrefixIsComponentWise) {
  const permission_rule r = must(make_rule(path_req("/workspace/a/"), "edit_file", file("/workspace/a/b.txt"), rule_scope::always, "", k_now));
  EXPECT_EQ(r.path_prefix, std::optional<std::string>("/workspace/a/"));
  struct row { std::string_view path; bool want; };
  const row rows[] = {
      {"/workspace/a/b.txt", true},
      {"/workspace/a", true},
      {"/workspace/a/", true},
      {"/workspace/a/c/d/e.txt", true},
      {"/workspace//a/./b.txt", true},
      {"/workspace/ab", false},
      {"/workspace/ab/c.txt", false},
      {"/workspace", false},
      {"/workspace/a/../b.txt", false},
      {"/workspace/a/..", false},
      {"workspace/a/b.txt", false},
      {"", false},
  };
  for (const row& c : rows) EXPECT_EQ(rule_matches(r, "", "edit_file", file(c.path), k_now), c.want) << c.path;
  EXPECT_FALSE(rule_matches(r, "", "edit_file", json{{"path", 1}}, k_now));
  EXPECT_FALSE(rule_matches(r, "", "edit_file", json{{"content", "x"}}, k_now));

  const permission_rule rel = must(make_rule(path_req("src"), "edit_file", file("src/main.cpp"), rule_scope::always, "", k_now));
  EXPECT_TRUE(rule_matches(rel, "", "edit_file", file("./src/x.h"), k_now));
  EXPECT_FALSE(rule_matches(rel, "", "edit_file", file("/src/x.h"), k_now));
}

TEST(PermissionRules, SessionScopeAndExpiry) {
  rule_request req = prefix_req("ls");
  req.expires_in_s = 10;
  const permission_rule r = must(make_rule(req, "terminal", term("ls"), rule_scope::session, "s1", k_now));
  EXPECT_EQ(r.expires_unix_ms, k_now + 10'000);
  EXPECT_TRUE(rule_matches(r, "s1", "terminal", term("ls -la"), k_now));
  EXPECT_TRUE(rule_matches(r, "s1", "terminal", term("ls"), k_now + 9'999));
  EXPECT_FALSE(rule_matches(r, "s1", "terminal", term("ls"), k_now + 10'000));
  EXPECT_FALSE(rule_matches(r, "s2", "terminal", term("ls"), k_now));
  EXPECT_FALSE(rule_matches(r, "", "terminal", term("ls"), k_now));

  permission_rule no_session = r;
  no_session.session_id = "";
  EXPECT_FALSE(rule_matches(no_session, "", "terminal", term("ls"), k_now));

  const permission_rule always = must(make_rule(prefix_req("ls"), "terminal", term("ls"), rule_scope::always, "s1", k_now));
  EXPECT_EQ(always.session_id, "");
  EXPECT_TRUE(rule_matches(always, "s2", "terminal", term("ls"), k_now + 1'000'000'000));
  EXPECT_TRUE(rule_matches(always, "", "terminal", term("ls"), k_now));
}

TEST(PermissionRules, RuleWithoutConditionMatchesNothing) {
  permission_rule r;
  r.scope = rule_scope::always;
  r.tool = "terminal";
  EXPECT_FALSE(rule_matches(r, "", "terminal", term("ls"), k_now));
}

}  // namespace
}  // namespace warden::agent
