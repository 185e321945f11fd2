// launchers — programs that run other programs: shells, interpreters, build tools and package
// runners, wrappers (env, nice, sudo, …), and tools with a documented way to run a command or
// code of the caller's choosing (find -exec, git aliases and hooks, sed's `e`, awk's system(),
// tar --to-command, …). Issue 22: a remembered `command_prefix` rule whose program is one of
// these would cover everything the program can be told to run, so agent/permission_rules.h
// refuses such a prefix. The list is data (launchers.cpp), one entry per program with the
// source of the fact that it runs other programs.
//
// Matching (launcher_of): the word's directory is dropped (/usr/bin/python3 → python3), letters
// are folded to lower case, and a trailing version is dropped: digits and dots, then a '-' or
// '_' before them (python3.11 → python, perl5.36.0 → perl, gcc-12 → gcc, pip3 → pip; a name
// that is all version, like "7", is kept as it is). Then an entry matches when it equals the
// folded name, or, for a `family` entry, when the folded name starts with it (python3.11-dbg,
// pythonw, ld-linux-x86-64.so.2). Entries are compared folded too (sqlite3 → sqlite).
// The list errs on the side of refusing: a prefix rule for a program that is not a launcher
// but shares a family name (perltidy) is refused as well; exact-arguments rules stay possible.
// Thread-safety: pure functions over constant data.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace warden::risk {

struct launcher_entry {
  std::string_view name;    ///< program name as installed (compared folded, see above)
  bool family = false;      ///< also every name that starts with it (python → python3.11-dbg)
  std::string_view runs;    ///< how it runs other programs, for messages ("-c runs shell code")
  std::string_view source;  ///< where that is documented (man page, manual section)
};

/// Every entry, in the file's order (grouped by kind; no duplicates).
std::span<const launcher_entry> launchers() noexcept;

/// The folded form of a program word (see the file comment); "" for "".
std::string fold_program_name(std::string_view word);

/// The entry for a command's program word, or nullptr when it is not a known launcher.
const launcher_entry* launcher_of(std::string_view word);

}  // namespace warden::risk
