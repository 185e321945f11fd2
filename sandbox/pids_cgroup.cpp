#include "sandbox/pids_cgroup.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

namespace warden::sandbox {
namespace {

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  f.flush();
  return static_cast<bool>(f);
}

std::string find_root() {
  // v1: a dedicated pids hierarchy
  if (::access("/sys/fs/cgroup/pids/cgroup.procs", W_OK) == 0) return "/sys/fs/cgroup/pids/warden";
  // v2: the unified hierarchy with the pids controller
  std::ifstream c("/sys/fs/cgroup/cgroup.controllers");
  std::string ctl;
  while (c >> ctl) {
    if (ctl == "pids") return "/sys/fs/cgroup/warden";
  }
  return "";
}

const std::string& root() {
  static const std::string r = [] {
    std::string dir = find_root();
    if (dir.empty()) return dir;
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return std::string();
    // Folders of earlier runs whose server is gone (a crash, a kill at shutdown): an empty
    // cgroup folder is removed by rmdir; one still in use refuses (EBUSY).
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
      const std::string name = e.path().filename().string();
      if (name.rfind("run-", 0) != 0) continue;
      const std::string pid = name.substr(4, name.find('-', 4) - 4);
      if (pid == std::to_string(::getpid()) || std::filesystem::exists("/proc/" + pid, ec)) continue;
      ::rmdir(e.path().c_str());
    }
    if (dir.rfind("/sys/fs/cgroup/warden", 0) == 0) {
      // v2: children of warden/ get the pids controller (warden/ itself holds no process)
      write_file(dir + "/cgroup.subtree_control", "+pids");
    }
    return dir;
  }();
  return r;
}

}  // namespace

std::mutex g_stale_mu;
std::vector<std::string> g_stale;  // run folders whose processes were still being released

void sweep_stale() {
  std::lock_guard lk(g_stale_mu);
  std::erase_if(g_stale, [](const std::string& d) { return ::rmdir(d.c_str()) == 0 || errno == ENOENT; });
}

std::string pids_cgroup_root() { return root(); }

std::optional<pids_cgroup> pids_cgroup::create(unsigned max_pids) {
  static std::atomic<unsigned long> seq{0};
  const std::string& r = root();
  if (r.empty()) return std::nullopt;
  sweep_stale();
  const std::string dir = r + "/run-" + std::to_string(::getpid()) + "-" + std::to_string(++seq);
  if (::mkdir(dir.c_str(), 0755) != 0) return std::nullopt;
  if (!write_file(dir + "/pids.max", std::to_string(max_pids))) {
    ::rmdir(dir.c_str());
    return std::nullopt;
  }
  return pids_cgroup(dir, dir + "/cgroup.procs");
}

pids_cgroup::~pids_cgroup() {
  if (dir_.empty()) return;
  // The run's processes are gone, but the kernel may still be releasing them: then the folder is
  // removed by a later create() instead of waiting here (this runs on an io thread).
  if (::rmdir(dir_.c_str()) == 0 || errno == ENOENT) return;
  std::lock_guard lk(g_stale_mu);
  g_stale.push_back(dir_);
}

}  // namespace warden::sandbox
