// The call cgroup (call_cgroup.h): where it goes on v1, v2 and hybrid machines (pure, table),
// the files its limits are written to, and — where a writable hierarchy exists — the real folders.
// The workspace quota (workspace_quota.h): the walk and the decisions.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "sandbox/call_cgroup.h"
#include "sandbox/limits.h"
#include "sandbox/workspace_quota.h"

namespace warden::sandbox {
namespace {

// /proc/self/mounts of the machine of dependencies.md §4 (cgroup v1, cgroup2 without controllers)
constexpr const char* k_v1_mounts =
    "tmpfs /sys/fs/cgroup tmpfs rw,relatime,mode=755 0 0\n"
    "cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0\n"
    "cgroup /sys/fs/cgroup/cpuacct cgroup rw,relatime,cpuacct 0 0\n"
    "cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0\n"
    "cgroup /sys/fs/cgroup/pids cgroup rw,relatime,pids 0 0\n"
    "cgroup /sys/fs/cgroup/systemd cgroup rw,relatime,name=systemd 0 0\n"
    "cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0\n";
constexpr const char* k_v1_self =
    "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/b470\n1:cpu:/\n0::/\n";

std::string place_text(const std::vector<cgroup_place>& ps) {
  std::string out;
  for (const auto& p : ps) out += std::string(to_string(p.controller)) + "=" + p.base + (p.v2 ? " v2" : " v1") + "\n";
  return out;
}

TEST(CallCgroup, PlacesOnV1V2AndHybridMachines) {
  struct row {
    const char* name;
    const char* mounts;
    const char* self;
    const char* v2_controllers;
    const char* want;
  } rows[] = {
      {"v1, nested under the server's own memory cgroup; the controller-less cgroup2 is not used", k_v1_mounts,
       k_v1_self, "hugetlb\n",
       "pids=/sys/fs/cgroup/pids/warden v1\nmemory=/sys/fs/cgroup/memory/process_api/b470/warden v1\n"
       "cpu=/sys/fs/cgroup/cpu/warden v1\n"},
      {"v1 under systemd, cpu co-mounted with cpuacct",
       "cgroup /sys/fs/cgroup/cpu,cpuacct cgroup rw,nosuid,cpu,cpuacct 0 0\n"
       "cgroup /sys/fs/cgroup/pids cgroup rw,pids 0 0\n",
       "5:cpu,cpuacct:/system.slice/warden.service\n3:pids:/system.slice/warden.service\n", "",
       "pids=/sys/fs/cgroup/pids/system.slice/warden.service/warden v1\n"
       "cpu=/sys/fs/cgroup/cpu,cpuacct/system.slice/warden.service/warden v1\n"},
      {"v2 only: one folder at the top for every controller",
       "cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid,nodev,noexec,relatime,nsdelegate 0 0\n",
       "0::/user.slice/user-1000.slice/session-2.scope\n", "cpuset cpu io memory hugetlb pids rdma misc\n",
       "pids=/sys/fs/cgroup/warden v2\nmemory=/sys/fs/cgroup/warden v2\ncpu=/sys/fs/cgroup/warden v2\n"},
      {"hybrid: pids on v2, the others on v1",
       "cgroup /sys/fs/cgroup/memory cgroup rw,memory 0 0\ncgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n",
       "4:memory:/\n0::/\n", "pids\n",
       "pids=/sys/fs/cgroup/unified/warden v2\nmemory=/sys/fs/cgroup/memory/warden v1\n"},
      {"no cgroup file system at all", "proc /proc proc rw 0 0\n", "", "", ""},
  };
  for (const auto& r : rows) EXPECT_EQ(place_text(plan_call_cgroups(r.mounts, r.self, r.v2_controllers)), r.want) << r.name;
}

std::string writes_text(cgroup_controller c, bool v2, const call_limits& l) {
  std::string out;
  for (const auto& w : limit_writes(c, v2, l)) out += w.file + "=" + w.value + (w.optional ? "?" : "") + " ";
  return out;
}

TEST(CallCgroup, LimitFilesOfV1AndV2) {
  const call_limits l{512, 256 * k_mib, 100};
  EXPECT_EQ(writes_text(cgroup_controller::pids, false, l), "pids.max=512 ");
  EXPECT_EQ(writes_text(cgroup_controller::pids, true, l), "pids.max=512 ");
  EXPECT_EQ(writes_text(cgroup_controller::memory, false, l),
            "memory.limit_in_bytes=268435456 memory.memsw.limit_in_bytes=268435456? ");
  EXPECT_EQ(writes_text(cgroup_controller::memory, true, l), "memory.max=268435456 memory.swap.max=0? ");
  EXPECT_EQ(writes_text(cgroup_controller::cpu, false, l), "cpu.shares=1024 ");
  EXPECT_EQ(writes_text(cgroup_controller::cpu, true, l), "cpu.weight=100 ");
  EXPECT_EQ(writes_text(cgroup_controller::cpu, false, {0, 0, 1}), "cpu.shares=10 ");
  EXPECT_EQ(writes_text(cgroup_controller::cpu, false, {0, 0, 0}), "");  // 0 = not limited
  EXPECT_EQ(writes_text(cgroup_controller::memory, true, {0, 0, 0}), "");
  EXPECT_EQ(writes_text(cgroup_controller::pids, true, {0, 0, 0}), "");
}

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

TEST(CallCgroup, CreatesTheCallsFoldersWithItsLimitsAndRemovesThem) {
  if (call_cgroup_places().empty()) GTEST_SKIP() << "no writable cgroup hierarchy on this machine (" << (::geteuid() == 0 ? "root" : "not root") << ")";
  std::vector<std::string> dirs;
  {
    auto cg = call_cgroup::create({100, 64 * k_mib, 50});
    ASSERT_TRUE(cg);
    dirs = cg->dirs();
    ASSERT_EQ(cg->procs_paths().size(), dirs.size());
    for (const auto& p : call_cgroup_places()) {
      EXPECT_TRUE(cg->limits(p.controller)) << to_string(p.controller);
      const auto at = std::find_if(dirs.begin(), dirs.end(), [&](const std::string& d) { return d.rfind(p.base + "/run-", 0) == 0; });
      ASSERT_NE(at, dirs.end()) << p.base;
      switch (p.controller) {
        case cgroup_controller::pids: EXPECT_EQ(slurp(*at + "/pids.max"), "100"); break;
        case cgroup_controller::memory:
          EXPECT_EQ(slurp(*at + (p.v2 ? "/memory.max" : "/memory.limit_in_bytes")), std::to_string(64 * k_mib));
          break;
        case cgroup_controller::cpu: EXPECT_EQ(slurp(*at + (p.v2 ? "/cpu.weight" : "/cpu.shares")), p.v2 ? "50" : "512"); break;
      }
    }
    for (const auto& procs : cg->procs_paths()) EXPECT_TRUE(std::filesystem::exists(procs)) << procs;
  }
  for (const auto& d : dirs) EXPECT_FALSE(std::filesystem::exists(d)) << d << " left behind";
  EXPECT_FALSE(call_cgroup_summary().empty());
}

// --- the workspace quota ---------------------------------------------------------------------------

TEST(WorkspaceQuota, RefusalAndFileSizeLimit) {
  workspace_usage u;
  u.bytes = 1100 * k_mib;
  EXPECT_EQ(quota_refusal(u, 1024 * k_mib).value_or(""),
            "the session workspace holds 1100 MiB, over its quota of 1024 MiB (--workspace-quota); no tool call runs "
            "in this session until someone removes files from the session's workspace folder on the server, or use "
            "another session");
  EXPECT_FALSE(quota_refusal(u, 0));          // no quota
  EXPECT_FALSE(quota_refusal(u, 1100 * k_mib));  // at the quota: still runs
  u.truncated = true;
  u.entries = 10;
  EXPECT_NE(quota_refusal(u, 1 << 30).value_or("").find("more than 10 files and folders"), std::string::npos);
  workspace_usage small;
  small.bytes = 1000 * k_mib;
  EXPECT_EQ(file_size_limit(small, 1024 * k_mib, 100 * k_mib), 24 * k_mib);   // what is left
  EXPECT_EQ(file_size_limit(small, 4096 * k_mib, 100 * k_mib), 100 * k_mib);  // the cap
  EXPECT_EQ(file_size_limit(small, 1000 * k_mib, 100 * k_mib), 1 * k_mib);    // at least 1 MiB
  EXPECT_EQ(file_size_limit(small, 0, 100 * k_mib), 100 * k_mib);
}

TEST(WorkspaceQuota, MeasuresAllocatedBytesWithoutFollowingLinksAndStopsAtTheBound) {
  char tmpl[] = "/tmp/warden-quota-XXXXXX";
  const std::string dir = ::mkdtemp(tmpl);
  std::filesystem::create_directories(dir + "/a/b");
  {
    std::ofstream f(dir + "/a/b/data", std::ios::binary);
    f << std::string(3 * k_mib, 'x');
  }
  {
    std::ofstream f(dir + "/sparse");
  }
  std::filesystem::resize_file(dir + "/sparse", 1ull << 34);  // 16 GiB that take no space
  std::filesystem::create_symlink("/usr", dir + "/usr-link");  // not followed
  const auto u = measure_workspace(dir);
  EXPECT_FALSE(u.truncated);
  EXPECT_EQ(u.entries, 6u);  // the folder, a, b, data, sparse, the link
  EXPECT_GE(u.bytes, 3 * k_mib);
  EXPECT_LT(u.bytes, 4 * k_mib);
  const auto bounded = measure_workspace(dir, 3);
  EXPECT_TRUE(bounded.truncated);
  EXPECT_EQ(bounded.entries, 3u);
  // a folder its owner made unreadable is still counted
  std::filesystem::permissions(dir + "/a", std::filesystem::perms::none);
  const auto hidden = measure_workspace(dir);
  EXPECT_GE(hidden.bytes, 3 * k_mib);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace warden::sandbox

namespace warden::sandbox {
namespace {

TEST(DeadServersFolders, OnlyEmptyFoldersOfGoneServersGo) {
  char tmpl[] = "/tmp/warden-dead-XXXXXX";
  const std::filesystem::path dir = ::mkdtemp(tmpl);
  const std::string me = std::to_string(::getpid());
  const std::string gone = "999999999";  // above pid_max: no such process
  for (const std::string& name : std::vector<std::string>{"p-" + me + "-a", "p-" + gone + "-b", "p-abc-c", "p-" + gone + "-d", "q-" + gone + "-e",
                                 "p-" + gone}) {
    std::filesystem::create_directory(dir / name);
  }
  std::ofstream(dir / ("p-" + gone + "-d") / "f").put('x');  // not empty: left
  remove_dead_servers_folders(dir.string(), "p-");
  EXPECT_TRUE(std::filesystem::exists(dir / ("p-" + me + "-a")));   // this server's
  EXPECT_FALSE(std::filesystem::exists(dir / ("p-" + gone + "-b")));  // a gone server's, empty
  EXPECT_TRUE(std::filesystem::exists(dir / "p-abc-c"));              // no pid in its name
  EXPECT_TRUE(std::filesystem::exists(dir / ("p-" + gone + "-d")));   // not empty
  EXPECT_TRUE(std::filesystem::exists(dir / ("q-" + gone + "-e")));   // another prefix
  EXPECT_TRUE(std::filesystem::exists(dir / ("p-" + gone)));          // not the <pid>-* shape
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace warden::sandbox
