// Long-lived services in the jail (runner.h service_request; issue 26: MCP stdio servers), with
// the real bubblewrap: stdin/stdout/stderr are three pipes, the host's home and network are out of
// reach, a read-only path is visible and not writable, network: true shares the host's network.
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "sandbox/bwrap.h"
#include "sandbox/runner.h"

namespace warden::sandbox {
namespace {

/// Reads one line (without its \n) within `wait`; "" on EOF or timeout.
std::string read_line(int fd, std::chrono::milliseconds wait = std::chrono::seconds(20)) {
  std::string line;
  const auto until = std::chrono::steady_clock::now() + wait;
  while (std::chrono::steady_clock::now() < until) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    char c = 0;
    const ssize_t n = ::read(fd, &c, 1);
    if (n <= 0) return line;
    if (c == '\n') return line;
    line.push_back(c);
  }
  return line;
}

void write_all(int fd, const std::string& s) {
  ASSERT_EQ(::write(fd, s.data(), s.size()), static_cast<ssize_t>(s.size()));
}

struct service_fixture : ::testing::Test {
  std::string dir;
  sandbox sb{sandbox_policy{}};
  service_fixture() {
    char tmpl[] = "/tmp/warden-svc-test-XXXXXX";
    dir = ::mkdtemp(tmpl);
    hand_over(dir);
  }
  ~service_fixture() override {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  /// A python service that runs each stdin line as an expression and prints repr(result).
  service_request python_eval() {
    service_request r;
    r.argv = {"/usr/bin/python3", "-u", "-c",
              "import sys, os, socket\n"
              "print('ready', file=sys.stderr, flush=True)\n"
              "for line in sys.stdin:\n"
              "    try: out = repr(eval(line))\n"
              "    except Exception as e: out = 'error: ' + type(e).__name__\n"
              "    print(out, flush=True)\n"};
    r.workdir = dir;
    return r;
  }
};

TEST_F(service_fixture, ThreePipesAndTheJail) {
  if (!sb.status().available) GTEST_SKIP() << sb.status().detail;
  auto r = python_eval();
  r.env = {"MCP_TOKEN=given"};
  auto svc = sb.start_service(r);
  ASSERT_TRUE(svc) << svc.error().message;
  EXPECT_EQ(read_line((*svc)->stderr_fd()), "ready");
  write_all((*svc)->stdin_fd(), "1+1\n");
  EXPECT_EQ(read_line((*svc)->stdout_fd()), "2");
  write_all((*svc)->stdin_fd(), "os.getuid()\n");
  EXPECT_EQ(read_line((*svc)->stdout_fd()), "65534");
  write_all((*svc)->stdin_fd(), "os.getcwd()\n");
  EXPECT_EQ(read_line((*svc)->stdout_fd()), "'/workspace'");
  write_all((*svc)->stdin_fd(), "os.environ.get('MCP_TOKEN')\n");
  EXPECT_EQ(read_line((*svc)->stdout_fd()), "'given'");
  write_all((*svc)->stdin_fd(), "os.path.exists('/root')\n");
  EXPECT_EQ(read_line((*svc)->stdout_fd()), "False");
  write_all((*svc)->stdin_fd(), "socket.create_connection(('1.1.1.1', 53), 2)\n");
  EXPECT_EQ(read_line((*svc)->stdout_fd()), "error: OSError");
  EXPECT_FALSE((*svc)->exited());
  (*svc)->kill();
  std::optional<int> status;
  for (int i = 0; i < 200 && !status; ++i) {
    status = (*svc)->exited();
    if (!status) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(status);
}

TEST_F(service_fixture, ReadOnlyPathIsVisibleAndNotWritable) {
  if (!sb.status().available) GTEST_SKIP() << sb.status().detail;
  // A folder only root can reach (like $WARDEN_HOME under /root), bound read-only.
  const std::string root_only = dir + "-home";
  const std::string pkg = root_only + "/pkg";
  std::filesystem::create_directories(pkg + "/inner");
  std::ofstream(pkg + "/inner/index.txt") << "package file\n";
  ::chmod(root_only.c_str(), 0700);
  auto r = python_eval();
  r.read_only_paths = {pkg};
  auto svc = sb.start_service(r);
  ASSERT_TRUE(svc) << svc.error().message;
  write_all((*svc)->stdin_fd(), "open('" + pkg + "/inner/index.txt').read()\n");
  const std::string got = read_line((*svc)->stdout_fd());
  if (::geteuid() == 0) {
    EXPECT_EQ(got, "'package file\\n'");
  } else {
    EXPECT_FALSE(got.empty());
  }
  write_all((*svc)->stdin_fd(), "open('" + pkg + "/inner/new.txt', 'w')\n");
  const std::string wrote = read_line((*svc)->stdout_fd());
  EXPECT_TRUE(wrote == "error: OSError" || wrote == "error: PermissionError") << wrote;
  svc->reset();
  std::error_code ec;
  std::filesystem::remove_all(root_only, ec);
}

TEST_F(service_fixture, DeathIsSeenAsEndOfOutput) {
  if (!sb.status().available) GTEST_SKIP() << sb.status().detail;
  auto r = python_eval();
  auto svc = sb.start_service(r);
  ASSERT_TRUE(svc) << svc.error().message;
  write_all((*svc)->stdin_fd(), "os._exit(3)\n");
  char c = 0;
  pollfd p{(*svc)->stdout_fd(), POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 20000), 1);
  EXPECT_EQ(::read((*svc)->stdout_fd(), &c, 1), 0);  // EOF: the jail is gone
  std::optional<int> status;
  for (int i = 0; i < 500 && !status; ++i) {
    status = (*svc)->exited();
    if (!status) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(status);
  EXPECT_EQ(*status, 3);
}

TEST(BwrapService, ShareNetAndReadOnlyBinds) {
  bwrap_options o;
  o.workspace_fd = 4;
  o.share_net = true;
  o.ro_binds = {{"/tmp/stage-1", "/opt/pkg"}};
  const auto a = bwrap_argv(o, {"/usr/bin/node"});
  ASSERT_GE(a.size(), 3u);
  EXPECT_EQ(a[1], "--unshare-all");
  EXPECT_EQ(a[2], "--share-net");
  const auto ro = std::find(a.begin(), a.end(), "/tmp/stage-1");
  ASSERT_NE(ro, a.end());
  EXPECT_EQ(*(ro - 1), "--ro-bind");
  EXPECT_EQ(*(ro + 1), "/opt/pkg");
  EXPECT_NE(std::find(a.begin(), a.end(), "/etc/resolv.conf"), a.end());
  bwrap_options closed;
  closed.workspace_fd = 4;
  const auto b = bwrap_argv(closed, {"/usr/bin/node"});
  EXPECT_EQ(std::find(b.begin(), b.end(), "--share-net"), b.end());
  EXPECT_EQ(std::find(b.begin(), b.end(), "/etc/resolv.conf"), b.end());
}

}  // namespace
}  // namespace warden::sandbox
