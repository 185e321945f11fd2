// confined: the work thread is kept beneath its folder by Landlock and, for a root server, runs
// as the jail's user; the server's own threads keep their credentials and reach.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "tools/beneath.h"
#include "tools/confined.h"
#include "tools/testing/file_fixture.h"

namespace warden::tools {
namespace {

namespace fs = std::filesystem;

class Confined : public testing::file_fixture {
 protected:
  void SetUp() override {
    file_fixture::SetUp();
    fs::create_directories(ws());
    std::ofstream(root_ / "outside.txt") << "keep";
  }
  fs::path ws() const { return root_ / "ws"; }
};

TEST_F(Confined, WorkRunsBeneathTheFolderAndLandlockHoldsItThere) {
  int inside = -1, outside_read = 0, outside_write = 0, outside_errno = 0;
  auto c = run_confined(ws().string(), false, [&](int dir) {
    inside = write_beneath(dir, "a/b.txt", "ok").ok() ? 1 : 0;
    outside_read = ::open((root_ / "outside.txt").c_str(), O_RDONLY | O_CLOEXEC);
    outside_errno = errno;
    outside_write = ::open((root_ / "new.txt").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  });
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(inside, 1);
  EXPECT_EQ(std::ifstream(ws() / "a/b.txt").rdbuf() != nullptr, true);
  if (landlock_abi() == 0) GTEST_SKIP() << "this kernel has no Landlock: only beneath.h's rules hold";
  EXPECT_TRUE(c->landlocked);
  EXPECT_EQ(outside_read, -1);
  EXPECT_EQ(outside_errno, EACCES);
  EXPECT_EQ(outside_write, -1);
  EXPECT_FALSE(fs::exists(root_ / "new.txt"));
  // the calling thread was never restricted
  const int fd = ::open((root_ / "outside.txt").c_str(), O_RDONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0);
  if (fd >= 0) ::close(fd);
}

TEST_F(Confined, ARootServerWritesAsTheJailUserOnThatThreadOnly) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (the jail's uid is the server's otherwise)";
  ASSERT_EQ(::chown(ws().c_str(), 65534, 65534), 0);
  ASSERT_EQ(::chmod(ws().c_str(), 0700), 0);
  long real = -1, effective = -1, fs_uid = -1;
  auto c = run_confined(ws().string(), true, [&](int dir) {
    real = ::getuid();
    effective = ::geteuid();
    fs_uid = ::syscall(SYS_setfsuid, -1);  // -1 changes nothing and returns the current one
    ASSERT_TRUE(write_beneath(dir, "mine.txt", "x").ok());
  });
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_TRUE(c->as_jail_user);
  // real and effective uid stay 0 (no uid-65534 process may signal the thread); the
  // filesystem uid is the jail's
  EXPECT_EQ(real, 0);
  EXPECT_EQ(effective, 0);
  EXPECT_EQ(fs_uid, 65534);
  struct stat st {};
  ASSERT_EQ(::stat((ws() / "mine.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u);
  EXPECT_EQ(st.st_gid, 65534u);
  EXPECT_EQ(::geteuid(), 0u);  // the server's threads are still root
}

TEST_F(Confined, AFolderThatCannotBeOpenedIsAnErrorAndTheWorkDoesNotRun) {
  bool ran = false;
  auto c = run_confined((root_ / "missing").string(), false, [&](int) { ran = true; });
  EXPECT_FALSE(c.ok());
  EXPECT_FALSE(ran);
}

}  // namespace
}  // namespace warden::tools
