#include <gtest/gtest.h>

#include "agent/permission_rules.h"
#include "risk/launchers.h"

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
      {"prefix not covering", prefix_req("ls -la"), "terminal", term("ls -l"), "rule.command_prefix"},
      {"prefix partial word", prefix_req("ls -l"), "terminal", term("ls -la"), "rule.command_prefix"},
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
  const permission_rule r = must(make_rule(prefix_req("  ls -la "), "terminal", term("ls -la"), rule_scope::always, "", k_now));
  EXPECT_EQ(r.command_prefix, std::optional<std::string>("ls -la"));
  EXPECT_FALSE(r.arguments);
  struct row { std::string_view command; bool want; };
  const row rows[] = {
      {"ls -la", true},
      {"ls -la -s", true},
      {"ls  '-la'  --color=never", true},
      {"ls -la && ls -la", true},
      {"ls -la | ls -la", true},
      {"ls -la 2>&1", true},
      {"ls -la < /dev/null", true},
      {"ls -la # a comment", true},
      {"ls -la; rm -rf ~", false},
      {"ls -lax", false},
      {"ls", false},
      {"ls -l", false},
      {"ls -la $(rm x)", false},
      {"ls -la `rm x`", false},
      {"ls -la $HOME", false},
      {"ls -la > /etc/x", false},
      {"ls -la >> out.txt", false},
      {"(ls -la)", false},
      {"{ ls -la; }", false},
      {"sudo ls -la", false},
      {"FOO=1 ls -la", false},
      {"ls -la 'unterminated", false},
      {"", false},
      {"# only a comment", false},
      {"ls -la <(rm x)", false},
      {"bash -c 'ls -la'", false},
      {"ls -la\r# ; rm -f v", false},
      {"ls -la\x1b[2K", false},
      {"ls -la\nls -la", true},
      {"ls -la\t-s", true},
  };
  for (const row& c : rows) EXPECT_EQ(rule_matches(r, "any", "terminal", term(c.command), k_now), c.want) << c.command;
  EXPECT_FALSE(rule_matches(r, "any", "python", term("ls -la"), k_now));
  EXPECT_FALSE(rule_matches(r, "any", "terminal", json{{"command", 1}}, k_now));
  EXPECT_FALSE(rule_matches(r, "any", "terminal", json::array(), k_now));
}

TEST(PermissionRules, PrefixOfQuotedWords) {
  const permission_rule r = must(make_rule(prefix_req("cat 'my notes.txt'"), "terminal",
                                           term("cat \"my notes.txt\" -n"), rule_scope::always, "", k_now));
  EXPECT_TRUE(rule_matches(r, "", "terminal", term("cat my\\ notes.txt"), k_now));
  EXPECT_FALSE(rule_matches(r, "", "terminal", term("cat my notes.txt"), k_now));
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

// Issue 22: a prefix whose program runs other programs would cover whatever it is told to run.
TEST(PermissionRules, RefusesAPrefixWhoseProgramRunsOtherPrograms) {
  struct row { std::string_view prefix, command; };
  const row rows[] = {
      // the issue's list, spelled the ways a command can spell them
      {"sh", "sh -c 'id'"}, {"bash", "bash x.sh"}, {"rbash", "rbash -c id"}, {"dash", "dash -c id"},
      {"zsh", "zsh -c id"}, {"ksh", "ksh -c id"}, {"busybox", "busybox sh -c id"},
      {"python", "python x.py"}, {"python3", "python3 -c 'print(1)'"}, {"python3.11", "python3.11 x.py"},
      {"/usr/bin/python3", "/usr/bin/python3 x.py"}, {"/usr/bin/python3.11-dbg", "/usr/bin/python3.11-dbg x.py"},
      {"p'y'thon3", "python3 x.py"}, {"\\python3", "python3 x.py"}, {"PYTHON3", "PYTHON3 x.py"},
      {"perl", "perl -e 1"}, {"perl5.36.0", "perl5.36.0 -e 1"}, {"ruby", "ruby -e 1"}, {"node", "node -e 1"},
      {"nodejs", "nodejs x.js"}, {"deno", "deno run x.ts"}, {"php", "php -r 1"}, {"php8.2", "php8.2 -r 1"},
      {"lua5.4", "lua5.4 -e 1"}, {"tclsh", "tclsh x.tcl"}, {"tclsh8.6", "tclsh8.6 x.tcl"},
      {"make", "make all"}, {"make --eval", "make --eval x"}, {"cmake", "cmake -P x.cmake"}, {"ninja", "ninja -C b"},
      {"npm", "npm test"}, {"npm run", "npm run build"}, {"npx", "npx x"}, {"yarn", "yarn build"}, {"pnpm", "pnpm i"},
      {"pip", "pip install x"}, {"pip3", "pip3 install x"}, {"uv", "uv run x"}, {"cargo", "cargo run"},
      {"go", "go run ."}, {"find", "find ."}, {"find .", "find . -name x"}, {"xargs", "xargs ls"},
      {"env", "env ls"}, {"nice", "nice ls"}, {"nohup", "nohup ls"}, {"timeout", "timeout 5 ls"},
      {"sudo", "sudo ls"}, {"doas", "doas ls"}, {"git", "git status"}, {"git status", "git status -s"},
      {"ssh", "ssh host ls"}, {"awk", "awk 1 f"}, {"gawk", "gawk 1 f"}, {"sed", "sed -n 1p f"},
      {"parallel", "parallel ls"}, {"watch", "watch ls"}, {"strace", "strace ls"}, {"valgrind", "valgrind ls"},
      {"ld.so", "ld.so /bin/ls"}, {"jobs -x", "jobs -x rm x"}, {"ld-linux-x86-64.so.2", "ld-linux-x86-64.so.2 /usr/bin/rm"},
      {"/lib64/ld-linux-x86-64.so.2", "/lib64/ld-linux-x86-64.so.2 /usr/bin/rm"},
      {"prlimit", "prlimit ls"}, {"chrt", "chrt 1 ls"}, {"setsid", "setsid ls"}, {"sg", "sg grp -c id"},
      {"su", "su -c id"}, {"runuser", "runuser -u x ls"}, {"ed", "ed f"}, {"sqlite3", "sqlite3 db"},
      {"gcc-12", "gcc-12 x.c"}, {"tar", "tar xf a.tar"}, {"sort", "sort f"}, {"rsync", "rsync a b"}, {"command", "command ls"},
      {"exec", "exec ls"}, {"eval", "eval ls"}, {"source", "source x"}, {".", ". ./x"},
      // not a program: an assignment or a glob
      {"FOO=1", "FOO=1 ls"}, {"FOO=1 ls", "FOO=1 ls -la"}, {"pyth*", "pyth* x"}, {"l?", "l? x"},
      // a file a call can rewrite
      {"./run.sh", "./run.sh --fast"}, {"bin/tool", "bin/tool x"}, {"/workspace/tool", "/workspace/tool x"},
      {"/tmp/x", "/tmp/x y"}, {"~/bin/tool", "~/bin/tool"}, {"/usr/../workspace/t", "/usr/../workspace/t"},
      {"/usr/bin/./../../tmp/t", "/usr/bin/./../../tmp/t"},
  };
  for (const row& r : rows) {
    const auto got = make_rule(prefix_req(r.prefix), "terminal", term(r.command), rule_scope::always, "", k_now);
    ASSERT_FALSE(got.ok()) << r.prefix;
    EXPECT_EQ(got.error().param, "rule.command_prefix") << r.prefix;
    EXPECT_EQ(got.error().type_code, "prefix_runs_programs") << r.prefix << ": " << got.error().message;
    EXPECT_TRUE(prefix_refusal(r.prefix).has_value()) << r.prefix;
  }
  // Every entry of the list, by its own name (a family by a versioned one).
  for (const risk::launcher_entry& l : risk::launchers()) {
    const std::string name = std::string(l.name) + (l.family ? "9-x.so.1" : "");
    const auto got = make_rule(prefix_req("'" + name + "'"), "terminal", term("'" + name + "' x"), rule_scope::session, "s", k_now);
    ASSERT_FALSE(got.ok()) << name;
    EXPECT_EQ(got.error().type_code, "prefix_runs_programs") << name;
    EXPECT_NE(got.error().message.find(l.source.substr(0, 20)), std::string::npos) << name << ": " << got.error().message;
  }
}

TEST(PermissionRules, APrefixForAProgramThatRunsNothingElseIsKept) {
  struct row { std::string_view prefix, command; };
  const row rows[] = {
      {"ls", "ls -la"}, {"cat", "cat notes.txt"}, {"wc -l", "wc -l a b"}, {"head -n 5", "head -n 5 f"},
      {"/usr/bin/ls", "/usr/bin/ls -la"}, {"/bin/cat", "/bin/cat f"}, {"/opt/tools/bin/mytool", "/opt/tools/bin/mytool x"},
      {"grep -n", "grep -n x f"}, {"uniq -c", "uniq -c f"}, {"du -sh", "du -sh ."}, {"pwd", "pwd"},
      {"ldd", "ldd /bin/ls"}, {"rm -f", "rm -f /workspace/x"},
  };
  for (const row& r : rows) {
    const auto got = make_rule(prefix_req(r.prefix), "terminal", term(r.command), rule_scope::always, "", k_now);
    EXPECT_TRUE(got.ok()) << r.prefix << ": " << (got.ok() ? "" : got.error().message);
    EXPECT_FALSE(prefix_refusal(r.prefix).has_value()) << r.prefix;
  }
}

TEST(PermissionRules, AStoredPrefixRuleForALauncherMatchesNothing) {
  // A rule kept from before issue 22 (the store holds whatever was made then).
  for (const char* prefix : {"python3", "find .", "make", "git status", "FOO=1", "./run.sh"}) {
    permission_rule r;
    r.scope = rule_scope::always;
    r.tool = "terminal";
    r.command_prefix = prefix;
    const std::string covered = std::string(prefix) + " x";
    EXPECT_FALSE(rule_matches(r, "s", "terminal", term(covered), k_now)) << prefix;
  }
}

TEST(PermissionRules, NoSessionRuleForTheSharedSession) {
  for (const std::string_view session : {std::string_view(""), k_shared_session}) {
    const auto got = make_rule(std::nullopt, "python", json{{"code", "1"}}, rule_scope::session, std::string(session), k_now);
    ASSERT_FALSE(got.ok()) << session;
    EXPECT_EQ(got.error().param, "decision");
    EXPECT_EQ(got.error().type_code, "no_session");
    // always-rules are not tied to a session
    EXPECT_TRUE(make_rule(std::nullopt, "python", json{{"code", "1"}}, rule_scope::always, std::string(session), k_now).ok());
  }
  permission_rule shared = must(make_rule(std::nullopt, "python", json{{"code", "1"}}, rule_scope::session, "s", k_now));
  shared.session_id = std::string(k_shared_session);  // as an older warden stored it
  EXPECT_FALSE(rule_matches(shared, k_shared_session, "python", json{{"code", "1"}}, k_now));
  EXPECT_FALSE(rule_matches(shared, "", "python", json{{"code", "1"}}, k_now));
}

TEST(PermissionRules, RuleWithoutConditionMatchesNothing) {
  permission_rule r;
  r.scope = rule_scope::always;
  r.tool = "terminal";
  EXPECT_FALSE(rule_matches(r, "", "terminal", term("ls"), k_now));
}

}  // namespace
}  // namespace warden::agent
