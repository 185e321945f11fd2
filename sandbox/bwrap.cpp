#include "sandbox/bwrap.h"

#include "sandbox/limits.h"

namespace warden::sandbox {

std::vector<std::string> bwrap_argv(const bwrap_options& o, const std::vector<std::string>& program) {
  std::vector<std::string> a = {
      o.bwrap_path,
      "--unshare-all",  // pid, net, ipc, uts, cgroup (and user when possible)
      "--unshare-user",  // always: as root without it the program keeps every capability
      "--uid", std::to_string(k_sandbox_uid),
      "--gid", std::to_string(k_sandbox_gid),
      "--hostname", "sandbox",
      "--die-with-parent",
      "--new-session",
      "--cap-drop", "ALL",
      "--ro-bind", "/usr", "/usr",
      "--symlink", "usr/bin", "/bin",
      "--symlink", "usr/sbin", "/sbin",
      "--symlink", "usr/lib", "/lib",
      "--symlink", "usr/lib64", "/lib64",
  };
  if (o.share_net) a.insert(a.begin() + 2, "--share-net");  // after --unshare-all: it wins
  for (const char* f : k_etc_files) {
    a.insert(a.end(), {"--ro-bind-try", f, f});
  }
  if (o.share_net) {
    for (const char* f : {"/etc/resolv.conf", "/etc/hosts"}) a.insert(a.end(), {"--ro-bind-try", f, f});
  }
  a.insert(a.end(), {
                        "--dev", "/dev",
                        "--proc", "/proc",
                        "--size", std::to_string(k_tmp_bytes), "--tmpfs", "/tmp",
                        "--size", std::to_string(k_shm_bytes), "--tmpfs", "/dev/shm",
                        "--remount-ro", "/dev",  // its own tmpfs; /dev/null and the others stay usable
                        o.workspace_path.empty() ? "--bind-fd" : "--bind",
                        o.workspace_path.empty() ? std::to_string(o.workspace_fd) : o.workspace_path,
                        k_inner_workspace,
                    });
  for (const auto& [from, to] : o.ro_binds) a.insert(a.end(), {"--ro-bind", from, to});
  a.insert(a.end(), {
                        "--remount-ro", "/",  // the jail's own root (/etc, the symlinks) is read-only too
                        "--chdir", k_inner_workspace,
                        "--clearenv",
                    });
  for (const auto& kv : o.env) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    a.insert(a.end(), {"--setenv", kv.substr(0, eq), kv.substr(eq + 1)});
  }
  if (o.seccomp_fd >= 0) a.insert(a.end(), {"--seccomp", std::to_string(o.seccomp_fd)});
  if (o.json_status_fd >= 0) a.insert(a.end(), {"--json-status-fd", std::to_string(o.json_status_fd)});
  a.push_back("--");
  a.insert(a.end(), program.begin(), program.end());
  return a;
}

}  // namespace warden::sandbox
