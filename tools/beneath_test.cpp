// beneath: reads and writes stay under the folder whatever the path, the links in it, or a
// symlink swapped in while a write runs; writes are atomic and keep the file's mode.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "tools/beneath.h"
#include "tools/testing/file_fixture.h"

namespace warden::tools {
namespace {

namespace fs = std::filesystem;

class Beneath : public testing::file_fixture {
 protected:
  void SetUp() override {
    file_fixture::SetUp();
    fs::create_directories(ws() / "sub");
    fs::create_directories(out());
    dir_ = ::open(ws().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE(dir_, 0);
  }
  void TearDown() override {
    ::close(dir_);
    file_fixture::TearDown();
  }
  fs::path ws() const { return root_ / "ws"; }
  fs::path out() const { return root_ / "outside"; }
  int dir_ = -1;
};

TEST_F(Beneath, WritesReadsAndCreatesFolders) {
  auto missing = read_beneath(dir_, "sub/none.txt", 1024);
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());
  ASSERT_TRUE(write_beneath(dir_, "sub/a.txt", "hello").ok());
  ASSERT_TRUE(write_beneath(dir_, "./new/deeper/b.txt", "x").ok());
  EXPECT_EQ(slurp(ws() / "new/deeper/b.txt"), "x");
  auto got = read_beneath(dir_, "sub//a.txt", 1024);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ(**got, "hello");
  EXPECT_FALSE(read_beneath(dir_, "sub/a.txt", 4).ok());  // over max_bytes
}

TEST_F(Beneath, AWriteReplacesAtomicallyAndKeepsTheMode) {
  put(ws() / "run.sh", "old");
  ::chmod((ws() / "run.sh").c_str(), 0750);
  ASSERT_TRUE(write_beneath(dir_, "run.sh", "new").ok());
  EXPECT_EQ(slurp(ws() / "run.sh"), "new");
  EXPECT_EQ(fs::status(ws() / "run.sh").permissions() & fs::perms::all, static_cast<fs::perms>(0750));
  for (const auto& e : fs::directory_iterator(ws())) {
    EXPECT_EQ(e.path().filename().string().find(".warden-"), std::string::npos) << e.path();  // no temp left
  }
}

TEST_F(Beneath, ARewriteDropsSetuidAndKeepsTheOwnerWhereItMay) {
  put(ws() / "tool", "old");
  ASSERT_EQ(::chmod((ws() / "tool").c_str(), 04755), 0);
  const bool root = ::geteuid() == 0;
  if (root) {
    ASSERT_EQ(::chown((ws() / "tool").c_str(), 1000, 1000), 0);
    ASSERT_EQ(::chmod((ws() / "tool").c_str(), 04755), 0);  // chown cleared the bit
  }
  ASSERT_TRUE(write_beneath(dir_, "tool", "new").ok());
  struct stat st {};
  ASSERT_EQ(::stat((ws() / "tool").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);  // new content is never setuid
  if (root) {
    EXPECT_EQ(st.st_uid, 1000u);
    EXPECT_EQ(st.st_gid, 1000u);
  }
}

TEST_F(Beneath, AWriteNamingTheVersionItReadIsRefusedWhenAnotherProgramWroteInBetween) {
  put(ws() / "f.txt", "one");
  file_version v;
  auto got = read_beneath(dir_, "f.txt", 1024, &v);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_TRUE(v.exists);
  fs::path other = ws() / "other";
  put(other, "two!");  // another program replaces the file (a new inode, a new size)
  fs::rename(other, ws() / "f.txt");
  auto w = write_beneath(dir_, "f.txt", "mine", &v);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.error().message.find("changed after it was read"), std::string::npos);
  EXPECT_EQ(slurp(ws() / "f.txt"), "two!");  // its change kept
  file_version none;
  ASSERT_TRUE(read_beneath(dir_, "new.txt", 1024, &none).ok());
  EXPECT_FALSE(none.exists);
  put(ws() / "new.txt", "theirs");  // created in between
  EXPECT_FALSE(write_beneath(dir_, "new.txt", "mine", &none).ok());
  ASSERT_TRUE(read_beneath(dir_, "f.txt", 1024, &v).ok());
  EXPECT_TRUE(write_beneath(dir_, "f.txt", "mine", &v).ok());  // unchanged since read: written
}

TEST_F(Beneath, OddPathsAreRefused) {
  std::string deep;
  for (int i = 0; i < 65; ++i) deep += "d/";
  deep += "f";
  for (const std::string& rel : {std::string("a.txt/"), std::string("line\nbreak.txt"), std::string("tab\there"),
                                 std::string(4097, 'x'), deep}) {
    auto w = write_beneath(dir_, rel, "x");
    EXPECT_FALSE(w.ok()) << rel.substr(0, 40);
  }
  EXPECT_FALSE(fs::exists(ws() / "d"));
  EXPECT_TRUE(write_beneath(dir_, std::string(255, 'y'), "x").ok());  // long but fine
}

TEST_F(Beneath, EscapesAreRefused) {
  // Every way out points at decoys in the test's own folder, never at the machine's /etc: were a
  // refusal ever to break, the test would write there, not over a system file.
  put(out() / "secret", "s");
  put(out() / "passwd", "p");
  fs::create_symlink(out(), ws() / "etc");                  // a folder link out
  fs::create_symlink(out() / "secret", ws() / "secret");    // a file link out
  fs::create_symlink("/proc/self/root", ws() / "root");     // through /proc
  fs::create_hard_link(out() / "secret", ws() / "hard");    // a hard link to a file outside
  ASSERT_EQ(::mkfifo((ws() / "fifo").c_str(), 0600), 0);   // would block a plain open
  const std::string via_proc = "root" + (out() / "passwd").string();
  const std::string absolute = (out() / "passwd").string();
  const std::string bad[] = {"../outside/secret", "sub/../../outside/secret", absolute, "etc/passwd", "secret",
                             via_proc, "hard", "fifo", "", ".", std::string("a\0b", 3)};
  for (const std::string& path : bad) {
    const std::string& rel = path;
    EXPECT_FALSE(read_beneath(dir_, path, 1 << 20).ok()) << rel;
    auto w = write_beneath(dir_, path, "pwned");
    EXPECT_FALSE(w.ok()) << rel;
    if (!w.ok()) {
      EXPECT_EQ(w.error().code, errc::invalid_request) << rel << ": " << w.error().message;
    }
  }
  auto through = write_beneath(dir_, "etc/passwd", "x");  // a symlink in the middle is named as one
  ASSERT_FALSE(through.ok());
  EXPECT_NE(through.error().message.find("symbolic link ('etc')"), std::string::npos) << through.error().message;
  EXPECT_EQ(slurp(out() / "secret"), "s");
  EXPECT_EQ(slurp(out() / "passwd"), "p");
  EXPECT_TRUE(fs::is_symlink(ws() / "secret"));  // not replaced either
}

TEST_F(Beneath, ASymlinkSwappedInWhileWritingNeverLeadsOutside) {
  // `d` flips between a real folder and a symlink to the outside folder as fast as it can, while
  // writes to d/f run: each write lands in the real folder or is refused, never outside.
  fs::create_directories(ws() / "d");
  fs::create_symlink(out(), ws() / "link");
  std::atomic<bool> stop{false};
  std::atomic<long> swaps{0};
  std::thread flipper([&] {
    const std::string d = (ws() / "d").string(), link = (ws() / "link").string();
    while (!stop) {  // d: folder ⇄ symlink to the outside, always there
      if (::renameat2(AT_FDCWD, d.c_str(), AT_FDCWD, link.c_str(), RENAME_EXCHANGE) == 0) ++swaps;
    }
  });
  while (swaps.load() == 0) std::this_thread::yield();  // the flipper is running before the writes start
  for (int i = 0; i < 2000; ++i) (void)write_beneath(dir_, "d/f", "x");  // lands in the folder or is refused
  stop = true;
  flipper.join();
  EXPECT_FALSE(fs::exists(out() / "f"));  // (how often each side won depends on the machine: not asserted)
}

}  // namespace
}  // namespace warden::tools
