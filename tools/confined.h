// confined — runs file work for a tool on a thread that the kernel keeps inside one folder
// (issue 25: "the file is written from a process that cannot reach outside the workspace";
// edit_file's jailed calls).
//
// run_confined(folder, as_jail_user, work) starts a thread of its own and, on it only:
//   1. opens `folder` (O_PATH), the one descriptor `work` gets;
//   2. with `as_jail_user` (a root server, whose jail runs as uid/gid 65534 outside too:
//      sandbox/bwrap.h k_sandbox_uid), drops that thread's supplementary groups and sets its
//      filesystem uid and gid to the jail's with the raw system calls (glibc's would change every
//      thread of the server), so what it writes is the jail's and its file capabilities are
//      gone; its real and effective uid stay the server's, so no process of uid 65534 on the
//      host may signal it;
//   3. sets no_new_privs and restricts itself with Landlock (Linux 5.13+) to filesystem access
//      beneath `folder`: any open, create, rename or remove outside it fails with EACCES, whatever
//      path `work` is tricked into using;
//   4. runs work(dir_fd), and ends. Credentials and the Landlock domain are per thread: they end
//      with it, and the server's other threads never had them.
// The calling thread blocks until the work is done (call it from the blocking pool).
// Landlock missing (an older kernel, or not enabled in the kernel's LSM list) is not an error:
// work still runs, beneath.h's openat2 rules still hold, and `landlocked` says false.
// Errors: errc::internal when the folder cannot be opened, the uid cannot be dropped, or a
// Landlock that the kernel has refuses the ruleset (the work does not run then).
// Thread-safe.
#pragma once

#include <functional>
#include <string>

#include "common/result.h"

namespace warden::tools {

struct confinement {
  bool landlocked = false;   ///< the Landlock restriction was in force while `work` ran
  bool as_jail_user = false;  ///< `work` reached files as uid/gid 65534 (filesystem ids)
};

result<confinement> run_confined(const std::string& folder, bool as_jail_user, const std::function<void(int dir_fd)>& work);

/// The Landlock ABI version this kernel offers (0: none).
int landlock_abi();

}  // namespace warden::tools
