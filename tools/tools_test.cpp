#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include "tools/builtins.h"
#include "tools/program.h"
#include "tools/tool.h"
#include "tools/workspace.h"

namespace warden::tools {
namespace {

using namespace std::chrono_literals;

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
    r.started = true;
    return r;
  };
  sandbox::run_result failed;
  failed.failure = make_error(errc::internal, "no fork");
  sandbox::run_result no_jail = mk(1, 0, false, false, "bwrap: Creating new namespace failed: Resource temporarily unavailable\n");
  no_jail.started = false;  // bubblewrap exited before it started the program
  sandbox::run_result oom = mk(137, 0, false, false, "");  // bash reports its child's SIGKILL
  oom.memory_killed = true;
  oom.memory_limit_bytes = 4096ull << 20;
  const row rows[] = {
      {oom, "Exit code 137:\n(no output)\n(the call reached its memory limit of 4096 MiB, --call-memory: the kernel "
            "killed its largest process)", true},
      {mk(0, 0, false, false, "hi\n"), "hi\n", false},
      {mk(0, 0, false, false, ""), "(no output)", false},
      {mk(2, 0, false, false, "bad\n"), "Exit code 2:\nbad\n", true},
      {mk(1, 0, false, false, ""), "Exit code 1:\n(no output)", true},
      {mk(-1, 9, false, false, ""), "Exit code 137 (killed by signal 9):\n(no output)", true},
      {mk(-1, 9, true, false, "partial"), "Execution timed out after 3 seconds.\npartial", true},
      {mk(-1, 9, false, true, ""), "Execution cancelled.", true},
      {failed, "Execution error: no fork", true},
      {no_jail, "Execution error: the program was not started: bwrap: Creating new namespace failed: Resource "
                "temporarily unavailable", true},
      {mk(0, 0, false, false, "\xFF"), "\xEF\xBF\xBD", false},
  };
  for (const auto& r : rows) {
    auto got = format_run(r.r, 3s);
    EXPECT_EQ(got.text, r.want);
    EXPECT_EQ(got.is_error, r.error) << r.want;
    // a program that never started is "not run", with the reason after "Execution error: "
    const bool never = r.r.failure || !r.r.started;
    EXPECT_EQ(got.not_run.value_or("?"), never ? r.want.substr(17) : "?") << r.want;
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
  auto host = ensure_workspace(root, "s1", isolation::bypass);
  ASSERT_TRUE(host);
  EXPECT_EQ(*host, root + "/.host/s1");
  ASSERT_TRUE(ws);
  EXPECT_EQ(*ws, root + "/s1");
  EXPECT_TRUE(ensure_workspace(root, "s1"));  // idempotent
  EXPECT_FALSE(ensure_workspace(root, "../escape"));
}

TEST(Tools, RegistryTraitsAndSpecs) {
  sandbox::sandbox jail({"/nonexistent/bwrap"});
  auto reg = make_builtin_registry(jail);
  EXPECT_EQ(reg->names(), (std::vector<std::string>{"python", "terminal", "edit_file", "web_search", "render_html"}));  // §2.2 order
  EXPECT_TRUE(reg->find("edit_file")->info().traits.writes_files);
  EXPECT_TRUE(reg->find("python")->info().traits.runs_code);
  EXPECT_TRUE(reg->find("terminal")->info().traits.runs_code);
  EXPECT_FALSE(reg->find("render_html")->info().traits.runs_code);
  EXPECT_TRUE(reg->find("render_html")->info().traits.once_per_answer);
  for (auto* t : reg->all()) EXPECT_EQ(t->info().traits.reads_network, t->info().name == "web_search") << t->info().name;
  // what the risk classifier judges each by (its code argument); only web_search is read-only
  EXPECT_EQ(reg->find("python")->info().traits.code, code_language::python);
  EXPECT_EQ(reg->find("python")->info().traits.code_argument, "code");
  EXPECT_EQ(reg->find("terminal")->info().traits.code, code_language::shell);
  EXPECT_EQ(reg->find("terminal")->info().traits.code_argument, "command");
  EXPECT_EQ(reg->find("render_html")->info().traits.code, code_language::html);
  EXPECT_EQ(reg->find("render_html")->info().traits.code_argument, "code");
  for (auto* t : reg->all()) EXPECT_EQ(t->info().traits.read_only, t->info().name == "web_search") << t->info().name;
  const auto spec = reg->find("python")->info().spec();
  EXPECT_EQ(spec.name, "python");
  EXPECT_EQ(spec.parameters["required"], json::array({"code"}));
  EXPECT_EQ(reg->find("nope"), nullptr);
  // A request's view: the named tools, in registry order; nullopt = all of them.
  auto view = reg->select(std::vector<std::string>{"render_html", "python"});
  ASSERT_EQ(view.size(), 2u);
  EXPECT_EQ(view[0]->info().name, "python");
  EXPECT_EQ(reg->select(std::nullopt).size(), 5u);
  // Without bwrap the code tools say so (the loop refuses before asking); bypass does not need it.
  EXPECT_TRUE(reg->find("python")->unavailable(isolation::sandboxed));
  EXPECT_FALSE(reg->find("python")->unavailable(isolation::bypass));
  EXPECT_FALSE(reg->find("render_html")->unavailable(isolation::sandboxed));
}

TEST(Tools, RenderHtmlAcknowledgesAndChecksItsArguments) {
  auto tool = make_render_html_tool();
  boost::asio::io_context ioc;
  tool_context ctx;
  auto run = [&](json args) {
    auto fut = boost::asio::co_spawn(ioc, tool->run(args, ctx), boost::asio::use_future);
    ioc.restart();
    ioc.run();
    return fut.get();
  };
  auto ok = run({{"code", "<p>hi</p>"}, {"title", "T"}});
  EXPECT_FALSE(ok.is_error);
  EXPECT_EQ(ok.text, "Rendered \"T\" for the user (9 characters of HTML).");
  EXPECT_TRUE(run({{"code", ""}}).is_error);
  EXPECT_TRUE(run({{"title", "x"}}).is_error);
}

}  // namespace
}  // namespace warden::tools
