#include <gtest/gtest.h>

#include "tools/text_util.h"
#include "tools/tool.h"

namespace warden::tools {
namespace {

using namespace std::chrono_literals;

TEST(TextUtil, Utf8RepairCountAndPrefix) {
  EXPECT_EQ(to_valid_utf8("ok \xC3\xA9"), "ok \xC3\xA9");
  EXPECT_EQ(to_valid_utf8("a\xFF" "b"), "a\xEF\xBF\xBD" "b");
  EXPECT_EQ(to_valid_utf8("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  EXPECT_EQ(incomplete_utf8_tail("ab\xE2\x82"), 2u);
  EXPECT_EQ(incomplete_utf8_tail("ab\xE2\x82\xAC"), 0u);
  EXPECT_EQ(incomplete_utf8_tail("ab\xFF"), 0u);
  EXPECT_EQ(utf8_length("\xE2\x82\xAC\xE2\x82\xAC" "a"), 3u);
  EXPECT_EQ(utf8_prefix("\xE2\x82\xAC\xE2\x82\xAC" "a", 1), "\xE2\x82\xAC");
}

TEST(Tools, CapForModel) {
  EXPECT_EQ(cap_for_model("short"), "short");
  std::string big(20000, 'x');
  auto capped = cap_for_model(big);
  EXPECT_EQ(capped.substr(0, 16000), std::string(16000, 'x'));
  EXPECT_EQ(capped.substr(16000), "\n... (truncated to 16000 chars for the model; 20000 chars total)");
  EXPECT_EQ(cap_for_model("abc", 16000, 5000000), "abc\n... (truncated to 3 chars for the model; 5000000 bytes total)");
}

TEST(Tools, FormatRunTable) {
  struct row {
    sandbox::run_result r;
    std::string want;
    bool error;
  };
  auto mk = [](int code, int sig, bool to, bool cancel, std::string out) {
    sandbox::run_result r;
    r.exit_code = code;
    r.term_signal = sig;
    r.timed_out = to;
    r.cancelled = cancel;
    r.output = out;
    r.output_bytes = out.size();
    return r;
  };
  sandbox::run_result failed;
  failed.failure = make_error(errc::internal, "no fork");
  const row rows[] = {
      {mk(0, 0, false, false, "hi\n"), "hi\n", false},
      {mk(0, 0, false, false, ""), "(no output)", false},
      {mk(2, 0, false, false, "bad\n"), "Exit code 2:\nbad\n", true},
      {mk(1, 0, false, false, ""), "Exit code 1:\n(no output)", true},
      {mk(-1, 9, false, false, ""), "Exit code 137 (killed by signal 9):\n(no output)", true},
      {mk(-1, 9, true, false, "partial"), "Execution timed out after 3 seconds.\npartial", true},
      {mk(-1, 9, false, true, ""), "Execution cancelled.", true},
      {failed, "Execution error: no fork", true},
      {mk(0, 0, false, false, "\xFF"), "\xEF\xBF\xBD", false},
  };
  for (const auto& r : rows) {
    auto got = format_run(r.r, 3s);
    EXPECT_EQ(got.text, r.want);
    EXPECT_EQ(got.is_error, r.error) << r.want;
  }
}

TEST(Tools, SessionIdsAndWorkspaces) {
  EXPECT_TRUE(valid_session_id("abc_DEF-123"));
  EXPECT_TRUE(valid_session_id(std::string(64, 'a')));
  for (const char* bad : {"", "../x", "a/b", "a b", ".", "é"}) EXPECT_FALSE(valid_session_id(bad)) << bad;
  EXPECT_FALSE(valid_session_id(std::string(65, 'a')));
  char tmpl[] = "/tmp/warden-ws-XXXXXX";
  const std::string root = std::string(::mkdtemp(tmpl)) + "/workspaces";
  auto ws = ensure_workspace(root, "s1");
  ASSERT_TRUE(ws);
  EXPECT_EQ(*ws, root + "/s1");
  EXPECT_TRUE(ensure_workspace(root, "s1"));  // idempotent
  EXPECT_FALSE(ensure_workspace(root, "../escape"));
}

TEST(Tools, SpecsAndKinds) {
  ASSERT_EQ(builtin_tools().size(), 3u);
  EXPECT_TRUE(is_code_tool("python"));
  EXPECT_TRUE(is_code_tool("terminal"));
  EXPECT_FALSE(is_code_tool("render_html"));
  const json spec = find_tool("python")->openai_spec();
  EXPECT_EQ(spec["function"]["parameters"]["required"], json::array({"code"}));
  EXPECT_EQ(find_tool("nope"), nullptr);
}

}  // namespace
}  // namespace warden::tools
