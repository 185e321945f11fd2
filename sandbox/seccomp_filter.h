// seccomp_filter — the system calls a sandboxed tool may not make (libseccomp; loaded by
// bubblewrap with `--seccomp FD` just before it starts the program).
//
// Default: allow. Each rule answers EPERM (ENOSYS for clone3, so libc falls back to clone, which
// is then checked) and has its reason in k_seccomp_rules. The namespaces already isolate most of
// this; the filter removes the kernel attack surface a python or bash program never needs.
// Errors: errc::internal when libseccomp cannot build or export the filter.
// Thread-safety: seccomp_program() builds once (thread-safe static) and returns the same bytes.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"

namespace warden::sandbox {

struct seccomp_rule {
  const char* syscall;
  const char* why;
};

/// Syscalls refused outright.
inline constexpr seccomp_rule k_seccomp_rules[] = {
    {"ptrace", "inspect or control other processes"},
    {"process_vm_readv", "read another process's memory"},
    {"process_vm_writev", "write another process's memory"},
    {"mount", "change the filesystem view"},
    {"umount2", "change the filesystem view"},
    {"pivot_root", "change the filesystem view"},
    {"move_mount", "change the filesystem view (new mount API)"},
    {"open_tree", "change the filesystem view (new mount API)"},
    {"fsopen", "change the filesystem view (new mount API)"},
    {"fsconfig", "change the filesystem view (new mount API)"},
    {"fsmount", "change the filesystem view (new mount API)"},
    {"fspick", "change the filesystem view (new mount API)"},
    {"unshare", "new namespaces: a nested user namespace regains capabilities inside it"},
    {"setns", "join other namespaces"},
    {"keyctl", "kernel keyring: shared secrets of the user"},
    {"add_key", "kernel keyring"},
    {"request_key", "kernel keyring"},
    {"bpf", "load kernel programs"},
    {"perf_event_open", "kernel performance counters: side channels"},
    {"userfaultfd", "a common kernel-exploit primitive"},
    {"io_uring_setup", "large kernel attack surface; not used by python or bash"},
    {"io_uring_enter", "large kernel attack surface"},
    {"io_uring_register", "large kernel attack surface"},
    {"kexec_load", "replace the kernel"},
    {"kexec_file_load", "replace the kernel"},
    {"init_module", "load kernel modules"},
    {"finit_module", "load kernel modules"},
    {"delete_module", "unload kernel modules"},
    {"reboot", "reboot the machine"},
    {"swapon", "system swap"},
    {"swapoff", "system swap"},
    {"acct", "process accounting"},
    {"quotactl", "disk quotas"},
    {"name_to_handle_at", "open files by handle, around path checks"},
    {"open_by_handle_at", "open files by handle, around path checks"},
    {"personality", "turn off address-space randomization"},
};

/// The only socket families a tool may create (socket and socketpair): AF_UNIX and AF_NETLINK
/// (interface listings). Everything else — internet, packet, and AF_VSOCK, which is not scoped by
/// the network namespace and reaches a VM's host — answers EAFNOSUPPORT. The family is compared
/// on its low 32 bits, as the kernel reads it.
inline constexpr int k_allowed_socket_families[] = {1 /*AF_UNIX*/, 16 /*AF_NETLINK*/};

/// With `internet` (a service whose entry says `network: true`, runner.h service_request) AF_INET
/// and AF_INET6 are allowed as well; AF_VSOCK, packet and the rest stay refused.
inline constexpr int k_internet_socket_families[] = {2 /*AF_INET*/, 10 /*AF_INET6*/};

/// The exported BPF program (for `bwrap --seccomp`).
result<std::string> seccomp_program(bool internet = false);

}  // namespace warden::sandbox
