// The prepare part of a run (spawn.h): everything the child needs, as a value, before the fork.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <string_view>

#include "sandbox/bwrap.h"
#include "sandbox/env_scrub.h"
#include "sandbox/seccomp_filter.h"
#include "sandbox/spawn.h"
#include "sandbox/workspace_quota.h"

extern char** environ;

namespace warden::sandbox::detail {

void owned_fd::reset() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

owned_dir::~owned_dir() {
  if (path_.empty()) return;
  if (with_contents_) {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  } else {
    ::rmdir(path_.c_str());
  }
}

namespace {

error failed(const std::string& what, int e) { return make_error(errc::internal, what + std::strerror(e)); }

/// The seccomp program in a memfd (inherited as 3) and the workspace as an O_PATH descriptor
/// (as 4), both opened at 10 or above so the child's dup2 calls cannot clobber one with the other.
result<void> open_jail_descriptors(spawn_plan& p, bool internet) {
  auto bpf = seccomp_program(internet);
  if (!bpf) return bpf.error();
  {
    const owned_fd mfd(::memfd_create("warden-seccomp", MFD_CLOEXEC));
    const owned_fd wfd(::open(p.workdir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (mfd.get() >= 0) p.seccomp_fd = owned_fd(::fcntl(mfd.get(), F_DUPFD_CLOEXEC, 10));
    if (wfd.get() >= 0) p.workspace_fd = owned_fd(::fcntl(wfd.get(), F_DUPFD_CLOEXEC, 10));
  }
  if (p.seccomp_fd.get() < 0 || p.workspace_fd.get() < 0 ||
      ::write(p.seccomp_fd.get(), bpf->data(), bpf->size()) != static_cast<ssize_t>(bpf->size()) ||
      ::lseek(p.seccomp_fd.get(), 0, SEEK_SET) != 0) {
    return failed("could not prepare the sandbox: ", errno);
  }
  return {};
}

constexpr std::string_view k_stage_prefix = "warden-stage-";

/// As root: the empty folder in /tmp that the child bind-mounts the workspace onto,
/// /tmp/warden-stage-<server pid>-XXXXXX.
result<void> make_stage(spawn_plan& p) {
  static std::once_flag swept;
  // Those of a killed server (a warm jail holds one while it waits) go, once per process.
  std::call_once(swept, [] { remove_dead_servers_folders("/tmp", k_stage_prefix); });
  std::string tmpl = "/tmp/" + std::string(k_stage_prefix) + std::to_string(::getpid()) + "-XXXXXX";
  if (!::mkdtemp(tmpl.data())) return failed("could not prepare the sandbox: ", errno);
  ::chmod(tmpl.c_str(), 0711);  // only a mount point: searchable by the sandbox user, not listable
  p.stage = owned_dir(tmpl, false);
  return {};
}

/// As root: one stage folder per read-only path of a service (the child binds the path onto it).
result<void> make_ro_stages(spawn_plan& p, const std::vector<std::string>& paths) {
  for (const auto& path : paths) {
    std::string tmpl = "/tmp/" + std::string(k_stage_prefix) + std::to_string(::getpid()) + "-XXXXXX";
    if (!::mkdtemp(tmpl.data())) return failed("could not prepare the sandbox: ", errno);
    ::chmod(tmpl.c_str(), 0711);
    p.ro_sources.push_back(path);
    p.ro_stages.emplace_back(tmpl, false);
  }
  return {};
}

/// Two pipes of a service, the child's ends at 10 or above (stdin: the child reads; stderr).
result<void> open_service_pipes(spawn_plan& p) {
  int in[2] = {-1, -1};
  int err[2] = {-1, -1};
  if (::pipe2(in, O_CLOEXEC) != 0) return failed("could not create a pipe: ", errno);
  p.in_write = owned_fd(in[1]);
  {
    const owned_fd r(in[0]);
    p.in_read = owned_fd(::fcntl(r.get(), F_DUPFD_CLOEXEC, 10));
  }
  if (::pipe2(err, O_CLOEXEC) != 0) return failed("could not create a pipe: ", errno);
  p.err_read = owned_fd(err[0]);
  {
    const owned_fd w(err[1]);
    p.err_write = owned_fd(::fcntl(w.get(), F_DUPFD_CLOEXEC, 10));
  }
  if (p.in_read.get() < 0 || p.err_write.get() < 0) return failed("could not create a pipe: ", errno);
  return {};
}

result<void> prepare_jail(spawn_plan& p, const std::vector<std::string>& program, const sandbox_policy& policy,
                          const service_request* svc = nullptr) {
  // A cgroup per call, root or not: as root every jail is uid 65534, so RLIMIT_NPROC would be one
  // budget for all of them (one call's fork flood failed every other session's calls).
  if (policy.call_cgroups) {
    if (auto cg = call_cgroup::create({k_max_processes, policy.call_memory_bytes, k_call_cpu_weight})) {
      p.cgroup.emplace(std::move(*cg));
    }
  }
  p.nproc_rlimit = p.as_root && !(p.cgroup && p.cgroup->limits(cgroup_controller::pids));
  if (auto fds = open_jail_descriptors(p, svc && svc->network); !fds) return fds;
  if (p.as_root) {
    if (auto stage = make_stage(p); !stage) return stage;
  }
  bwrap_options bo;
  bo.bwrap_path = policy.bwrap_path;
  bo.workspace_fd = k_workspace_fd;
  bo.workspace_path = p.stage.path();  // as root: the stage (see the child); otherwise the fd
  bo.seccomp_fd = k_seccomp_fd;
  bo.json_status_fd = k_status_fd;
  bo.env = sandbox_env(k_inner_home);
  if (svc) {
    bo.share_net = svc->network;
    bo.env.insert(bo.env.end(), svc->env.begin(), svc->env.end());
    if (p.as_root) {
      if (auto st = make_ro_stages(p, svc->read_only_paths); !st) return st;
      for (std::size_t i = 0; i < p.ro_stages.size(); ++i) bo.ro_binds.emplace_back(p.ro_stages[i].path(), p.ro_sources[i]);
    } else {
      for (const auto& path : svc->read_only_paths) bo.ro_binds.emplace_back(path, path);
    }
  }
  p.argv = bwrap_argv(bo, program);
  return {};
}

result<void> prepare_bypass(spawn_plan& p) {
  // bypass: the server's environment minus its secrets, and only with the server hardened
  // (non-dumpable), or a tool could read what was stripped from /proc/<server>/environ.
  if (::prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 0) {
    return make_error(errc::internal, "could not harden the server (it is still dumpable); refusing bypass execution");
  }
  // HOME (and the temp variables) point to a folder of this call only, removed after it:
  // start-up files planted there (a user-site .pth, a .bashrc) cannot run in a later call.
  char home_tmpl[] = "/tmp/warden-home-XXXXXX";
  if (!::mkdtemp(home_tmpl)) return failed("could not create the call's home folder: ", errno);
  p.home = owned_dir(home_tmpl, true);
  std::vector<std::string> server_env;
  for (char** e = environ; e && *e; ++e) server_env.emplace_back(*e);
  p.env = bypass_env(server_env, p.home.path());
  return {};
}

/// The session's disk quota (workspace_quota.h): the refusal past it, else the file-size limit.
result<void> check_quota(spawn_plan& p, const sandbox_policy& policy) {
  auto limit = file_limit_for(p.workdir, policy);
  if (!limit) return limit.error();
  p.max_file_bytes = *limit;
  return {};
}

/// A warm jail's go channel: a stream socket pair (the server's sends use MSG_NOSIGNAL, so a
/// stub that died cannot raise SIGPIPE in the server); the child's end at 10 or above.
result<void> open_go_channel(spawn_plan& p) {
  int sv[2] = {-1, -1};
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return failed("could not create a socket pair: ", errno);
  p.go_parent = owned_fd(sv[0]);
  const owned_fd c(sv[1]);
  p.go_child = owned_fd(::fcntl(c.get(), F_DUPFD_CLOEXEC, 10));
  if (p.go_child.get() < 0) return failed("could not create a socket pair: ", errno);
  return {};
}

/// The start report's pipe; its write end at 10 or above (like the jail's descriptors).
result<void> open_status_pipe(spawn_plan& p) {
  int fds[2] = {-1, -1};
  if (::pipe2(fds, O_CLOEXEC) != 0) return failed("could not create a pipe: ", errno);
  p.status_read = owned_fd(fds[0]);
  const owned_fd w(fds[1]);
  p.status_write = owned_fd(::fcntl(w.get(), F_DUPFD_CLOEXEC, 10));
  if (p.status_write.get() < 0) return failed("could not create a pipe: ", errno);
  return {};
}

}  // namespace

bool started_from_report(bool jailed, const std::string& report, bool exited) {
  if (!jailed) return report.find('!') == std::string::npos;
  return report.find(exited ? "\"exit-code\"" : "\"child-pid\"") != std::string::npos;
}

rlim_t file_size_cap() {
  rlim_t cap = 0;
  for (const auto& l : k_limits) {
    if (l.resource == RLIMIT_FSIZE) cap = l.value;
  }
  // The child cannot raise its limit past the server's hard one (child_rlimits clamps to it).
  struct rlimit hard {};
  if (::getrlimit(RLIMIT_FSIZE, &hard) == 0 && hard.rlim_max != RLIM_INFINITY) cap = std::min(cap, hard.rlim_max);
  return cap;
}

result<rlim_t> file_limit_for(const std::string& workdir, const sandbox_policy& policy) {
  const rlim_t cap = file_size_cap();
  if (policy.workspace_quota_bytes == 0) return cap;
  const workspace_usage u = measure_workspace(workdir);
  if (auto refusal = quota_refusal(u, policy.workspace_quota_bytes)) return make_error(errc::internal, *refusal);
  return static_cast<rlim_t>(file_size_limit(u, policy.workspace_quota_bytes, cap));
}

result<spawn_plan> prepare(const run_request& req, const sandbox_policy& policy, bool warm) {
  spawn_plan p;
  p.jailed = req.mode == isolation::sandboxed;
  p.as_root = ::geteuid() == 0;
  p.argv = req.argv;
  p.workdir = req.workdir;
  if (warm && p.jailed) {
    p.max_file_bytes = file_size_cap();  // the quota is checked when the call takes the jail
  } else if (auto q = check_quota(p, policy); !q) {
    return q.error();
  }
  int fds[2] = {-1, -1};
  if (::pipe2(fds, O_CLOEXEC) != 0) return failed("could not create a pipe: ", errno);
  p.out_read = owned_fd(fds[0]);
  p.out_write = owned_fd(fds[1]);
  if (auto st = open_status_pipe(p); !st) return st.error();
  const result<void> ok = p.jailed ? prepare_jail(p, req.argv, policy) : prepare_bypass(p);
  if (!ok) return ok.error();
  if (warm && p.jailed) {
    if (auto go = open_go_channel(p); !go) return go.error();
    p.warm = true;
  }
  return p;
}

result<spawn_plan> prepare_service(const service_request& req, const sandbox_policy& policy) {
  spawn_plan p;
  p.service = true;
  p.jailed = req.mode == isolation::sandboxed;
  p.as_root = ::geteuid() == 0;
  p.argv = req.argv;
  p.workdir = req.workdir;
  if (auto q = check_quota(p, policy); !q) return q.error();
  int fds[2] = {-1, -1};
  if (::pipe2(fds, O_CLOEXEC) != 0) return failed("could not create a pipe: ", errno);
  p.out_read = owned_fd(fds[0]);
  p.out_write = owned_fd(fds[1]);
  if (auto st = open_status_pipe(p); !st) return st.error();
  if (auto sp = open_service_pipes(p); !sp) return sp.error();
  const result<void> ok = p.jailed ? prepare_jail(p, req.argv, policy, &req) : prepare_bypass(p);
  if (!ok) return ok.error();
  if (!p.jailed) p.env.insert(p.env.end(), req.env.begin(), req.env.end());
  return p;
}

}  // namespace warden::sandbox::detail
