#include <gtest/gtest.h>

#include "risk/shell_words.h"

namespace warden::risk {
namespace {

using words = std::vector<std::string>;
const std::string D(1, '\0');  // a run-time part of a word

/// argv of every command, in order.
std::vector<words> argvs(std::string_view line) {
  const shell_parse p = parse_shell(line);
  EXPECT_TRUE(p.ok) << line << ": " << p.why;
  std::vector<words> out;
  for (const shell_command& c : p.commands) out.push_back(c.argv);
  return out;
}

TEST(ShellWords, QuoteRemoval) {
  struct row { std::string_view line; words want; };
  const row rows[] = {
      {"r''m -rf x", {"rm", "-rf", "x"}},
      {"\"r\"m x", {"rm", "x"}},
      {"\\rm x", {"rm", "x"}},
      {"echo \"a b\" 'c d' e\\ f", {"echo", "a b", "c d", "e f"}},
      {"echo \"it's\" 'say \"hi\"'", {"echo", "it's", "say \"hi\""}},
      {"echo \"a\\\"b\\\\c\\$d\\x\"", {"echo", "a\"b\\c$d\\x"}},
      {"echo $'\\x72\\x6d' $'a\\tb' $'\\101\\u00e9' $'x\\0y'", {"echo", "rm", "a\tb", "A\xc3\xa9", "x"}},
      {"echo $\"hi\"", {"echo", "hi"}},
      {"echo a\\\nb", {"echo", "ab"}},
      {"ls \\\n  -la", {"ls", "-la"}},
      {"echo '' \"\"", {"echo", "", ""}},
      {"echo *.txt ~/x a?[bc]", {"echo", "*.txt", "~/x", "a?[bc]"}},
      {"echo a#b #comment", {"echo", "a#b"}},
      {"echo $ x$", {"echo", "$", "x$"}},
  };
  for (const row& r : rows) {
    const auto got = argvs(r.line);
    ASSERT_EQ(got.size(), 1u) << r.line;
    EXPECT_EQ(got[0], r.want) << r.line;
    EXPECT_FALSE(parse_shell(r.line).commands[0].dynamic) << r.line;
  }
}

TEST(ShellWords, DynamicWords) {
  struct row { std::string_view line; words want; };
  const row rows[] = {
      {"echo $HOME", {"echo", D}},
      {"echo ${HOME:-x}/bin", {"echo", D + "/bin"}},
      {"echo \"a $1 b\"", {"echo", "a " + D + " b"}},
      {"echo $? $$ $@", {"echo", D, D, D}},
      {"echo $((1 + (2 * 3)))", {"echo", D}},
      {"$X -rf /", {D, "-rf", "/"}},
  };
  for (const row& r : rows) {
    const shell_parse p = parse_shell(r.line);
    ASSERT_TRUE(p.ok) << r.line << ": " << p.why;
    ASSERT_EQ(p.commands.size(), 1u) << r.line;
    EXPECT_EQ(p.commands[0].argv, r.want) << r.line;
    EXPECT_TRUE(p.commands[0].dynamic) << r.line;
  }
}

TEST(ShellWords, Separators) {
  EXPECT_EQ(argvs("a; b && c || d | e |& f & g\nh"),
            (std::vector<words>{{"a"}, {"b"}, {"c"}, {"d"}, {"e"}, {"f"}, {"g"}, {"h"}}));
  EXPECT_EQ(argvs("a;b&&c"), (std::vector<words>{{"a"}, {"b"}, {"c"}}));
  EXPECT_EQ(argvs("  \n ; \n"), std::vector<words>{});
  const shell_parse p = parse_shell("a | b; c |& d");
  ASSERT_EQ(p.commands.size(), 4u);
  EXPECT_FALSE(p.commands[0].stdin_from_pipe);
  EXPECT_TRUE(p.commands[1].stdin_from_pipe);
  EXPECT_FALSE(p.commands[2].stdin_from_pipe);
  EXPECT_TRUE(p.commands[3].stdin_from_pipe);
}

TEST(ShellWords, Redirections) {
  const shell_parse p = parse_shell("cmd > out 2>&1 >> 'a b' < in 2> err &> all <<< \"here\" >&file 3<&0 >&-");
  ASSERT_TRUE(p.ok) << p.why;
  ASSERT_EQ(p.commands.size(), 1u);
  const shell_command& c = p.commands[0];
  EXPECT_EQ(c.argv, words{"cmd"});
  EXPECT_EQ(c.redirects, (words{"out", "a b", "in", "err", "all", "file"}));
  EXPECT_EQ(c.redirect_writes, (std::vector<bool>{true, true, false, true, true, true}));
  EXPECT_TRUE(c.here_string);
  EXPECT_FALSE(c.dynamic);

  const shell_parse d = parse_shell("echo x > \"$OUT\"");
  ASSERT_EQ(d.commands.size(), 1u);
  EXPECT_EQ(d.commands[0].redirects, words{""});
  EXPECT_TRUE(d.commands[0].dynamic);

  const shell_parse alone = parse_shell("> /etc/x");
  ASSERT_EQ(alone.commands.size(), 1u);
  EXPECT_TRUE(alone.commands[0].argv.empty());
  EXPECT_EQ(alone.commands[0].redirects, words{"/etc/x"});

  EXPECT_EQ(argvs("echo 2 >x"), (std::vector<words>{{"echo", "2"}}));
}

TEST(ShellWords, NestedCommands) {
  const shell_parse p = parse_shell("echo \"a $(ls \"$(pwd)\") `whoami`\" <(sort x) >(cat)");
  ASSERT_TRUE(p.ok) << p.why;
  std::vector<words> got;
  for (const auto& c : p.commands) got.push_back(c.argv);
  EXPECT_EQ(got, (std::vector<words>{{"pwd"}, {"ls", D}, {"whoami"}, {"sort", "x"}, {"cat"}, {"echo", "a " + D + " " + D, D, D}}));
  for (std::size_t i = 0; i + 1 < p.commands.size(); ++i) EXPECT_TRUE(p.commands[i].nested) << i;
  EXPECT_FALSE(p.commands.back().nested);
  EXPECT_TRUE(p.commands.back().dynamic);

  const shell_parse g = parse_shell("(cd x && rm y) ; { a; b; } ; c");
  ASSERT_TRUE(g.ok) << g.why;
  ASSERT_EQ(g.commands.size(), 5u);
  EXPECT_EQ(g.commands[1].argv, (words{"rm", "y"}));
  EXPECT_TRUE(g.commands[0].nested && g.commands[1].nested && g.commands[2].nested && g.commands[3].nested);
  EXPECT_FALSE(g.commands[4].nested);

  const shell_parse piped = parse_shell("curl x | { sh; } | (bash)");
  ASSERT_EQ(piped.commands.size(), 3u);
  EXPECT_TRUE(piped.commands[1].stdin_from_pipe);
  EXPECT_TRUE(piped.commands[2].stdin_from_pipe);
}

TEST(ShellWords, ShellDashCPayloadsAreParsed) {
  EXPECT_EQ(argvs("bash -c 'rm -rf /; echo \"$(id)\"'"),
            (std::vector<words>{{"bash", "-c", "rm -rf /; echo \"$(id)\""}, {"rm", "-rf", "/"}, {"id"}, {"echo", D}}));
  EXPECT_EQ(argvs("sudo sh -ec 'ls'"), (std::vector<words>{{"sudo", "sh", "-ec", "ls"}, {"ls"}}));
  EXPECT_EQ(argvs("bash -o pipefail -c 'a | b'"), (std::vector<words>{{"bash", "-o", "pipefail", "-c", "a | b"}, {"a"}, {"b"}}));
  EXPECT_EQ(argvs("busybox sh -c x"), (std::vector<words>{{"busybox", "sh", "-c", "x"}, {"x"}}));
  EXPECT_EQ(argvs("xargs sh -c 'rm \"$1\"' _"), (std::vector<words>{{"xargs", "sh", "-c", "rm \"$1\"", "_"}, {"rm", D}}));
  EXPECT_EQ(argvs("bash script.sh -c x"), (std::vector<words>{{"bash", "script.sh", "-c", "x"}}));
  EXPECT_TRUE(parse_shell("sh -c 'ls'").commands[1].nested);
  EXPECT_FALSE(parse_shell("sh -c 'echo \"'").ok);
}

TEST(ShellWords, KeywordsSeparateCommands) {
  EXPECT_EQ(argvs("if [ -f x ]; then rm x; elif true; then :; else echo no; fi"),
            (std::vector<words>{{"[", "-f", "x", "]"}, {"rm", "x"}, {"true"}, {":"}, {"echo", "no"}}));
  EXPECT_EQ(argvs("for f in $(ls); do rm \"$f\"; done"), (std::vector<words>{{"ls"}, {"rm", D}}));
  EXPECT_EQ(argvs("for ((i=0; i<3; i++)); do echo $i; done"), (std::vector<words>{{"echo", D}}));
  EXPECT_EQ(argvs("while read l; do echo \"$l\"; done < f"), (std::vector<words>{{"read", "l"}, {"echo", D}, {}}));
  EXPECT_EQ(argvs("until false; do break; done"), (std::vector<words>{{"false"}, {"break"}}));
  EXPECT_EQ(argvs("f() { rm -rf /; }; f"), (std::vector<words>{{"rm", "-rf", "/"}, {"f"}}));
  EXPECT_EQ(argvs("function g { ls; }"), (std::vector<words>{{"ls"}}));
  EXPECT_EQ(argvs("! grep x f"), (std::vector<words>{{"grep", "x", "f"}}));
  EXPECT_EQ(argvs("[[ $a == 1 && -f x ]] || echo no"), (std::vector<words>{{"[[", D, "==", "1", "&&", "-f", "x", "]]"}, {"echo", "no"}}));
  EXPECT_EQ(argvs("echo if then fi done"), (std::vector<words>{{"echo", "if", "then", "fi", "done"}}));
  EXPECT_EQ(argvs("\"if\" x"), (std::vector<words>{{"if", "x"}}));
  EXPECT_EQ(argvs("(( x = 1 + 2 ))"), std::vector<words>{});
  EXPECT_EQ(argvs("echo {a,b} {}"), (std::vector<words>{{"echo", "{a,b}", "{}"}}));
}

TEST(ShellWords, BackgroundFunctionsAndLoops) {
  const shell_parse p = parse_shell("a & b && c; d &\ncoproc e");
  ASSERT_TRUE(p.ok) << p.why;
  ASSERT_EQ(p.commands.size(), 5u);
  EXPECT_TRUE(p.commands[0].background);
  EXPECT_FALSE(p.commands[1].background);
  EXPECT_FALSE(p.commands[2].background);
  EXPECT_TRUE(p.commands[3].background);
  EXPECT_TRUE(p.commands[4].background);
  EXPECT_FALSE(p.defines_function);
  EXPECT_TRUE(p.loops.empty());
  EXPECT_FALSE(parse_shell("a &> f").commands[0].background);
  EXPECT_TRUE(parse_shell(":(){ :|:& };:").defines_function);
  EXPECT_TRUE(parse_shell(":(){ :|:& };:").commands[1].background);
  EXPECT_TRUE(parse_shell("function f { ls; }").defines_function);

  const shell_parse l = parse_shell("for i in a $(seq 3) *.txt; do while true; do until x; do :; done; done; done; select s in y; do :; done");
  ASSERT_TRUE(l.ok) << l.why;
  ASSERT_EQ(l.loops.size(), 4u);
  EXPECT_EQ(l.loops[0].keyword, "for");
  EXPECT_EQ(l.loops[0].words, (words{"i", "in", "a", D, "*.txt"}));
  EXPECT_EQ(l.loops[1].keyword, "while");
  EXPECT_TRUE(l.loops[1].words.empty());
  EXPECT_EQ(l.loops[2].keyword, "until");
  EXPECT_EQ(l.loops[3].keyword, "select");
  EXPECT_EQ(l.loops[3].words, (words{"s", "in", "y"}));
  EXPECT_EQ(parse_shell("for ((i=0;i<3;i++)); do :; done").loops[0].words, words{});
  EXPECT_EQ(parse_shell("echo for while").loops.size(), 0u);
}

TEST(ShellWords, CannotDecide) {
  const std::string_view bad[] = {
      "echo 'abc", "echo \"abc", "echo `ls", "echo $(ls", "(ls", "ls)", "{ ls;", "ls; }", "cat <<EOF\nx\nEOF",
      "cat <<-EOF", "case $x in a) ls;; esac", "echo ${x:-$(rm y)}", "echo ${x", "echo $((1 + $(rm x)))",
      "a=(1 2)", "ls > ", "echo $'abc", "[[ -f x", "ls ( x", "(( 1 + 2",
  };
  for (const std::string_view line : bad) {
    const shell_parse p = parse_shell(line);
    EXPECT_FALSE(p.ok) << line;
    EXPECT_FALSE(p.why.empty()) << line;
  }
  EXPECT_FALSE(parse_shell(std::string(64 * 1024 + 1, 'a')).ok);
  EXPECT_TRUE(parse_shell(std::string(64 * 1024, 'a')).ok);
  EXPECT_FALSE(parse_shell(std::string("ls\0x", 4)).ok);
  std::string deep = "ls";
  for (int i = 0; i < 40; ++i) deep = "echo $(" + deep + ")";
  EXPECT_FALSE(parse_shell(deep).ok);
  std::string ok_deep = "ls";
  for (int i = 0; i < 20; ++i) ok_deep = "echo $(" + ok_deep + ")";
  EXPECT_TRUE(parse_shell(ok_deep).ok);
}

TEST(ShellWords, EffectiveArgvRemovesWrappers) {
  struct row { words argv; words want; words wrappers; };
  const row rows[] = {
      {{"/bin/rm", "-rf", "x"}, {"rm", "-rf", "x"}, {}},
      {{"FOO=1", "BAR+=2", "rm", "x"}, {"rm", "x"}, {}},
      {{"env", "-i", "-u", "HOME", "A=b", "rm", "x"}, {"rm", "x"}, {"env"}},
      {{"/usr/bin/env", "--", "rm"}, {"rm"}, {"env"}},
      {{"env", "-S", "rm -rf /", "x"}, {"rm", "-rf", "/", "x"}, {"env"}},
      {{"sudo", "-u", "root", "-E", "ls"}, {"ls"}, {"sudo"}},
      {{"sudo", "--user=root", "--", "ls"}, {"ls"}, {"sudo"}},
      {{"doas", "-u", "x", "ls"}, {"ls"}, {"doas"}},
      {{"nice", "-n", "5", "rm"}, {"rm"}, {"nice"}},
      {{"nice", "-10", "rm"}, {"rm"}, {"nice"}},
      {{"nohup", "rm"}, {"rm"}, {"nohup"}},
      {{"timeout", "-s", "KILL", "-k", "1", "5s", "rm"}, {"rm"}, {"timeout"}},
      {{"time", "-p", "rm"}, {"rm"}, {"time"}},
      {{"command", "rm"}, {"rm"}, {"command"}},
      {{"command", "-v", "rm"}, {"command", "-v", "rm"}, {}},
      {{"exec", "-a", "name", "rm"}, {"rm"}, {"exec"}},
      {{"builtin", "echo"}, {"echo"}, {"builtin"}},
      {{"xargs", "-0", "-n", "1", "-I{}", "rm"}, {"rm"}, {"xargs"}},
      {{"xargs", "-P4", "--max-args", "2", "rm"}, {"rm"}, {"xargs"}},
      {{"stdbuf", "-oL", "-e", "0", "rm"}, {"rm"}, {"stdbuf"}},
      {{"ionice", "-c", "3", "rm"}, {"rm"}, {"ionice"}},
      {{"chronic", "rm"}, {"rm"}, {"chronic"}},
      {{"sudo", "nice", "env", "X=1", "/usr/bin/timeout", "5", "rm"}, {"rm"}, {"sudo", "nice", "env", "timeout"}},
      {{"X=1"}, {}, {}},
      {{"sudo"}, {}, {"sudo"}},
      {{"ls", "-la"}, {"ls", "-la"}, {}},
  };
  for (const row& r : rows) {
    words wrappers;
    EXPECT_EQ(effective_argv(r.argv, &wrappers), r.want) << r.argv[0];
    EXPECT_EQ(wrappers, r.wrappers) << r.argv[0];
  }
  EXPECT_EQ(effective_argv({}), words{});
}

TEST(ShellWords, Helpers) {
  EXPECT_EQ(program_name("/usr/bin/rm"), "rm");
  EXPECT_EQ(program_name("rm"), "rm");
  EXPECT_EQ(program_name(""), "");
  EXPECT_TRUE(is_assignment_word("A=1"));
  EXPECT_TRUE(is_assignment_word("a_b+=x"));
  EXPECT_TRUE(is_assignment_word("arr[2]=x"));
  EXPECT_TRUE(is_assignment_word("a[b[1]]=x"));
  EXPECT_FALSE(is_assignment_word("a[b=x"));
  EXPECT_FALSE(is_assignment_word("=x"));
  EXPECT_FALSE(is_assignment_word("1A=x"));
  EXPECT_FALSE(is_assignment_word("--opt=x"));
  EXPECT_EQ(shell_c_payload({"bash", "-lc", "ls"}), std::optional<std::string>("ls"));
  EXPECT_EQ(shell_c_payload({"bash", "--norc", "-c", "ls"}), std::optional<std::string>("ls"));
  EXPECT_EQ(shell_c_payload({"bash", "x.sh"}), std::nullopt);
  EXPECT_EQ(shell_c_payload({"bash", "-c"}), std::nullopt);
  EXPECT_EQ(shell_c_payload({"python", "-c", "x"}), std::nullopt);
}

}  // namespace
}  // namespace warden::risk
