#include "tools/confined.h"

#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <exception>
#include <optional>
#include <thread>

#include "sandbox/bwrap.h"

namespace warden::tools {

namespace {

// Rights newer than the build's <linux/landlock.h> (Debian 12's knows ABI 2); the kernel's ABI
// version says which it handles (Documentation/userspace-api/landlock.rst).
constexpr std::uint64_t k_fs_truncate = 1ULL << 14;   // ABI 3
constexpr std::uint64_t k_fs_ioctl_dev = 1ULL << 15;  // ABI 5

std::uint64_t handled_fs_rights(int abi) {
  std::uint64_t rights = (1ULL << 13) - 1;  // ABI 1: EXECUTE … MAKE_SYM
  if (abi >= 2) rights |= LANDLOCK_ACCESS_FS_REFER;
  if (abi >= 3) rights |= k_fs_truncate;
  if (abi >= 5) rights |= k_fs_ioctl_dev;
  return rights;
}

error failed(const std::string& what) { return make_error(errc::internal, what + ": " + std::strerror(errno)); }

/// Makes this thread (only) reach files as the jail's user: no supplementary groups, and the
/// jail's filesystem uid and gid. Its real, effective and saved ids stay the server's, so no
/// process of that uid on the host may signal it (with setresuid one could SIGSTOP the server
/// through this thread); a filesystem uid other than 0 takes the file capabilities (DAC override,
/// chown, fowner) out of its effective set.
std::optional<error> drop_to_jail_user() {
  const long gid = sandbox::k_sandbox_gid, uid = sandbox::k_sandbox_uid;
  if (::syscall(SYS_setgroups, 0, nullptr) != 0) return failed("dropping the supplementary groups of a file-edit thread");
  ::syscall(SYS_setfsgid, gid);  // returns the previous value; checked below
  ::syscall(SYS_setfsuid, uid);
  if (::syscall(SYS_setfsgid, -1) != gid || ::syscall(SYS_setfsuid, -1) != uid) {
    return failed("setting the jail's filesystem uid on a file-edit thread");
  }
  return std::nullopt;
}

/// Restricts this thread (only) to filesystem access beneath `dir_fd`. False when the kernel has
/// no Landlock.
result<bool> landlock_beneath(int dir_fd) {
  const int abi = landlock_abi();
  if (abi <= 0) return false;
  landlock_ruleset_attr attr{};
  attr.handled_access_fs = handled_fs_rights(abi);
  const int ruleset = static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0));
  if (ruleset < 0) return failed("creating a Landlock ruleset");
  landlock_path_beneath_attr beneath{};
  beneath.allowed_access = attr.handled_access_fs & ~static_cast<std::uint64_t>(LANDLOCK_ACCESS_FS_EXECUTE);
  beneath.parent_fd = dir_fd;
  const bool added = ::syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &beneath, 0) == 0;
  const bool nnp = added && ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0;
  const bool restricted = nnp && ::syscall(SYS_landlock_restrict_self, ruleset, 0) == 0;
  const int saved = errno;
  ::close(ruleset);
  errno = saved;
  if (!restricted) return failed("restricting a file-edit thread with Landlock");
  return true;
}

}  // namespace

int landlock_abi() {
  const long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  return abi > 0 ? static_cast<int>(abi) : 0;
}

result<confinement> run_confined(const std::string& folder, bool as_jail_user, const std::function<void(int dir_fd)>& work) {
  result<confinement> out = make_error(errc::internal, "the file-edit thread did not finish");
  std::exception_ptr thrown;
  std::thread t([&] {
    try {
      const int dir = ::open(folder.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (dir < 0) {
        out = failed("opening the workspace " + folder);
        return;
      }
      confinement c;
      std::optional<error> e;
      if (as_jail_user) e = drop_to_jail_user();
      c.as_jail_user = as_jail_user && !e;
      if (!e) {
        auto locked = landlock_beneath(dir);
        if (locked) c.landlocked = *locked;
        else e = locked.error();
      }
      if (!e) work(dir);
      ::close(dir);
      if (e) out = std::move(*e);
      else out = c;
    } catch (...) {
      thrown = std::current_exception();
    }
  });
  t.join();
  if (thrown) std::rethrow_exception(thrown);
  return out;
}

}  // namespace warden::tools
