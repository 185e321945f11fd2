// edit_file as the loop runs it: arguments checked, the edit made in the workspace (jailed: by
// the jail's user, on a confined thread, through the pool), the diff in the result, escapes
// refused, and under bypass an absolute path written as given.
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <filesystem>
#include <fstream>
#include <future>
#include <vector>

#include <gtest/gtest.h>

#include "common/blocking_pool.h"
#include "tools/builtins.h"
#include "tools/edit_text.h"
#include "tools/testing/file_fixture.h"

namespace warden::tools {
namespace {

namespace fs = std::filesystem;

class EditFileTool : public testing::file_fixture {
 protected:
  void SetUp() override {
    file_fixture::SetUp();
    fs::create_directories(root_ / "ws");
    ctx_.workspace = (root_ / "ws").string();
  }
  tool_result run(json args) {
    auto fut = boost::asio::co_spawn(ioc_, tool_->run(args, ctx_), boost::asio::use_future);
    ioc_.restart();
    ioc_.run();
    return fut.get();
  }
  blocking_pool pool_{4};  // several edits at once, as the server's pool allows
  std::unique_ptr<tool> tool_ = make_edit_file_tool(&pool_);
  boost::asio::io_context ioc_;
  tool_context ctx_;
};

TEST_F(EditFileTool, DeclaresItWritesFilesAndRunsNoCode) {
  const auto& t = tool_->info().traits;
  EXPECT_EQ(tool_->info().name, "edit_file");
  EXPECT_TRUE(t.writes_files);
  EXPECT_FALSE(t.runs_code || t.read_only || t.reads_network);
  EXPECT_EQ(t.code, code_language::none);
}

TEST_F(EditFileTool, CreatesEditsAndShowsTheDiff) {
  auto made = run({{"path", "/workspace/src/app.py"}, {"old_string", ""}, {"new_string", "x = 1\ny = 2\n"}});
  ASSERT_FALSE(made.is_error) << made.text;
  EXPECT_EQ(made.text.rfind("Created /workspace/src/app.py (12 bytes).\n--- a/src/app.py", 0), 0u) << made.text;
  auto edited = run({{"path", "src/app.py"}, {"old_string", "y = 2"}, {"new_string", "y = 3"}});
  ASSERT_FALSE(edited.is_error) << edited.text;
  EXPECT_NE(edited.text.find("replaced 1 occurrence.\n"), std::string::npos);
  EXPECT_NE(edited.text.find("-y = 2\n+y = 3\n"), std::string::npos) << edited.text;
  EXPECT_EQ(slurp(root_ / "ws/src/app.py"), "x = 1\ny = 3\n");
  if (::geteuid() == 0) {
    struct stat st {};
    ASSERT_EQ(::stat((root_ / "ws/src/app.py").c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, 65534u);  // written by the jail's user
  }
}

TEST_F(EditFileTool, BadArgumentsAndEscapesAreErrorsForTheModel) {
  std::ofstream(root_ / "secret") << "s";
  fs::create_symlink(root_ / "secret", root_ / "ws/link");
  const json cases[] = {
      {{"old_string", ""}, {"new_string", "x"}},
      {{"path", ""}, {"old_string", ""}, {"new_string", "x"}},
      {{"path", "a"}, {"old_string", 1}, {"new_string", "x"}},
      {{"path", "a"}, {"old_string", ""}, {"new_string", "x"}, {"replace_all", "yes"}},
      {{"path", "../secret"}, {"old_string", "s"}, {"new_string", "p"}},
      {{"path", (root_ / "secret").string()}, {"old_string", "s"}, {"new_string", "p"}},  // absolute: a decoy
      {{"path", "link"}, {"old_string", "s"}, {"new_string", "p"}},
      {{"path", "none.txt"}, {"old_string", "a"}, {"new_string", "b"}},
  };
  for (const auto& c : cases) {
    auto r = run(c);
    EXPECT_TRUE(r.is_error) << c.dump();
    EXPECT_EQ(r.text.rfind("Error: ", 0), 0u) << r.text;
  }
  EXPECT_EQ(slurp(root_ / "secret"), "s");
}

TEST_F(EditFileTool, ConcurrentEditsOfOneFileAllLand) {
  std::string file;
  for (int i = 0; i < 40; ++i) file += "line" + std::to_string(100 + i) + "\n";
  std::ofstream(root_ / "ws/shared.txt") << file;
  std::vector<json> args(40);  // run() takes its arguments by reference: they outlive the runs
  std::vector<std::future<tool_result>> runs;
  for (int i = 0; i < 40; ++i) {
    const std::string n = std::to_string(100 + i);
    args[static_cast<std::size_t>(i)] = {{"path", "shared.txt"}, {"old_string", "line" + n + "\n"},
                                         {"new_string", "EDIT" + n + "\n"}};
    runs.push_back(boost::asio::co_spawn(ioc_, tool_->run(args[static_cast<std::size_t>(i)], ctx_), boost::asio::use_future));
  }
  ioc_.restart();
  ioc_.run();
  for (auto& r : runs) EXPECT_FALSE(r.get().is_error);
  const std::string got = slurp(root_ / "ws/shared.txt");
  std::size_t edits = 0;
  for (std::size_t p = got.find("EDIT"); p != std::string::npos; p = got.find("EDIT", p + 1)) ++edits;
  EXPECT_EQ(edits, 40u) << got;  // none lost: each edit read the file the one before wrote
}

TEST_F(EditFileTool, AWorkspaceOverItsQuotaIsNotEdited) {
  auto small = make_edit_file_tool(&pool_, 64 * 1024);  // 64 KiB
  put(root_ / "ws/big.bin", std::string(200 * 1024, 'x'));
  const json args = {{"path", "a.txt"}, {"old_string", ""}, {"new_string", "x"}};  // outlives the run
  auto fut = boost::asio::co_spawn(ioc_, small->run(args, ctx_), boost::asio::use_future);
  ioc_.restart();
  ioc_.run();
  const auto r = fut.get();
  EXPECT_TRUE(r.is_error);
  EXPECT_NE(r.text.find("over its quota"), std::string::npos) << r.text;
  EXPECT_FALSE(fs::exists(root_ / "ws/a.txt"));
}

TEST_F(EditFileTool, UnderBypassAnAbsolutePathIsTakenAsWrittenAndTheResultSaysWhere) {
  ctx_.mode = isolation::bypass;
  const std::string target = (root_ / "elsewhere.txt").string();
  auto r = run({{"path", target}, {"old_string", ""}, {"new_string", "hi"}});
  ASSERT_FALSE(r.is_error) << r.text;
  EXPECT_EQ(slurp(target), "hi");
  EXPECT_NE(r.text.find("Created " + target), std::string::npos) << r.text;
  auto rel = run({{"path", "here.txt"}, {"old_string", ""}, {"new_string", "h"}});
  ASSERT_FALSE(rel.is_error) << rel.text;
  EXPECT_NE(rel.text.find("Created " + ctx_.workspace + "/here.txt"), std::string::npos) << rel.text;
}

}  // namespace
}  // namespace warden::tools
