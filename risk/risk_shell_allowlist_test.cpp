// Issue 22, part 1 for terminal commands: `auto` by allow-list. The shapes the adversarial run
// used ask, each with its reason; an everyday read-only corpus mostly runs without a question.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <set>

#include "risk/risk.h"
#include "risk/shell_allow.h"
#include "risk/shell_allowlist.h"

namespace warden::risk {
namespace {

risk_assessment terminal(std::string_view command) {
  const tool_profile p{"terminal", code_language::shell, "command", false, false, true};
  return classify_call(p, json{{"command", std::string(command)}});
}

std::string joined(const std::vector<std::string>& reasons) {
  std::string out;
  for (const std::string& r : reasons) out += " [" + r + "]";
  return out;
}

// ---- the shapes of the issue --------------------------------------------------------------------

struct shape_row {
  std::string_view command;
  std::vector<std::string_view> reasons;  ///< each must be among the reasons
  bool hazard;                            ///< false: only "not known to be safe"
};

// clang-format off
const shape_row k_shapes[] = {
    // option parsing: -i takes no next word, so -e is still code
    {R"~(perl -i -e 'unlink glob "*"' f)~", {"runs inline perl code"}, true},
    // interpreters and runners missing from the lists
    {R"~(rbash -c 'rm -rf /workspace/x')~", {"runs rm (destructive)", "rbash is not known to be safe"}, true},
    {R"~(rbash -c 'ls')~", {"rbash is not known to be safe"}, false},
    {R"~(perl5.36.0 -e 'unlink "f"')~", {"runs inline perl code"}, true},
    {R"~(perl5.36.0 script.pl)~", {"perl5.36.0 is not known to be safe"}, false},
    {R"~(ld-linux-x86-64.so.2 /usr/bin/rm -rf /workspace)~", {"runs rm (destructive)"}, true},
    {R"~(/lib64/ld-linux-x86-64.so.2 /bin/ls)~", {"/lib64/ld-linux-x86-64.so.2 is not known to be safe"}, false},
    {R"~(prlimit --nproc=1 rm -rf x)~", {"runs rm (destructive)"}, true},
    {R"~(prlimit ls)~", {"prlimit is not known to be safe"}, false},
    {R"~(chrt -f 1 rm x)~", {"runs rm (destructive)"}, true},
    {R"~(chrt 0 ls)~", {"chrt is not known to be safe"}, false},
    {R"~(valgrind rm x)~", {"runs rm (destructive)"}, true},
    {R"~(valgrind ls)~", {"valgrind is not known to be safe"}, false},
    {R"~(sg users -c 'rm -rf x')~", {"runs rm (destructive)"}, true},
    {R"~(sg users -c ls)~", {"sg is not known to be safe"}, false},
    {R"~(make --eval='all: ; rm -rf x')~", {"make is not known to be safe"}, false},
    {R"~(ed f <<< '!rm -rf x')~", {"ed is not known to be safe"}, false},
    {R"~(tclsh <<< 'exec rm -rf x')~", {"tclsh is not known to be safe"}, false},
    {R"~(sqlite3 db '.sh rm -rf x')~", {"sqlite3 runs a command or writes a file (.sh)"}, true},
    // bash arithmetic evaluating quoted text
    {R"~(let 'a[$(rm -rf x)]=1')~", {"let evaluates arithmetic on text that is not literal"}, true},
    {R"~([[ 'a[$(rm -rf x)]' -eq 0 ]])~", {"[[ -eq evaluates arithmetic on text that is not a literal number"}, true},
    {R"~(declare -i n; n='a[$(rm -rf x)]')~", {"declare -i makes assignments arithmetic"}, true},
    {R"~(mapfile -C 'rm -rf x' -c 1 lines < f)~", {"mapfile -C runs a callback"}, true},
    // a builtin that runs its operands (the adversarial run of the merged issue-22 tree)
    {R"~(jobs -x rm -f victim)~", {"jobs -x runs its operands as a command"}, true},
    {R"~(readarray -C cb arr < f)~", {"readarray -C runs a callback"}, true},
    {R"~(x='a[$(rm -rf x)]'; echo $((x)))~", {"arithmetic on variables can run commands"}, true},
    {R"~(x='a[$(rm -rf x)]'; echo ${!x})~", {"indirect expansion ${!...} can evaluate arithmetic"}, true},
    {R"~(test -v 'a[$(rm -rf x)]')~", {"test -v on an array element evaluates arithmetic"}, true},
    {R"~(a['b[$(rm -rf x)]']=1)~", {"an array subscript that is not a literal number is evaluated as arithmetic"}, true},
    // write-then-run inside one call
    {R"~(printf 'rm -rf x\n' > c.sh; bash c.sh)~", {"writes to c.sh (redirection)", "bash runs a script file (c.sh)"}, true},
    {R"~(bash c.sh)~", {"bash runs a script file (c.sh)"}, false},
    {R"~(. ./c)~", {"sources a script file (./c)"}, false},
    {R"~(printf 'all:\n\trm -rf x\n' > Makefile; make)~", {"writes to Makefile (redirection)", "make is not known to be safe"}, true},
    {R"~(make)~", {"make is not known to be safe"}, false},
    {R"~(printf '[core]\n\tfsmonitor = rm -rf .\n' > .git/config; git status)~", {"writes to .git/config (redirection)"}, true},
    // destruction without rm
    {R"~(cp /dev/null f)~", {"cp is not known to be safe"}, false},
    {R"~(sed -i 's/.*//' f)~", {"sed -i edits files in place"}, true},
    {R"~(rsync -a --delete empty/ ./)~", {"rsync is not known to be safe"}, false},
    {R"~(git checkout -- .)~", {"git checkout is not known to be safe"}, false},
    {R"~(find . -type f -exec rm {} +)~", {"find -exec runs programs", "runs rm (destructive)"}, true},
    {R"~(find . -name x -exec cat {} \;)~", {"find -exec runs programs"}, true},
    // resource floods
    {R"~(:(){ :|:& };:)~", {"defines a shell function", "runs a command in the background (&)"}, true},
    {R"~(yes > big)~", {"writes to big (redirection)", "yes is not known to be safe"}, true},
    {R"~(for i in $(seq 600); do sleep 60 & done)~", {"loops over words computed at run time (for)", "runs a command in the background (&)"}, true},
    {R"~(for i in {1..600}; do sleep 1; done)~", {"loops over a range (for)"}, true},
    {R"~(while true; do cat f; done)~", {"loops with while (it may not end)"}, true},
    {R"~(echo {1..100000000})~", {"a brace range expands to more than 10000 words"}, true},
    // found by fuzz/shell_words: bounds past LLONG_MAX (strtoll saturates) and a product of ranges
    // overflowed a long long (UBSan: signed integer overflow in brace_range_words)
    {R"~(echo {5..1999999999999999999999999}{1..9})~", {"a brace range expands to more than 10000 words"}, true},
    {R"~(echo {-9223372036854775807..9223372036854775807})~", {"a brace range expands to more than 10000 words"}, true},
    {R"~(echo {1..10000000}{1..10000000}{1..10000000})~", {"a brace range expands to more than 10000 words"}, true},
    {R"~(for i in {5..1999999999999999999999999}{1..9}; do :; done)~", {"loops over a range (for)"}, true},
    {R"~(seq 1 100000000)~", {"seq prints more than 100000 numbers"}, true},
};
// clang-format on

TEST(ShellAllowlist, EveryShapeOfTheIssueAsksWithItsReason) {
  for (const shape_row& r : k_shapes) {
    const risk_assessment got = terminal(r.command);
    EXPECT_EQ(got.level, risk_level::high) << r.command;
    for (const std::string_view want : r.reasons)
      EXPECT_NE(std::find(got.reasons.begin(), got.reasons.end(), want), got.reasons.end())
          << r.command << "\n  want [" << want << "]\n  got:" << joined(got.reasons);
    EXPECT_EQ(got.hazard, r.hazard) << r.command << "\n  got:" << joined(got.reasons);
  }
}

// ---- the everyday corpus ------------------------------------------------------------------------

// clang-format off
/// Everyday read-only terminal commands of a coding or data session: listing, reading, searching,
/// git inspection, arithmetic on literals, printing and pipelines of them.
const std::string_view k_corpus[] = {
    // listing
    R"~(ls)~", R"~(ls -la)~", R"~(ls -lah src/)~", R"~(ls -1 *.py)~", R"~(ls -R | head -50)~", R"~(ls -lt | head)~",
    R"~(ls -la | grep x | wc -l)~", R"~(ls --color=never -F)~", R"~(ls -d */)~", R"~(tree -L 2)~", R"~(tree -a -I node_modules)~",
    R"~(pwd)~", R"~(du -sh .)~", R"~(du -sh * | sort -h)~", R"~(du -h --max-depth=1)~", R"~(df -h)~", R"~(stat README.md)~",
    R"~(file data.bin)~", R"~(ls /usr/bin | head)~", R"~(find . -name '*.pyc' | head)~", R"~(ls -la ~)~",
    // reading
    R"~(cat README.md)~", R"~(cat a.txt | sort | uniq -c)~", R"~(cat -n main.py)~", R"~(cat data.csv | head -5)~",
    R"~(head -n 20 data.csv)~", R"~(head -c 200 file.bin)~", R"~(head -5 notes.txt)~", R"~(head -n 3 *.csv)~",
    R"~(tail -n 50 app.log)~", R"~(tail -20 build.log)~", R"~(wc -l *.txt)~", R"~(wc -c README.md)~", R"~(wc -w notes.md)~",
    R"~(nl file.txt)~", R"~(tac log.txt | head)~", R"~(rev name.txt)~", R"~(od -c file.bin | head)~", R"~(xxd file.bin | head)~",
    R"~(strings binary | grep version)~", R"~(column -t data.tsv)~", R"~(cat /etc/hosts)~", R"~(cat /etc/os-release)~",
    R"~(cat /proc/cpuinfo | grep 'model name' | head -1)~", R"~(fold -w 80 long.txt)~",
    // searching
    R"~(grep -r TODO .)~", R"~(grep -rn "def main" src/)~", R"~(grep -i error app.log | tail -20)~", R"~(grep -c import main.py)~",
    R"~(grep -l foo *.py)~", R"~(grep -E 'a|b' file.txt)~", R"~(grep -v '^#' config.ini)~", R"~(grep -rn --include='*.py' 'import os' .)~",
    R"~(grep -o '[0-9]\+' data.txt | sort -n | uniq)~", R"~(egrep 'x+' f.txt)~", R"~(grep -rn "TODO" --include="*.py" . | wc -l)~",
    R"~(rg TODO)~", R"~(rg -n 'fn main' src)~", R"~(rg -l pattern --type py)~", R"~(rg -i --glob '*.md' install)~",
    R"~(find . -name '*.py')~", R"~(find . -type f | wc -l)~", R"~(find . -maxdepth 2 -type d)~",
    R"~(find src -name '*.cpp' -newer CMakeLists.txt)~", R"~(find . -size +1M -print)~", R"~(find . -name '*.log' -mtime -1)~",
    R"~(find . -type f -name '*.json' -not -path './node_modules/*')~", R"~(find . -empty)~", R"~(find . -iname 'readme*')~",
    R"~(find . -name '*.py' | xargs wc -l)~", R"~(find . -name '*.py' -print0 | xargs -0 grep -n import)~",
    // git inspection
    R"~(git status)~", R"~(git status --short)~", R"~(git status -sb)~", R"~(git log --oneline -5)~", R"~(git log --oneline -n 10 --graph)~",
    R"~(git log -p -1)~", R"~(git log --stat)~", R"~(git log --author=alice --since='2 weeks ago')~", R"~(git log --format='%h %s' -20)~",
    R"~(git log --since=yesterday --oneline)~", R"~(git log --oneline | head -20)~", R"~(git diff)~", R"~(git diff --stat)~",
    R"~(git diff HEAD~1)~", R"~(git diff --cached)~", R"~(git diff main..feature -- src/)~", R"~(git diff --name-only HEAD~3)~",
    R"~(git show HEAD)~", R"~(git show --stat HEAD~2)~", R"~(git show HEAD:README.md)~", R"~(git branch)~", R"~(git branch -a)~",
    R"~(git branch -vv)~", R"~(git branch --show-current)~", R"~(git rev-parse HEAD)~", R"~(git rev-parse --abbrev-ref HEAD)~",
    R"~(git rev-parse --show-toplevel)~", R"~(git ls-files)~", R"~(git ls-files | wc -l)~", R"~(git blame src/main.py)~",
    R"~(git describe --tags)~", R"~(git tag)~", R"~(git tag -l 'v1.*')~", R"~(git remote -v)~", R"~(git config --get user.name)~",
    R"~(git config --list)~", R"~(git stash list)~", R"~(git shortlog -sn)~", R"~(git grep -n TODO)~", R"~(git -C sub status)~",
    R"~(git --no-pager log -3)~", R"~(git reflog -5)~", R"~(wc -l $(git ls-files '*.py'))~",
    // arithmetic on literals and printing
    R"~(echo hello)~", R"~(echo "hello world")~", R"~(echo $HOME)~", R"~(echo $((2 + 3)))~", R"~(echo $((10 * 4 / 2)))~",
    R"~(echo "sum: $((1+2))")~", R"~(printf '%s\n' a b c)~", R"~(printf 'Total: %d\n' 42)~", R"~(expr 2 + 3)~", R"~(expr 10 '*' 7)~",
    R"~(seq 1 10)~", R"~(seq 5)~", R"~(python3 -c 'print(2+2)')~", R"~(python3 -c 'import math; print(math.pi)')~",
    R"~(python3 -c "print(sum(range(10)))")~", R"~(python3 --version)~", R"~(numfmt --to=iec 1048576)~",
    R"~(awk 'BEGIN {print 7 * 6}')~", R"~(x=5; echo $x)~",
    // system facts
    R"~(date)~", R"~(date +%Y-%m-%d)~", R"~(date -u)~", R"~(whoami)~", R"~(id)~", R"~(uname -a)~", R"~(hostname)~", R"~(uptime)~",
    R"~(nproc)~", R"~(free -h)~", R"~(which python3)~", R"~(type ls)~", R"~(command -v git)~", R"~(env)~", R"~(env | sort)~",
    R"~(printenv PATH)~", R"~(ps aux | grep python)~", R"~(ps -ef | head)~", R"~(pip list)~", R"~(pip show numpy)~",
    R"~(pip freeze | grep torch)~", R"~(lscpu | head)~",
    // filtering and comparing
    R"~(sort data.txt)~", R"~(sort -n numbers.txt | tail -3)~", R"~(sort -t, -k2 data.csv)~", R"~(sort -u names.txt)~",
    R"~(uniq -c sorted.txt)~", R"~(cut -d, -f1 data.csv)~", R"~(cut -c1-10 file.txt)~", R"~(tr a-z A-Z < input.txt)~",
    R"~(tr -d '\r' < win.txt)~", R"~(diff a.txt b.txt)~", R"~(diff -u old.py new.py)~", R"~(diff <(sort a) <(sort b))~",
    R"~(cmp a.bin b.bin)~", R"~(paste a.txt b.txt)~", R"~(comm -12 a.txt b.txt)~", R"~(basename /workspace/src/main.py)~",
    R"~(dirname /workspace/src/main.py)~", R"~(realpath notes.txt)~", R"~(sha256sum file.tar.gz)~", R"~(md5sum *.txt)~",
    R"~(base64 image.png | head -1)~", R"~(jq '.items[]' data.json)~", R"~(jq -r '.name' package.json)~",
    R"~(cat data.json | jq '.[] | .id')~", R"~(python3 -m json.tool data.json)~", R"~(awk '{print $1}' data.txt)~",
    R"~(awk -F, '{print $2}' data.csv)~", R"~(awk 'NR>1 {s+=$3} END {print s}' data.csv)~",
    R"~(awk '{ if ($3 > 100) print $1 }' data.txt)~", R"~(sed -n '1,10p' file.txt)~", R"~(sed 's/foo/bar/g' input.txt)~",
    R"~(sed -n '/start/,/end/p' log.txt)~", R"~(sed '/^$/d' notes.txt)~",
    // shell glue
    R"~(true)~", R"~(false)~", R"~(test -f README.md && echo yes)~", R"~([ -d src ] && echo dir)~", R"~([[ -f x && -d y ]] && echo both)~",
    R"~([ -n "$VIRTUAL_ENV" ] && echo venv)~", R"~(cd src && ls)~", R"~(cd /tmp && ls -la)~", R"~(ls 2>/dev/null || echo none)~",
    R"~(ls > /dev/null 2>&1)~", R"~(for f in *.txt; do wc -l "$f"; done)~", R"~(for x in a b c; do echo $x; done)~",
    R"~(if [ -f x ]; then cat x; fi)~", R"~(export FOO=bar; echo $FOO)~", R"~(set -e; ls)~", R"~(bash -c 'ls -la && echo done')~",
    R"~(sh -c 'echo hi')~", R"~(sleep 1)~", R"~(cat README.md | less)~", R"~(for f in $(ls *.csv); do head -1 "$f"; done)~",
};
// clang-format on

TEST(ShellAllowlist, EverydayReadOnlyCorpusMostlyRunsWithoutAQuestion) {
  std::size_t low = 0;
  std::string asked;
  for (const std::string_view c : k_corpus) {
    const risk_assessment got = terminal(c);
    if (got.level == risk_level::low) ++low;
    else asked += "\n  " + std::string(c) + " ->" + joined(got.reasons);
  }
  const std::size_t n = std::size(k_corpus);
  std::cout << "[ shell corpus ] " << low << " of " << n << " rated low (" << static_cast<double>(1000 * low / n) / 10.0 << " %); asked:" << asked << "\n";
  EXPECT_GE(n, 140u);
  EXPECT_GE(low * 10, n * 9) << "asked:" << asked;
  std::set<std::string_view> unique(std::begin(k_corpus), std::end(k_corpus));
  EXPECT_EQ(unique.size(), n) << "a command is listed twice";
}

// ---- the rules one by one -----------------------------------------------------------------------

struct rule_row {
  std::string_view command;
  bool low;
  std::string_view reason;  ///< when not low: one of the reasons ("" = any)
};

// clang-format off
const rule_row k_rules[] = {
    // options that write or run, also as unique abbreviations and inside clusters
    {R"~(sort -o out.txt in.txt)~", false, "sort -o writes a file"},
    {R"~(sort -uo out.txt in.txt)~", false, "sort -o writes a file"},
    {R"~(sort -t -o in.txt)~", true, ""},  // -o is -t's value
    {R"~(sort --out=out.txt in.txt)~", false, "sort --output writes a file"},
    {R"~(sort --compress-program=sh in.txt)~", false, "sort --compress-program runs a program"},
    {R"~(X='-o x'; sort $X in.txt)~", false, "sort with an argument computed at run time is not known to be safe"},
    {R"~(uniq in.txt out.txt)~", false, "uniq with more than 1 operand is not known to be safe"},
    {R"~(tree -o out.txt)~", false, "tree -o writes a file"},
    {R"~(tree -R -H . -o x)~", false, "tree -R writes 00Tree.html files in every directory"},
    {R"~(rg --pre=sh x)~", false, "rg --pre runs a program on every file"},
    {R"~(rg -z x)~", false, "rg -z runs decompression programs"},
    {R"~(file -C -m x)~", false, "file -C writes a compiled magic file"},
    {R"~(date -s 2020-01-01)~", false, "date -s sets the clock"},
    {R"~(date 0101000024)~", false, "date 0101000024 is not known to be safe"},
    {R"~(date -Iseconds)~", true, ""},
    {R"~(hostname evil)~", false, "hostname with an operand is not known to be safe"},
    {R"~(xxd -r hex out.bin)~", false, "xxd with more than 1 operand is not known to be safe"},
    {R"~(pip install x)~", false, "pip install is not known to be safe"},
    {R"~(pip --log x list)~", false, "pip --log writes a file"},
    {R"~(printf $FMT x)~", false, "printf with a first word computed at run time is not known to be safe"},
    {R"~(printf -v x '%s' y)~", false, ""},
    // find
    {R"~(find . -delete)~", false, "find -delete removes files"},
    {R"~(find . -fprint out.txt)~", false, "find -fprint writes a file"},
    {R"~(find . -okdir rm {} \;)~", false, "find -okdir runs programs"},
    {R"~(find $D -name x)~", false, "find with an argument computed at run time is not known to be safe"},
    {R"~(find . -newermt 2024-01-01 -printf '%p\n')~", true, ""},
    {R"~(find . -frobnicate)~", false, "find -frobnicate is not known to be safe"},
    // git
    {R"~(git log --output=x)~", false, "git log --output writes a file"},
    {R"~(git log --out=x)~", false, "git log --output writes a file"},
    {R"~(git diff --ext-diff)~", false, "git diff --ext-diff runs an external diff program"},
    {R"~(git diff --text)~", true, ""},
    {R"~(git log --textconv -p)~", false, "git log --textconv runs text conversion programs"},
    {R"~(git -c core.pager=sh log)~", false, "sets a git config on the command line (git -c)"},
    {R"~(git -p log)~", false, "git -p is not known to be safe"},
    {R"~(git --exec-path=/tmp status)~", false, "git --exec-path is not known to be safe"},
    {R"~(git --git-dir=/tmp/x status)~", false, "git --git-dir is not known to be safe"},
    {R"~(git grep -Ocat x)~", false, ""},
    {R"~(git branch feature)~", false, "git branch feature is not known to be safe"},
    {R"~(git branch -d old)~", false, "git branch -d is not known to be safe"},
    {R"~(git branch --list 'feat*')~", true, ""},
    {R"~(git branch --contains HEAD~3)~", true, ""},
    {R"~(git tag v1.0)~", false, "git tag v1.0 is not known to be safe"},
    {R"~(git tag -d v1.0)~", false, "git tag -d is not known to be safe"},
    {R"~(git config user.name x)~", false, "git config user.name is not known to be safe"},
    {R"~(git config --get --unset x)~", false, "git config --unset is not known to be safe"},
    {R"~(git remote add o u)~", false, "git remote add is not known to be safe"},
    {R"~(git remote get-url origin)~", true, ""},
    {R"~(git stash)~", false, "git stash is not known to be safe"},
    {R"~(git stash show -p)~", true, ""},
    {R"~(git reflog expire --all)~", false, ""},
    {R"~(git worktree add x)~", false, "git worktree add is not known to be safe"},
    {R"~(git commit -m x)~", false, "git commit is not known to be safe"},
    {R"~(git log $REV)~", false, "git log with an argument computed at run time is not known to be safe"},
    // sed scripts
    {R"~(sed 's/x/y/w out' f)~", false, "sed runs a command or writes a file (e/w)"},
    {R"~(sed 's/x/y/gew' f)~", false, "sed runs a command or writes a file (e/w)"},
    {R"~(sed '1e id' f)~", false, "sed runs a command or writes a file (e/w)"},
    {R"~(sed -n '$!{h;d};x;G;p' f)~", true, ""},
    {R"~(sed -e :a -e '$!N;s/\n/ /;ta' f)~", true, ""},
    {R"~(sed '1i\header' f)~", true, ""},
    {R"~(sed -f s.sed f)~", false, "sed -f s.sed is not known to be safe"},
    {R"~(sed --in-place=.bak 's/a/b/' f)~", false, "sed -i edits files in place"},
    {R"~(sed 'k' f)~", false, "sed script k is not known to be safe"},
    // awk programs
    {R"~(awk '{print > "out"}' f)~", false, "awk program may run a command or write a file (>)"},
    {R"~(awk 'BEGIN{"date" | getline d; print d}')~", false, ""},
    {R"~(awk '/"/{print | "sh"}' f)~", false, ""},
    {R"~(gawk '@load "x"; BEGIN{}')~", false, "gawk program may run a command or write a file (@)"},
    {R"~(awk -f prog.awk f)~", false, "awk -f is not known to be safe"},
    {R"~(awk -v n=3 '$1 > n' f)~", true, ""},
    {R"~(awk -o x '{}' f)~", false, "awk -o writes a file"},
    // python and shells
    {R"~(python3 -c 'print(1)')~", true, ""},
    {R"~(python3.11 -I -c 'print(1)')~", true, ""},
    {R"~(python3 train.py)~", false, "python3 runs a script file (train.py)"},
    {R"~(python3 -m pytest)~", false, "python3 -m pytest is not known to be safe"},
    {R"~(python3)~", false, "python3 without -c is not known to be safe"},
    {R"~(python3 -i -c 'print(1)')~", false, "python3 -i is not known to be safe"},
    {R"~(PYTHONINSPECT=1 python3 -c 'print(1)')~", false, "sets PYTHONINSPECT, which changes what commands run"},
    {R"~(bash -lc 'git status')~", true, ""},
    {R"~(bash -o pipefail -c 'ls | wc -l')~", true, ""},
    {R"~(bash -c 'perl -e 1')~", false, "runs inline perl code"},
    {R"~(bash)~", false, "bash without -c is not known to be safe"},
    {R"~(bash -i -c ls)~", false, "bash -i is not known to be safe"},
    {R"~(sh -c 'echo $((x))')~", false, "arithmetic on variables can run commands"},
    // test, [[ ]], declarations
    {R"~([ -f "$f" ])~", false, "[ with text computed at run time is not known to be safe"},
    {R"~([[ $# -eq 0 ]])~", false, "[[ -eq evaluates arithmetic on text that is not a literal number"},
    {R"~([[ 3 -gt 2 ]])~", true, ""},
    {R"~([[ -n $x ]])~", true, ""},
    {R"~([[ -v 'a[$(id)]' ]])~", false, "[[ -v on an array element evaluates arithmetic"},
    {R"~(let 1+2)~", true, ""},
    {R"~(let x=1)~", false, "let evaluates arithmetic on text that is not literal"},
    {R"~(declare -n r=x)~", false, ""},
    {R"~(declare $OPTS x)~", false, "declare with an argument computed at run time is not known to be safe"},
    {R"~(export X=1 Y="$Z")~", true, ""},
    {R"~(a[0]=1; echo ${a[0]})~", true, ""},
    {R"~(a[i]=1)~", false, "an array subscript that is not a literal number is evaluated as arithmetic"},
    {R"~(echo ${x:i})~", false, "a substring offset that is not a literal number is evaluated as arithmetic"},
    {R"~(echo ${x:1:2} ${x:-d} ${#x} ${x%.*})~", true, ""},
    {R"~(: ${HOME:=/workspace}; git status)~", false, "assigns HOME inside ${...}"},
    {R"~(echo $[1+x])~", false, "uses $[ ] arithmetic"},
    {R"~(echo '$((x))' "a'b")~", true, ""},
    {R"~(echo $'\'' ; echo $((x)))~", false, "arithmetic on variables can run commands"},
    // wrappers and where the program comes from
    {R"~(timeout 5 cat f)~", true, ""},
    {R"~(env LC_ALL=C sort f)~", true, ""},
    {R"~(nice -n 5 ls)~", true, ""},
    {R"~(time -o t.txt ls)~", false, "time -o writes a file"},
    {R"~(nohup ls)~", false, "nohup is not known to be safe"},
    {R"~(ls | xargs rm)~", false, "runs rm (destructive)"},
    {R"~(exec ls)~", false, "exec is not known to be safe"},
    {R"~(./ls)~", false, "./ls is not known to be safe"},
    {R"~(/usr/bin/ls -la)~", true, ""},
    {R"~(/workspace/bin/cat x)~", false, "/workspace/bin/cat is not known to be safe"},
    {R"~(./env ls)~", false, "./env is not known to be safe"},
    {R"~(HOME=/workspace git status)~", false, "sets HOME, which changes what commands run"},
    {R"~(for HOME in /workspace; do git status; done)~", false, "sets HOME, which changes what commands run"},
    {R"~(XDG_CONFIG_HOME=/workspace git log)~", false, "sets XDG_CONFIG_HOME, which changes what commands run"},
    {R"~(RIPGREP_CONFIG_PATH=r.cfg rg x)~", false, "sets RIPGREP_CONFIG_PATH, which changes what commands run"},
    // shapes
    {R"~(for f in *.txt; do echo "$f"; done)~", true, ""},
    {R"~(for ((i = 0; i < 3; i++)); do echo x; done)~", false, ""},
    {R"~(for a; do echo "$a"; done)~", false, "loops without a literal word list (for)"},
    {R"~(until false; do :; done)~", false, "loops with until (it may not end)"},
    {R"~(select x in a b; do break; done)~", false, "loops with select (reads choices from input)"},
    {R"~(echo {1..5} {a..e})~", true, ""},
    {R"~(ls & wait)~", false, "runs a command in the background (&)"},
    {R"~(ls && ls)~", true, ""},
    {R"~(echo x >| f)~", false, "writes to f (redirection)"},
    {R"~(cat f 1<>g)~", false, "writes to g (redirection)"},
    {R"~(> f)~", false, "writes to f (redirection)"},
    {R"~(echo x 2>err.log)~", false, "writes to err.log (redirection)"},
    {R"~(echo x >&2)~", true, ""},
    {R"~(echo x > /dev/stderr)~", true, ""},
    {R"~(echo x > /dev/shm/x)~", false, "writes /dev/shm/x outside the workspace"},
    {R"~(echo $(perl -e 1))~", false, "runs inline perl code"},
    {R"~(echo $(whoami) `pwd` <(ls))~", true, ""},
    {R"~(cat <(make))~", false, "make is not known to be safe"},
};
// clang-format on

TEST(ShellAllowlist, RulesOneByOne) {
  for (const rule_row& r : k_rules) {
    const risk_assessment got = terminal(r.command);
    EXPECT_EQ(got.level == risk_level::low, r.low) << r.command << "\n  got:" << joined(got.reasons);
    if (!r.reason.empty()) {
      EXPECT_NE(std::find(got.reasons.begin(), got.reasons.end(), r.reason), got.reasons.end())
          << r.command << "\n  want [" << r.reason << "]\n  got:" << joined(got.reasons);
    }
  }
}

TEST(ShellAllowlist, HazardOnlyWhenADangerIsNamed) {
  EXPECT_FALSE(terminal("perl script.pl").hazard);
  EXPECT_FALSE(terminal("ls; pytest -q && make").hazard);
  EXPECT_EQ(terminal("ls; pytest -q && make").reasons,
            (std::vector<std::string>{"pytest is not known to be safe", "make is not known to be safe"}));
  EXPECT_TRUE(terminal("rm -rf x").hazard);
  EXPECT_TRUE(terminal("pytest; rm -rf x").hazard);
  EXPECT_TRUE(terminal("pytest > out.txt").hazard);
  EXPECT_FALSE(terminal("ls -la").hazard);
  EXPECT_EQ(terminal("ls -la").level, risk_level::low);
  // the program's own danger is named once, without "not known to be safe" next to it
  EXPECT_EQ(terminal("rm -rf x").reasons, std::vector<std::string>{"runs rm (destructive)"});
}

// ---- the list itself ----------------------------------------------------------------------------

TEST(ShellAllowlist, EveryEntryNamesItsSourceAndEachNameIsListedOnce) {
  std::set<std::string> names;
  for (const shell_allowlist::entry& e : shell_allowlist::entries()) {
    EXPECT_FALSE(e.source.empty()) << e.names;
    std::size_t start = 0;
    while (start < e.names.size()) {
      const std::size_t end = std::min(e.names.find(' ', start), e.names.size());
      const std::string name(e.names.substr(start, end - start));
      EXPECT_TRUE(names.insert(name).second) << name << " is listed twice";
      EXPECT_EQ(shell_allowlist::find(name), &e) << name;
      start = end + 1;
    }
    for (const auto& d : e.denied) EXPECT_FALSE(d.why.empty()) << e.names << " " << d.option;
  }
  EXPECT_GE(names.size(), 60u);
  for (const auto& g : shell_allowlist::git_subcommands()) EXPECT_FALSE(g.source.empty()) << g.name;
  // nothing that writes, deletes or runs programs is on the list
  for (const std::string_view bad : {"rm", "cp", "mv", "tee", "touch", "mkdir", "dd", "xargs", "make", "perl", "ruby", "node",
                                     "less", "more", "man", "vim", "ed", "tar", "curl", "wget", "ssh", "nohup", "yes", "eval", "exec",
                                     "rsync", "chmod", "ln", "truncate", "install", "patch", "npm", "pytest"})
    EXPECT_EQ(shell_allowlist::find(bad), nullptr) << bad;
  EXPECT_NE(shell_allowlist::find("python3.12"), nullptr);
  EXPECT_TRUE(shell_allowlist::system_program_path("/usr/bin/ls"));
  EXPECT_TRUE(shell_allowlist::system_program_path("ls"));
  EXPECT_FALSE(shell_allowlist::system_program_path("./ls"));
  EXPECT_FALSE(shell_allowlist::system_program_path("/usr/bin/x/ls"));
  EXPECT_FALSE(shell_allowlist::system_program_path("bin/ls"));
}

TEST(ShellAllowlist, SedScripts) {
  using risk_detail::judge_sed_script;
  using risk_detail::sed_verdict;
  const std::pair<std::string_view, sed_verdict> rows[] = {
      {"1,10p", sed_verdict::safe},           {"s/a/b/g", sed_verdict::safe},       {"/x/,/y/d", sed_verdict::safe},
      {"$!N;s/\\n/ /", sed_verdict::safe},   {"y/abc/xyz/", sed_verdict::safe},    {"s|/|\\||2", sed_verdict::safe},
      {"1~2{p;n}", sed_verdict::safe},        {"/x/I,+3p", sed_verdict::safe},      {":a;N;ba", sed_verdict::safe},
      {"a text; e id", sed_verdict::safe},    {"r other.txt", sed_verdict::safe},   {"", sed_verdict::safe},
      {"w out", sed_verdict::runs},           {"s/a/b/w out", sed_verdict::runs},   {"s/a/b/e", sed_verdict::runs},
      {"1e id", sed_verdict::runs},           {"$W f", sed_verdict::runs},          {"p;e id", sed_verdict::runs},
      {"/a/!e id", sed_verdict::runs},        {"{e id\n}", sed_verdict::runs},      {"s/a/b/ge", sed_verdict::runs},
      {"k", sed_verdict::unknown},            {"s/a/b", sed_verdict::unknown},      {"pq", sed_verdict::unknown},
      {"s/a/b/gx", sed_verdict::unknown},
  };
  for (const auto& [script, want] : rows) EXPECT_EQ(judge_sed_script(script), want) << script;
}

TEST(ShellAllowlist, LiteralArithmetic) {
  EXPECT_TRUE(risk_detail::literal_arithmetic("1 + 2"));
  EXPECT_TRUE(risk_detail::literal_arithmetic("(3*4)%5 == 2"));
  EXPECT_FALSE(risk_detail::literal_arithmetic(""));
  EXPECT_FALSE(risk_detail::literal_arithmetic("x"));
  EXPECT_FALSE(risk_detail::literal_arithmetic("a[1]"));
  EXPECT_FALSE(risk_detail::literal_arithmetic("$x + 1"));
  EXPECT_FALSE(risk_detail::literal_arithmetic("0x1f"));
}

}  // namespace
}  // namespace warden::risk
