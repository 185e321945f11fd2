// bwrap — the bubblewrap command line that jails one tool program (pure; table-tested).
//
// What the jail is (facts and measurements: shared/reference/dependencies.md §4):
//   - namespaces: user, pid, net, ipc, uts, cgroup (`--unshare-all`, `--unshare-user`), with the
//     program as uid/gid 65534 inside; no capabilities (`--cap-drop ALL`);
//   - `--die-with-parent` and `--new-session` (no TIOCSTI into the server's terminal);
//   - filesystem: read-only /usr with the merged-usr symlinks (/bin, /sbin, /lib, /lib64), a
//     curated read-only subset of /etc (k_etc_files), a private /dev (read-only: bubblewrap's
//     /dev is a tmpfs the size of half the RAM, writable by the sandbox user) and /proc, private
//     tmpfs /tmp and /dev/shm of fixed sizes (limits.h: k_tmp_bytes, k_shm_bytes), and the
//     session workspace bound read-write at /workspace, the working directory.
//     Nothing else of the host exists inside: not $HOME, not other workspaces, not the server's
//     files;
//   - network: only the loopback of its own namespace (no route to the host's 127.0.0.1);
//   - environment: `--clearenv`, then exactly `env`;
//   - `--seccomp FD` when a filter descriptor is given (seccomp_filter.h);
//   - `--json-status-fd FD` when a status descriptor is given: bubblewrap writes {"child-pid": N}
//     there once it has cloned the jail, and {"exit-code": N} when a program it executed ends, so
//     a jail that failed to start is told apart from a program that exited 1 (spawn.h,
//     started_from_report). bubblewrap does not pass the descriptor on to the program.
// The workspace is passed as an open descriptor (`--bind-fd`, which bwrap closes after the
// mount): the runner opens it before dropping to the sandbox uid, so no parent folder (e.g.
// /root) has to be searchable by it, and the program inherits no way back to the host's tree.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace warden::sandbox {

/// Where the workspace appears inside the jail (the working directory).
inline constexpr const char* k_inner_workspace = "/workspace";
/// HOME and TMPDIR inside the jail: its private tmpfs, gone when the call ends, so no start-up
/// file (a Python user-site .pth, a .bashrc) planted by one call runs in a later one (issue 8).
inline constexpr const char* k_inner_home = "/tmp";
/// The unprivileged uid/gid tools run as, inside; outside it is the server's uid, or this same
/// uid when the server is root (runner.h: a root-mapped jail could still write /proc/sys).
inline constexpr unsigned k_sandbox_uid = 65534;
inline constexpr unsigned k_sandbox_gid = 65534;

/// Parts of /etc the interpreters need (dynamic loader, time zone, user names, Python's config);
/// bound read-only when they exist. Secrets such as /etc/shadow are never bound.
inline constexpr const char* k_etc_files[] = {
    "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/etc/timezone",
    "/etc/alternatives", "/etc/nsswitch.conf", "/etc/passwd", "/etc/group", "/etc/python3",
    "/etc/python3.11", "/etc/mime.types", "/etc/ssl/certs",
};

struct bwrap_options {
  std::string bwrap_path = "/usr/bin/bwrap";
  int workspace_fd = -1;        ///< an inherited O_PATH descriptor of the workspace
  std::string workspace_path;   ///< when set, bound by path instead of the descriptor
  int seccomp_fd = -1;          ///< an inherited descriptor with the BPF program; -1 = none
  int json_status_fd = -1;      ///< an inherited descriptor for bubblewrap's start report; -1 = none
  std::vector<std::string> env;  ///< "NAME=value" pairs for the program
  /// A long-lived service (an MCP stdio server, issue 26) that the entry lets reach the network:
  /// `--share-net` (the host's network namespace) and /etc/resolv.conf, /etc/hosts bound read-only.
  bool share_net = false;
  /// (source, destination) pairs bound read-only (`--ro-bind`): the package a service runs from.
  /// As root the source is a stage folder the child bound the host path onto (spawn.h).
  std::vector<std::pair<std::string, std::string>> ro_binds;
};

/// The whole argv: bwrap, its options, "--", then `program`.
std::vector<std::string> bwrap_argv(const bwrap_options& opts, const std::vector<std::string>& program);

}  // namespace warden::sandbox
