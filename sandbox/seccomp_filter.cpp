#include "sandbox/seccomp_filter.h"

#include <linux/sched.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <memory>

namespace warden::sandbox {
namespace {

result<std::string> build(bool internet) {
  std::unique_ptr<std::remove_pointer_t<scmp_filter_ctx>, void (*)(scmp_filter_ctx)> ctx(seccomp_init(SCMP_ACT_ALLOW),
                                                                                         seccomp_release);
  if (!ctx) return make_error(errc::internal, "seccomp_init failed");
  auto fail = [](const char* what, int rc) {
    return make_error(errc::internal, std::string("seccomp: ") + what + ": " + std::strerror(-rc));
  };
  for (const auto& r : k_seccomp_rules) {
    const int nr = seccomp_syscall_resolve_name(r.syscall);
    if (nr == __NR_SCMP_ERROR) continue;  // not on this architecture
    if (int rc = seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(EPERM), nr, 0); rc < 0) return fail(r.syscall, rc);
  }
  // socket(): only the allowed families. The kernel reads the family as a 32-bit int, so the
  // compare masks the upper half (a family of 2 | 1<<32 is still AF_INET).
  for (int fam = 0; fam < 64; ++fam) {
    if (std::find(std::begin(k_allowed_socket_families), std::end(k_allowed_socket_families), fam) !=
        std::end(k_allowed_socket_families)) {
      continue;
    }
    if (internet && std::find(std::begin(k_internet_socket_families), std::end(k_internet_socket_families), fam) !=
                        std::end(k_internet_socket_families)) {
      continue;
    }
    for (int sc : {SCMP_SYS(socket), SCMP_SYS(socketpair)}) {
      if (int rc = seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(EAFNOSUPPORT), sc, 1,
                                    SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffULL, static_cast<scmp_datum_t>(fam)));
          rc < 0) {
        return fail("socket", rc);
      }
    }
  }
  // (families of 64 and above do not exist: the kernel refuses them itself)
  // clone with a namespace flag is unshare by another name: one rule per flag, since a rule
  // matches (flags & mask) == value.
  for (scmp_datum_t flag : {scmp_datum_t{CLONE_NEWUSER}, scmp_datum_t{CLONE_NEWNS}, scmp_datum_t{CLONE_NEWNET},
                            scmp_datum_t{CLONE_NEWPID}, scmp_datum_t{CLONE_NEWIPC}, scmp_datum_t{CLONE_NEWUTS},
                            scmp_datum_t{CLONE_NEWCGROUP}}) {
    if (int rc = seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                                  SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag));
        rc < 0) {
      return fail("clone", rc);
    }
  }
  // clone3 passes its flags in memory, which seccomp cannot read: ENOSYS makes libc use clone.
  if (int rc = seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0); rc < 0) return fail("clone3", rc);

  const int fd = ::memfd_create("warden-seccomp", MFD_CLOEXEC);
  if (fd < 0) return make_error(errc::internal, std::string("memfd_create: ") + std::strerror(errno));
  std::string out;
  if (int rc = seccomp_export_bpf(ctx.get(), fd); rc < 0) {
    ::close(fd);
    return fail("export", rc);
  }
  const off_t size = ::lseek(fd, 0, SEEK_END);
  out.resize(static_cast<std::size_t>(size));
  const ssize_t n = ::pread(fd, out.data(), out.size(), 0);
  ::close(fd);
  if (n != size) return make_error(errc::internal, "seccomp: short read of the exported filter");
  return out;
}

}  // namespace

result<std::string> seccomp_program(bool internet) {
  static const result<std::string> closed = build(false);
  static const result<std::string> open = build(true);
  return internet ? open : closed;
}

}  // namespace warden::sandbox
