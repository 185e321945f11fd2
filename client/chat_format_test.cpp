// What `warden chat` prints (client/chat_format.h): safe terminal text, cards, results, tables.
#include "client/chat_format.h"

#include <gtest/gtest.h>

namespace warden::client {
namespace {

TEST(ChatFormat, TerminalTextDefusesEscapes) {
  EXPECT_EQ(terminal_text("a\nb\tc"), "a\nb\tc");
  EXPECT_EQ(terminal_text("a\r\nb"), "a\nb");
  EXPECT_EQ(terminal_text("50%\r100%"), "50%\n100%");
  EXPECT_EQ(terminal_text("\x1b]52;c;aGk=\x07"), "\\x1b]52;c;aGk=\\x07");
  EXPECT_EQ(terminal_text("\xc2\x9b" "2J"), "\\u009b2J");
  EXPECT_EQ(terminal_text("bad \xff byte"), "bad \xEF\xBF\xBD byte");
  EXPECT_EQ(terminal_text("héllo ✓"), "héllo ✓");
}

TEST(ChatFormat, OneLineEscapesAndCuts) {
  EXPECT_EQ(one_line("a\nb", 10), "a\\nb");
  EXPECT_EQ(one_line("abcdef", 3), "abc…");
  EXPECT_EQ(one_line("ééé", 2), "éé…");
  EXPECT_EQ(one_line("\x1b[2J", 10), "\\x1b[2J");
}

TEST(ChatFormat, Indent) {
  EXPECT_EQ(indent("a\nb", "  "), "  a\n  b");
  EXPECT_EQ(indent("a\n", "> "), "> a\n");
  EXPECT_EQ(indent("", "> "), "");
}

TEST(ChatFormat, ArgumentsPerTool) {
  EXPECT_EQ(format_arguments("python", json{{"code", "import os\nprint(6*7)\n"}}, 10), "import os\nprint(6*7)");
  EXPECT_EQ(format_arguments("terminal", json{{"command", "ls -la"}}, 10), "$ ls -la");
  EXPECT_EQ(format_arguments("render_html", json{{"code", "<b>hi</b>"}, {"title", "Hi"}}, 10), "title: Hi\n9 bytes of HTML");
  EXPECT_EQ(format_arguments("edit_file", json{{"path", "a.py"}, {"old_string", "x = 1\ny = 2\n"}, {"new_string", "x = 3\n"}}, 10),
            "a.py\n-x = 1\n-y = 2\n+x = 3");
  EXPECT_EQ(format_arguments("edit_file", json{{"path", "n.md"}, {"old_string", ""}, {"new_string", "hi"}, {"replace_all", true}}, 10),
            "n.md  (every occurrence)\n(new file)\n+hi");
  EXPECT_EQ(format_arguments("web_search", json{{"query", "x"}, {"n", 3}}, 10), "n: 3\nquery: x");
  EXPECT_EQ(format_arguments("python", json::object(), 10), "(no arguments)");
  EXPECT_EQ(format_arguments("python", json{{"code", "\x1b[31mred"}}, 10), "\\x1b[31mred");
}

TEST(ChatFormat, LongArgumentsAreCut) {
  EXPECT_EQ(format_arguments("python", json{{"code", "1\n2\n3\n4\n5"}}, 3), "1\n2\n3\n… 2 more lines");
  EXPECT_EQ(format_arguments("python", json{{"code", "1\n2\n3\n4"}}, 3), "1\n2\n3\n… 1 more line");
  EXPECT_EQ(format_arguments("python", json{{"code", "1\n2\n3"}}, 3), "1\n2\n3");
}

TEST(ChatFormat, BlankPaddingCannotHideTheEndOfACommand) {
  const std::string padded = "ls" + std::string(30, '\n') + "rm -rf ~";
  EXPECT_EQ(format_arguments("terminal", json{{"command", padded}}, 3), "$ ls\n⋯ 29 blank lines\nrm -rf ~");
  EXPECT_EQ(squeeze_blank_lines("a\n\nb"), "a\n\nb");          // one blank line stays
  EXPECT_EQ(squeeze_blank_lines("a\n \n\t\nb\n"), "a\n⋯ 2 blank lines\nb\n");
  EXPECT_EQ(squeeze_blank_lines(""), "");
  EXPECT_EQ(squeeze_blank_lines("x"), "x");
}

TEST(ChatFormat, Risk) {
  EXPECT_EQ(format_risk({"high", {"runs rm (destructive)", "writes outside the workspace"}}),
            "not known to be safe: runs rm (destructive); writes outside the workspace");
  EXPECT_EQ(format_risk({"high", {}}), "not known to be safe");
  EXPECT_EQ(format_risk({"low", {}}), "risk: low");
  EXPECT_EQ(format_risk({"", {}}), "");
}

TEST(ChatFormat, BriefResult) {
  EXPECT_EQ(brief_result("42\n", 6), "42");
  EXPECT_EQ(brief_result("", 6), "");
  EXPECT_EQ(brief_result("a\nb\nc\n", 2), "a\nb\n… 1 more line");
}

TEST(ChatFormat, WhoDecided) {
  auto end = [](std::optional<std::string> by, std::optional<bool> allowed) {
    tool_end_event e;
    e.decided_by = std::move(by);
    e.allowed = allowed;
    return decided_by_text(e);
  };
  EXPECT_EQ(end(std::nullopt, std::nullopt), "");
  EXPECT_EQ(end("user", true), "you allowed it");
  EXPECT_EQ(end("user", false), "you declined it");
  EXPECT_EQ(end("rule", true), "allowed by a remembered rule");
  EXPECT_EQ(end("auto", true), "ran without asking (auto: low risk)");
  EXPECT_EQ(end("policy", true), "ran without asking (policy)");
  EXPECT_EQ(end("policy", false), "refused by policy");
  EXPECT_EQ(end("bypass", true), "ran outside the sandbox (full)");
  EXPECT_EQ(end("expired", false), "expired: nobody answered in time");
  EXPECT_EQ(end("client_gone", false), "not run: the client went away");
  EXPECT_EQ(end("cancel", false), "cancelled");
  EXPECT_EQ(end("martian", false), "refused by martian");
}

TEST(ChatFormat, PromptEscapesAreMarked) {
  EXPECT_EQ(mark_prompt_escapes("\x1b[1myou\x1b[0m> "), "\1\x1b[1m\1you\1\x1b[0m\1> ");
  EXPECT_EQ(mark_prompt_escapes("\x1b[1m\x1b[36myou\x1b[0m\x1b[0m "), "\1\x1b[1m\x1b[36m\1you\1\x1b[0m\x1b[0m\1 ");
  EXPECT_EQ(mark_prompt_escapes("plain> "), "plain> ");
  style s{true};
  EXPECT_EQ(s.bold("x"), "\x1b[1mx\x1b[0m");
  EXPECT_EQ(style{false}.red("x"), "x");
}

TEST(ChatFormat, RulesTable) {
  EXPECT_EQ(rules_table(json::parse(R"J({"object":"list","data":[]})J")), "no remembered rules\n");
  EXPECT_EQ(rules_table(json::parse(R"({"nope":1})")), "");
  const std::string t = rules_table(json::parse(R"J({"object":"list","data":[
    {"id":"rule_abc","scope":"session","session_id":"s","tool":"python","arguments":{"code":"print(1)"},"created_at_ms":1,"expires_at_ms":null},
    {"id":"rule_def","scope":"always","session_id":"","tool":"terminal","command_prefix":"git status","created_at_ms":1,"expires_at_ms":null}]})J"));
  EXPECT_NE(t.find("rule_abc"), std::string::npos);
  EXPECT_NE(t.find("session"), std::string::npos);
  EXPECT_NE(t.find("print(1)"), std::string::npos);
  EXPECT_NE(t.find("command starts with: git status"), std::string::npos);
  EXPECT_NE(t.find("no expiry"), std::string::npos);
  EXPECT_EQ(std::count(t.begin(), t.end(), '\n'), 2);
}

TEST(ChatFormat, AuditTable) {
  EXPECT_EQ(audit_table(json::array()), "no tool calls in this session yet\n");
  const std::string t = audit_table(json::parse(R"J([
    {"id":1,"tool":"python","arguments":{"code":"print(6*7)\nprint(1)"},"decided_by":"user","rule_id":"","allowed":true,
     "risk":{"level":"low","reasons":[]},"exit_status":0,"duration_ms":31,"started_at":0},
    {"id":2,"tool":"terminal","arguments":{"command":"rm -rf /"},"decided_by":"user","rule_id":null,"allowed":false,
     "risk":{"level":"high","reasons":["x"]},"exit_status":null,"duration_ms":0,"started_at":0}])J"));
  EXPECT_EQ(t.rfind("time", 0), 0u);
  EXPECT_NE(t.find("python"), std::string::npos);
  EXPECT_NE(t.find("print(6*7)\\nprint(1)"), std::string::npos);
  EXPECT_NE(t.find("not run"), std::string::npos);
  EXPECT_NE(t.find("rm -rf /"), std::string::npos);
  EXPECT_NE(t.find("31ms"), std::string::npos);
  EXPECT_EQ(std::count(t.begin(), t.end(), '\n'), 3);
}

}  // namespace
}  // namespace warden::client
