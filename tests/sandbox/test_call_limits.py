"""One session cannot starve another (issue 22, part 6), with warden running as root and as a
normal user, and a jail that could not start is recorded as not run (part 4).

Session A floods its call with processes (a `sleep` loop, then a fork bomb), hogs memory, fills
its /tmp and its workspace; while A's flood and bomb hold their calls, session B's python and
terminal calls run and succeed. The limits that make it so (sandbox/limits.h): a cgroup per call
with 512 processes, --call-memory and an equal CPU weight; /tmp 256 MiB; the workspace quota.
Each flood is checked from the host to have really filled its call (>= 400 processes below
warden), and nothing of A is left running afterwards.

As a normal user, warden needs a cgroup it may write (on systemd: Delegate=yes). The test plays
the delegation: in each cgroup v1 hierarchy it makes a folder under its own cgroup, gives it to
the user and starts warden in it. Without a usable pids cgroup the floods would have no cap (a
non-root server sets no RLIMIT_NPROC), so that case is skipped, saying why.

Runs alone (tests/CMakeLists.txt: the sandbox folder is RUN_SERIAL) and takes ~30 s."""
import json
import os
import pathlib
import resource
import shutil
import tempfile
import time
import uuid

import pytest

from conftest import request, script, warden_on_fake
from integration.test_tool_loop import Stream, call, chat, of_type

USER_UID = 61022  # a uid of no account: the normal user warden runs as
TIMEOUT_S = 60    # tool_call_timeout of the floods: they end by a cancel, long before
CONTROLLERS = ("pids", "memory", "cpu")


# --- cgroups as the host sees them ----------------------------------------------------------------

def cgroup_v1_mounts():
    """{controller: mount point} of the cgroup v1 hierarchies."""
    out = {}
    with open("/proc/self/mounts") as f:
        for line in f:
            dev, point, fstype, opts = line.split()[:4]
            if fstype != "cgroup":
                continue
            for c in CONTROLLERS:
                if c in opts.split(","):
                    out.setdefault(c, point)
    return out


def own_v1_path(controller):
    with open("/proc/self/cgroup") as f:
        for line in f:
            _, ctls, path = line.rstrip("\n").split(":", 2)
            if controller in ctls.split(","):
                return path
    return "/"


def call_procs(warden_pid):
    """pid -> command of every process warden started (its jails and all they started: an orphan
    is reparented to its jail's init, still below warden), warden itself and warm jails excluded."""
    parent, comm = {}, {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        name, rest = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:].split()
        parent[int(d)], comm[int(d)] = int(rest[1]), name
    out = {}
    for p in parent:
        q = parent.get(p)
        while q and q != warden_pid:
            q = parent.get(q)
        if q == warden_pid and not (parent[p] == warden_pid and comm[p] == comm.get(warden_pid)):
            out[p] = comm[p]  # (a child forked but not yet exec'd is not counted)
    # A warm jail waiting for its call, or being built (sandbox/warm_pool.h: the bash stub with
    # "$0" warden-warm, and its two bwrap processes, whose argv holds the stub's) is not a call's.
    for p in list(out):
        try:
            with open(f"/proc/{p}/cmdline", "rb") as f:
                if f.read().endswith(b"\0warden-warm\0"):
                    del out[p]
        except OSError:
            continue
    return out


def in_call_cgroups(warden_pid):
    """Processes still in a call cgroup of the warden `warden_pid` (also after warden is gone)."""
    marker = f"/warden/run-{warden_pid}-"
    out = []
    for d in os.listdir("/proc"):
        try:
            with open(f"/proc/{d}/cgroup") as f:
                if marker in f.read():
                    out.append(int(d))
        except (OSError, ValueError):
            pass
    return out


def wait_for(pred, timeout, what):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(0.1)
    raise AssertionError(f"not within {timeout}s: {what}")


# --- warden as root, or as a normal user in a delegated cgroup --------------------------------------

class Delegation:
    """A folder under this process's cgroup in each v1 hierarchy, owned by USER_UID (what systemd's
    Delegate=yes gives a service), and a prefix that starts warden in it as that user."""

    def __init__(self):
        self.dirs = []
        mounts = cgroup_v1_mounts()
        tag = "warden-test-" + uuid.uuid4().hex[:6]
        for c in CONTROLLERS:
            if c not in mounts:
                continue
            own = own_v1_path(c)
            d = mounts[c] + ("" if own == "/" else own) + "/" + tag
            os.mkdir(d)
            for p in (d, d + "/cgroup.procs", d + "/tasks"):
                os.chown(p, USER_UID, USER_UID)
            self.dirs.append(d)
        joins = "; ".join(f"echo $$ > {d}/cgroup.procs" for d in self.dirs)
        self.prefix = ("sh", "-c", f'{joins}; exec setpriv --reuid={USER_UID} --regid={USER_UID} --clear-groups "$@"',
                       "sh")

    def remove(self):
        for d in self.dirs:
            for sub in sorted(pathlib.Path(d).rglob("*"), key=lambda p: -len(p.parts)):
                if sub.is_dir():
                    try:
                        os.rmdir(sub)
                    except OSError:
                        pass
            try:
                os.rmdir(d)
            except OSError:
                pass


def start_warden(fake, as_user, *args):
    base = pathlib.Path(tempfile.mkdtemp(prefix="warden-limits-"))
    os.chmod(base, 0o755)
    home = base / "home"
    home.mkdir()
    delegation = None
    prefix = ()
    if as_user:
        if not cgroup_v1_mounts().get("pids"):
            shutil.rmtree(base)
            pytest.skip("no cgroup v1 pids hierarchy to delegate to a normal user here; without a pids cgroup a "
                        "non-root warden has no process cap, and the fork bomb would reach the whole machine")
        os.chown(home, USER_UID, USER_UID)
        delegation = Delegation()
        prefix = delegation.prefix
    w = warden_on_fake(fake, "--sse-ping-interval", "1000", "--call-memory", "512", "--workspace-quota", "64", *args,
                       home=home, prefix=prefix, env={"HOME": str(home)})
    w.base, w.delegation = base, delegation
    return w


def stop_warden(w):
    w.stop()
    if w.delegation:
        w.delegation.remove()
    shutil.rmtree(w.base, ignore_errors=True)


def warden_pid(w):
    """The warden process itself (under a prefix, Popen's pid is the exec'd chain: the same pid)."""
    return w.p.pid


# --- the test ----------------------------------------------------------------------------------------

FLOOD = "echo flooding; for i in $(seq 600); do sleep 60 & done; wait"
BOMB = "echo bombing; :(){ :|:& };:; sleep 60"
HOG = ("python3 -c \"\ntry:\n  bytearray(8 << 30)\nexcept MemoryError:\n  print('8 GiB refused', flush=True)\n"
       "b = []\nwhile True: b.append(bytearray(1 << 24))\"")
TMP_FILL = ("dd if=/dev/zero of=/tmp/f bs=1M count=100000 2>/dev/null; echo dd=$?; "
            "for i in 1 2 3; do dd if=/dev/zero of=/tmp/g$i bs=1M count=90 2>&1 | grep -o 'No space left on device'; done; "
            "yes > /tmp/y; echo yes=$?")
WS_FILL = "head -c 200M /dev/zero > big; echo big=$?; head -c 30M /dev/zero > more; echo more=$?; du -sm ."


def oom_kills_counted():
    """Whether this kernel counts memory kills per cgroup (v2 memory.events, or v1
    memory.oom_control's oom_kill line, Linux 4.13+)."""
    v1 = pathlib.Path("/sys/fs/cgroup/memory/memory.oom_control")
    if v1.exists():
        return "oom_kill " in v1.read_text()
    return pathlib.Path("/sys/fs/cgroup/memory.events").exists() or any(pathlib.Path("/sys/fs/cgroup").glob("*/memory.events"))


def a_call_that_holds(w, fake, session, command, marker):
    """Starts session A's request with one call that keeps its jail full; returns its stream once
    the call's cgroup holds at least 400 processes (and never more than 512)."""
    name = script(fake, [{"tool_calls": [call("terminal", {"command": command})]}, {"content": "a done"}])
    s = Stream(w.port, chat(name, session_id=session, permission_mode="off", tool_call_timeout=TIMEOUT_S), timeout=60)
    out = s.until_type("tool_output")
    assert marker in out["text"], out
    pid = warden_pid(w)
    # ... in the call's own cgroup (a fork bomb's count moves: its shells exit and fork again)
    wait_for(lambda: len(in_call_cgroups(pid)) >= 400, 20, f"{command!r} filling its call cgroup")
    # ... and no further than its 512 (checked on the flood before the bomb runs: an uncapped bomb
    # would reach the whole machine)
    time.sleep(0.5)
    assert len(call_procs(pid)) <= 512, len(call_procs(pid))
    return s


def b_runs(w, fake, session):
    """Session B's python and terminal calls, while A holds its call: both succeed."""
    name = script(fake, [{"tool_calls": [call("python", {"code": "print(6 * 7)"})]},
                         {"tool_calls": [call("terminal", {"command": "echo b-ok; ls /workspace | wc -l"})]},
                         {"content": "b done"}])
    t0 = time.time()
    frames = Stream(w.port, chat(name, session_id=session, permission_mode="off"), timeout=30).rest()
    ends = of_type(frames, "tool_end")
    assert [e["result"].split("\n")[0] for e in ends] == ["42", "b-ok"], ends
    assert all(e["allowed"] for e in ends), ends
    return time.time() - t0


def cancel(w, s, session):
    assert json.loads(request(w.port, "POST", "/api/inference/cancel", {"session_id": session})[2])["cancelled"] == 1
    end = s.until_type("tool_end")
    assert end["result"].startswith("Execution cancelled."), end
    s.rest()


def results_of(w, fake, session, commands):
    turns = [{"tool_calls": [call("terminal", {"command": c})]} for c in commands] + [{"content": "done"}]
    frames = Stream(w.port, chat(script(fake, turns), session_id=session, permission_mode="off",
                                 tool_call_timeout=TIMEOUT_S), timeout=60).rest()
    return [e["result"] for e in of_type(frames, "tool_end")]


def audit_rows(w, session):
    st, _, body = request(w.port, "GET", f"/api/audit?session_id={session}&limit=100")
    assert st == 200, body
    return json.loads(body)["data"]


@pytest.mark.parametrize("as_user", [False, True], ids=["root", "user"])
def test_one_session_cannot_starve_another(fake_upstream, as_user):
    if os.geteuid() != 0:
        pytest.skip("needs root: to run warden as root, and to delegate a cgroup to a normal user")
    w = start_warden(fake_upstream, as_user)
    a, b = "a-" + uuid.uuid4().hex[:6], "b-" + uuid.uuid4().hex[:6]
    try:
        pid = warden_pid(w)
        # the jail's own view: sized /tmp and /dev/shm; as root not the shared RLIMIT_NPROC of 512
        # but warden's own hard limit (the call's pids cgroup caps it instead)
        first = results_of(w, fake_upstream, b, ["df -B1M --output=size /tmp /dev/shm | tail -n 2 | tr -d \" \"; ulimit -u"])[0]
        assert first.split("\n")[:2] == ["256", "64"], first
        if not as_user:
            hard = resource.getrlimit(resource.RLIMIT_NPROC)[1]  # warden's, inherited from this process
            assert first.split("\n")[2] == ("unlimited" if hard == resource.RLIM_INFINITY else str(hard)), first
        # 1. a process flood holds A's call; B runs
        s = a_call_that_holds(w, fake_upstream, a, FLOOD, "flooding")
        took = b_runs(w, fake_upstream, b)
        assert len(call_procs(pid)) >= 300, "A's flood ended before B ran: B did not run during it"
        assert took < 20, took
        cancel(w, s, a)
        # 2. a fork bomb holds A's call; B runs
        s = a_call_that_holds(w, fake_upstream, a, BOMB, "bombing")
        took = b_runs(w, fake_upstream, b)
        assert len(call_procs(pid)) >= 300, "A's bomb ended before B ran"
        assert took < 20, took
        cancel(w, s, a)
        # nothing of A is left: no process below warden
        wait_for(lambda: not call_procs(pid), 15, "A's processes gone")
        # 3. memory, /tmp and the workspace
        hog, tmp, ws, refused = results_of(w, fake_upstream, a, [HOG, TMP_FILL, WS_FILL, "echo should-not-run"])
        assert "8 GiB refused" in hog and "Exit code 137" in hog, hog  # RLIMIT_AS, then the call's 512 MiB
        # ... and the model is told why (the cgroup counted the kill), where the kernel counts it
        if oom_kills_counted():
            assert "reached its memory limit of 512 MiB, --call-memory" in hog, hog
        assert "dd=153" in tmp, tmp  # SIGXFSZ: 100 MiB per file
        assert "No space left on device" in tmp and "yes=1" in tmp, tmp  # the 256 MiB /tmp is full
        assert "big=153" in ws, ws  # SIGXFSZ: one file cannot take more than what was left of 64 MiB
        assert refused.startswith("Execution error: the session workspace holds ") and "over its quota of 64 MiB" in refused, refused
        rows = audit_rows(w, a)
        last = rows[-1]
        assert not last["allowed"] and last["reason"].startswith("not run: the session workspace holds "), last
        assert last["exit_status"] is None, last
        # B still runs, in its own workspace
        b_runs(w, fake_upstream, b)
        # B's calls have ended. What may still show for a moment is no call's process: the warm
        # jail refilled for B's workspace between its exec and its argv being set (an empty
        # cmdline), or a process exited and not yet reaped (a zombie: empty cmdline too). CI saw
        # one such "bwrap" under ASan load; a process that outlives its call stays and fails this.
        left = {}
        deadline = time.time() + 10
        while time.time() < deadline:
            left = call_procs(pid)
            if not left:
                break
            time.sleep(0.1)
        assert not left, f"processes of ended calls still below warden after 10 s: {left}"
    finally:
        request(w.port, "POST", "/api/inference/cancel", {"session_id": a})
        stop_warden(w)
    assert not in_call_cgroups(pid), "processes of the test's calls are still running"


def test_a_jail_that_could_not_start_is_recorded_as_not_run(fake_upstream, tmp_path):
    """bubblewrap that works at start-up (the probe) and then fails the way it did when one
    session had used up uid 65534's processes: the call reads as not run, with bubblewrap's
    message, not as a call that ran and exited 1."""
    d = pathlib.Path(tempfile.mkdtemp(prefix="warden-fake-bwrap-"))
    os.chmod(d, 0o755)
    fake_bwrap = d / "bwrap"
    fake_bwrap.write_text(f"#!/bin/sh\nif [ -e {d}/fail ]; then\n"
                          "  echo 'bwrap: Creating new namespace failed: Resource temporarily unavailable' >&2; exit 1\n"
                          "fi\nexec /usr/bin/bwrap \"$@\"\n")
    os.chmod(fake_bwrap, 0o755)
    # Cold jails only: the warm jail made after the first call (sandbox/warm_pool.h) is built
    # before bubblewrap starts failing, so the second call would run in it.
    w = warden_on_fake(fake_upstream, "--bwrap", str(fake_bwrap), "--warm-jails", "0", home=tmp_path)
    try:
        sid = "nr-" + uuid.uuid4().hex[:6]
        ok = results_of(w, fake_upstream, sid, ["echo ran; exit 1"])
        assert ok[0].startswith("Exit code 1:\nran"), ok
        (d / "fail").write_text("x")
        failed = results_of(w, fake_upstream, sid, ["echo ran"])
        assert failed[0] == ("Execution error: the program was not started: bwrap: Creating new namespace failed: "
                             "Resource temporarily unavailable"), failed
        rows = audit_rows(w, sid)
        assert len(rows) == 2, rows
        ran, not_run = rows
        assert ran["allowed"] and ran["exit_status"] == 1, ran
        assert not not_run["allowed"], not_run
        assert not_run["reason"] == ("not run: the program was not started: bwrap: Creating new namespace failed: "
                                     "Resource temporarily unavailable"), not_run
        assert not_run["exit_status"] is None and not_run["is_error"], not_run
    finally:
        w.stop()
        shutil.rmtree(d, ignore_errors=True)
