#include "sandbox/call_cgroup.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

namespace warden::sandbox {
namespace {

constexpr cgroup_controller k_controllers[] = {cgroup_controller::pids, cgroup_controller::memory,
                                               cgroup_controller::cpu};

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  while (true) {
    const auto at = s.find(sep);
    out.push_back(s.substr(0, at));
    if (at == std::string_view::npos) break;
    s.remove_prefix(at + 1);
  }
  return out;
}

bool has_item(std::string_view list, char sep, std::string_view item) {
  for (auto x : split(list, sep)) {
    if (x == item) return true;
  }
  return false;
}

struct mount_line {
  std::string_view point, type, options;
};

std::vector<mount_line> cgroup_mounts(std::string_view mounts) {
  std::vector<mount_line> out;
  for (auto line : split(mounts, '\n')) {
    const auto f = split(line, ' ');  // device, mount point, type, options, dump, pass
    if (f.size() < 4 || (f[2] != "cgroup" && f[2] != "cgroup2")) continue;
    out.push_back({f[1], f[2], f[3]});
  }
  return out;
}

/// The server's own cgroup in the v1 hierarchy that has `ctl` ("/" when not listed).
std::string own_v1_path(std::string_view self_cgroup, std::string_view ctl) {
  for (auto line : split(self_cgroup, '\n')) {
    const auto first = line.find(':');
    const auto second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    if (has_item(line.substr(first + 1, second - first - 1), ',', ctl)) return std::string(line.substr(second + 1));
  }
  return "/";
}

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

bool write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  f.flush();
  return static_cast<bool>(f);
}


/// Makes `p.base` usable: the folder, write access, and on v2 the controller enabled for it and
/// its children. False when it cannot be.
bool set_up(cgroup_place& p) {
  const std::string& mount = p.mount;
  const std::string parent = std::filesystem::path(p.base).parent_path().string();
  std::error_code ec;
  // v1 in a container without its own cgroup namespace: the own path may not exist under a mount
  // of the container's cgroup folder; its top is the container's then.
  if (!std::filesystem::is_directory(parent, ec)) p.base = mount + "/warden";
  if (::mkdir(p.base.c_str(), 0755) != 0 && errno != EEXIST) return false;
  if (::access(p.base.c_str(), W_OK) != 0) return false;
  remove_dead_servers_folders(p.base, "run-");  // an empty cgroup folder goes; one in use refuses (EBUSY)
  if (!p.v2) return true;
  const std::string ctl = to_string(p.controller);
  auto enable = [&ctl](const std::string& dir) {
    if (has_item(read_text(dir + "/cgroup.subtree_control"), ' ', ctl)) return true;
    (void)write_text(dir + "/cgroup.subtree_control", "+" + ctl);
    std::string now = read_text(dir + "/cgroup.subtree_control");
    while (!now.empty() && now.back() == '\n') now.pop_back();
    return has_item(now, ' ', ctl);
  };
  return enable(mount) && enable(p.base);
}

void sweep_stale();

struct places_state {
  std::vector<cgroup_place> places;
  places_state() = default;
  places_state(places_state&&) = default;
  places_state& operator=(places_state&&) = delete;
  /// At exit: the folders of this server's calls that were still being released, then each
  /// warden/ folder if no other server uses it (a cgroup with a child cgroup cannot be removed,
  /// which would stop whoever manages the server's own cgroup from removing it).
  ~places_state() {
    sweep_stale();
    for (const auto& p : places) ::rmdir(p.base.c_str());
  }
};

const places_state& state() {
  static const places_state s = [] {
    places_state st;
    const std::string mounts = read_text("/proc/self/mounts");
    std::string v2_root;
    for (const auto& m : cgroup_mounts(mounts)) {
      if (m.type == "cgroup2" && v2_root.empty()) v2_root = std::string(m.point);
    }
    const std::string v2_ctl = v2_root.empty() ? "" : read_text(v2_root + "/cgroup.controllers");
    auto planned = plan_call_cgroups(mounts, read_text("/proc/self/cgroup"), v2_ctl);
    for (auto& p : planned) {
      if (set_up(p)) st.places.push_back(std::move(p));
    }
    return st;
  }();
  return s;
}

std::mutex g_stale_mu;
std::vector<std::string> g_stale;  // call folders whose processes were still being released

void sweep_stale() {
  std::lock_guard lk(g_stale_mu);
  std::erase_if(g_stale, [](const std::string& d) { return ::rmdir(d.c_str()) == 0 || errno == ENOENT; });
}

}  // namespace

const char* to_string(cgroup_controller c) noexcept {
  switch (c) {
    case cgroup_controller::pids: return "pids";
    case cgroup_controller::memory: return "memory";
    case cgroup_controller::cpu: return "cpu";
  }
  return "?";
}

std::vector<cgroup_place> plan_call_cgroups(std::string_view mounts, std::string_view self_cgroup,
                                            std::string_view v2_root_controllers) {
  std::vector<cgroup_place> out;
  const auto ms = cgroup_mounts(mounts);
  std::string v2_mount;
  for (const auto& m : ms) {
    if (m.type == "cgroup2" && v2_mount.empty()) v2_mount = std::string(m.point);
  }
  std::string v2_ctl(v2_root_controllers);
  while (!v2_ctl.empty() && (v2_ctl.back() == '\n' || v2_ctl.back() == ' ')) v2_ctl.pop_back();
  for (cgroup_controller c : k_controllers) {
    const std::string ctl = to_string(c);
    if (!v2_mount.empty() && has_item(v2_ctl, ' ', ctl)) {
      out.push_back({c, v2_mount + "/warden", true, v2_mount});
      continue;
    }
    for (const auto& m : ms) {
      if (m.type != "cgroup" || !has_item(m.options, ',', ctl)) continue;
      std::string own = own_v1_path(self_cgroup, ctl);
      if (own == "/") own.clear();
      out.push_back({c, std::string(m.point) + own + "/warden", false, std::string(m.point)});
      break;
    }
  }
  return out;
}

std::vector<cgroup_write> limit_writes(cgroup_controller c, bool v2, const call_limits& l) {
  switch (c) {
    case cgroup_controller::pids:
      if (l.max_processes == 0) return {};
      return {{"pids.max", std::to_string(l.max_processes)}};
    case cgroup_controller::memory: {
      if (l.memory_bytes == 0) return {};
      const std::string v = std::to_string(l.memory_bytes);
      // No swap beyond the limit: v1 counts memory+swap in memsw (it must be >= the memory limit,
      // so it is written second); v2 limits swap on its own.
      if (v2) return {{"memory.max", v}, {"memory.swap.max", "0", true}};
      return {{"memory.limit_in_bytes", v}, {"memory.memsw.limit_in_bytes", v, true}};
    }
    case cgroup_controller::cpu:
      if (l.cpu_weight == 0) return {};
      if (v2) return {{"cpu.weight", std::to_string(l.cpu_weight)}};
      return {{"cpu.shares", std::to_string(std::max(2u, l.cpu_weight * 1024u / 100u))}};
  }
  return {};
}

const std::vector<cgroup_place>& call_cgroup_places() { return state().places; }

std::string call_cgroup_summary() {
  std::string out;
  for (const auto& p : call_cgroup_places()) {
    if (!out.empty()) out += ", ";
    out += std::string(to_string(p.controller)) + " at " + p.base + (p.v2 ? " (v2)" : " (v1)");
  }
  return out;
}

std::optional<call_cgroup> call_cgroup::create(const call_limits& limits) {
  static std::atomic<unsigned long> seq{0};
  const auto& places = call_cgroup_places();
  if (places.empty()) return std::nullopt;
  sweep_stale();
  const std::string name = "/run-" + std::to_string(::getpid()) + "-" + std::to_string(++seq);
  call_cgroup cg;
  for (std::size_t i = 0; i < places.size(); ++i) {
    const std::string dir = places[i].base + name;
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) continue;  // EEXIST: a v2 place already made it
    bool ok = true;
    for (const auto& w : limit_writes(places[i].controller, places[i].v2, limits)) {
      const std::string file = dir + "/" + w.file;
      if (w.optional && ::access(file.c_str(), F_OK) != 0) continue;
      if (!write_text(file, w.value)) ok = false;
    }
    const bool known = std::find(cg.dirs_.begin(), cg.dirs_.end(), dir) != cg.dirs_.end();
    if (!ok) {
      if (!known) ::rmdir(dir.c_str());
      continue;
    }
    if (!known) {
      cg.dirs_.push_back(dir);
      cg.procs_.push_back(dir + "/cgroup.procs");
    }
    cg.held_.push_back(places[i].controller);
    if (places[i].controller == cgroup_controller::memory) {
      cg.memory_dir_ = dir;
      cg.memory_v2_ = places[i].v2;
      cg.memory_bytes_ = limits.memory_bytes;
    }
  }
  if (cg.dirs_.empty()) return std::nullopt;
  return cg;
}

call_cgroup::call_cgroup(call_cgroup&& o) noexcept
    : memory_bytes_(o.memory_bytes_),
      memory_dir_(std::move(o.memory_dir_)),
      memory_v2_(o.memory_v2_),
      dirs_(std::move(o.dirs_)),
      procs_(std::move(o.procs_)),
      held_(std::move(o.held_)) {
  o.dirs_.clear();
}

std::uint64_t call_cgroup::memory_kills() const {
  if (memory_dir_.empty()) return 0;
  std::ifstream in(memory_dir_ + (memory_v2_ ? "/memory.events" : "/memory.oom_control"));
  std::string key;
  std::uint64_t value = 0;
  while (in >> key >> value) {
    if (key == "oom_kill") return value;
  }
  return 0;
}

bool call_cgroup::limits(cgroup_controller c) const {
  return std::find(held_.begin(), held_.end(), c) != held_.end();
}

call_cgroup::~call_cgroup() {
  for (const auto& d : dirs_) {
    // The call's processes are gone, but the kernel may still be releasing them: then the folder
    // is removed by a later create() instead of waiting here (this runs on an io thread).
    if (::rmdir(d.c_str()) == 0 || errno == ENOENT) continue;
    std::lock_guard lk(g_stale_mu);
    g_stale.push_back(d);
  }
}

void remove_dead_servers_folders(const std::string& dir, std::string_view prefix) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string rest = name.substr(prefix.size());
    const std::string pid = rest.substr(0, rest.find('-'));
    if (pid.empty() || pid.size() == rest.size() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (pid == std::to_string(::getpid()) || std::filesystem::exists("/proc/" + pid, ec)) continue;
    ::rmdir(e.path().c_str());
  }
}

}  // namespace warden::sandbox
