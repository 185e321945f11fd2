#include <gtest/gtest.h>

#include <set>
#include <string>

#include "risk/launchers.h"

namespace warden::risk {
namespace {

TEST(Launchers, FoldsPathsCaseAndVersions) {
  struct row { std::string_view word, folded; };
  const row rows[] = {
      {"python3", "python"},       {"python3.11", "python"},   {"/usr/bin/python3", "python"},
      {"perl5.36.0", "perl"},      {"gcc-12", "gcc"},          {"clang++-15", "clang++"},
      {"node18", "node"},          {"pip3", "pip"},            {"sqlite3", "sqlite"},
      {"PYTHON3", "python"},       {"python3.11-dbg", "python3.11-dbg"},
      {"ld-linux-x86-64.so.2", "ld-linux-x86-64.so"},       {"ls", "ls"},
      {"7", "7"},                  {"..", ".."},               {".", "."},
      {"", ""},                    {"/", ""},                  {"x_2", "x"},
  };
  for (const row& r : rows) EXPECT_EQ(fold_program_name(r.word), r.folded) << r.word;
}

TEST(Launchers, KnowsTheProgramsThatRunPrograms) {
  // The list (issue 22) and the shapes a command can give them.
  for (const char* word : {"sh", "bash", "rbash", "dash", "zsh", "ksh", "busybox", "python", "python3", "python3.11",
                           "python3.11-dbg", "pythonw", "/usr/bin/python3", "pypy3", "perl", "perl5.36.0", "ruby3.1",
                           "node", "nodejs", "deno", "php8.2", "lua5.4", "luajit", "tclsh8.6", "make", "cmake",
                           "ninja", "npm", "npx", "yarn", "pnpm", "pip", "pip3.11", "uv", "cargo", "go", "find",
                           "xargs", "env", "nice", "nohup", "timeout", "sudo", "doas", "git", "ssh", "awk", "gawk",
                           "sed", "parallel", "watch", "strace", "valgrind", "ld.so", "ld-linux-x86-64.so.2",
                           "/lib64/ld-linux-x86-64.so.2", "ld-musl-x86_64.so.1", "prlimit", "chrt", "setsid", "sg",
                           "su", "runuser", "ed", "sqlite3", "tar", "rsync", "rg", "sort", "split", "eval", ".", "jobs"}) {
    EXPECT_NE(launcher_of(word), nullptr) << word;
  }
}

TEST(Launchers, LeavesEverydayProgramsAlone) {
  for (const char* word : {"ls", "cat", "head", "tail", "wc", "grep", "uniq", "cut", "tr", "echo", "printf", "pwd",
                           "date", "du", "df", "stat", "file", "diff", "cmp", "jq", "ldd", "rm", "mkdir", "cp", "mv",
                           "touch", "basename", "dirname", "realpath", "readlink", "seq", "true", "false", "test",
                           "/usr/bin/ls", "tree", "which", "whoami", "id", "uname", "hostname", "md5sum", "sha256sum",
                           "nl", "tac", "rev", "fold", "fmt", "paste", "join", "comm", "expand", "od", "hexdump",
                           "xxd", "strings", "curl", ""}) {
    EXPECT_EQ(launcher_of(word), nullptr) << word;
  }
}

TEST(Launchers, EveryEntryIsDocumentedAndNamedOnce) {
  std::set<std::string> seen;
  ASSERT_GT(launchers().size(), 100u);
  for (const launcher_entry& l : launchers()) {
    EXPECT_FALSE(l.runs.empty()) << l.name;
    EXPECT_FALSE(l.source.empty()) << l.name;
    const std::string folded = fold_program_name(l.name);
    EXPECT_TRUE(seen.insert(folded).second) << "two entries fold to " << folded;
    // each entry is found by its own name, and as itself (no earlier entry shadows it)
    EXPECT_EQ(launcher_of(l.name), &l) << l.name;
  }
}

}  // namespace
}  // namespace warden::risk
