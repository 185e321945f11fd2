"""Escape suite: each attack runs through the python and the terminal tool, gated-then-allowed
and ungated, inside the sandbox, and must be contained while warden keeps serving.

Every attack, in each tool's form, has a positive control: the very same code run OUTSIDE the
jail, where it must escape (read the planted secret, reach the server, write the host file, ...).
A jailed case asserts its control first, so an attack that is broken (a wrong path, a typo, a
quoting slip) fails the test instead of passing as "contained". The control is, per attack
(CONTROLS):
  bypass               the same tool call through warden with bypass_permissions (the code runs
                       on the host as the server user, in a workspace of its own);
  and, where bypass deliberately protects the thing too, the same code run directly on the host
  by this test, the way the tool runs it (run_on_host), under the one condition that makes it
  succeed:
  unscrubbed_env       with the server's environment as it is (bypass scrubs secrets out of it);
  ptrace_capable       as root with CAP_SYS_PTRACE, the test runner (bypass drops that capability
                       and the server is non-dumpable, so bypass cannot read its /proc);
  pid1_carries_secret  in a bubblewrap jail (user and pid namespace, uid 65534, no capabilities)
                       whose bubblewrap was handed the server's environment: pid 1 of the jail
                       then carries the secret (on the host, pid 1 never has it);
  raw_output           with its output read straight from a pipe (warden caps it for the model
                       with the sandbox on or off alike).
Where bypass does protect (secrets, the server's /proc), test_bypass_still_protects checks that
it still does, against the same controls.

An attack prints ESCAPED when it got what it wanted; some are also checked from the host (files
written outside the workspace, a daemon still beating)."""
import os
import pathlib
import signal
import subprocess
import threading
import time
import uuid

import pytest

from conftest import request, warden_on_fake
from integration.test_tool_loop import Stream, call, chat, confirm, of_type, script  # noqa: F401

SECRET = "hunter2-" + uuid.uuid4().hex[:8]
PLAIN = "plain-" + uuid.uuid4().hex[:8]
MARK = "m4rk-" + uuid.uuid4().hex[:8]
TAG = uuid.uuid4().hex[:8]
TOOLS = ["python", "terminal"]
BWRAP = "/usr/bin/bwrap"
CLEAN_PATH = "/usr/local/bin:/usr/bin:/bin"


@pytest.fixture(scope="module")
def env(fake_upstream, tmp_path_factory):
    home = tmp_path_factory.mktemp("escape-home")
    # a dumpable process of the same user, without capabilities, with a marker in its environment
    victim = subprocess.Popen(["setpriv", "--bounding-set", "-all", "--inh-caps", "-all", "sleep", "600"],
                              env={"PATH": "/usr/bin:/bin", "ESCAPE_MARKER": MARK})
    server_env = {"WARDEN_HOME": str(home), "WARDEN_TEST_SECRET": SECRET, "ESCAPE_PROBE_PLAIN": PLAIN}
    w = warden_on_fake(fake_upstream, "--sse-ping-interval", "1000", home=home, env=server_env)
    # another session's workspace with a file in it
    other = home / "workspaces" / "other-session"
    name = script(fake_upstream, [{"tool_calls": [call("terminal", {"command": "echo private-data > private.txt"})]}, {"content": "ok"}])
    Stream(w.port, chat(name, session_id="other-session")).rest()
    assert (other / "private.txt").exists()
    e = {"w": w, "home": home, "other": other, "victim": victim, "fake": fake_upstream,
         "server_env": dict(os.environ, **server_env),  # what Warden() started the server with
         "host_dir": tmp_path_factory.mktemp("escape-host-control"),  # cwd of run_on_host
         "controls": {}}  # (attack, tool) -> control outcome, each run once per module
    yield e
    victim.kill()
    victim.wait()
    w.stop()
    kill_leftovers(e)


def host_paths(e):
    return {
        "home": pathlib.Path(os.path.expanduser("~")) / f".warden-escape-{TAG}",
        "etc": pathlib.Path(f"/etc/warden-escape-{TAG}"),
        "tmp": pathlib.Path(f"/tmp/warden-escape-{TAG}"),
        "other": e["other"] / f"escape-{TAG}",
    }


def attacks(e):
    w, other, p = e["w"], e["other"], host_paths(e)
    py_write = lambda path: f"open({str(path)!r},'w').write('x'); print('ESCAPED')"
    sh_write = lambda path: f"echo x > {path} && echo ESCAPED"
    return {
        # name: (python, terminal, control: where the same code escapes, see CONTROLS)
        "env_secret": (f"import os; print('ESCAPED' if any('{SECRET}' in v for v in os.environ.values()) else 'no')",
                       f"env | grep -q {SECRET} && echo ESCAPED", "unscrubbed_env"),
        "env_plain": (f"import os; print('ESCAPED' if '{PLAIN}' in os.environ.get('ESCAPE_PROBE_PLAIN','') else 'no')",
                      f"[ \"$ESCAPE_PROBE_PLAIN\" = {PLAIN} ] && echo ESCAPED", "bypass"),
        "server_environ": (f"print('ESCAPED' if b'{SECRET}' in open('/proc/{w.p.pid}/environ','rb').read() else 'no')",
                           f"grep -qa {SECRET} /proc/{w.p.pid}/environ && echo ESCAPED", "ptrace_capable"),
        "proc1_environ": (f"print('ESCAPED' if b'{SECRET}' in open('/proc/1/environ','rb').read() else 'no')",
                          f"grep -qa {SECRET} /proc/1/environ && echo ESCAPED", "pid1_carries_secret"),
        "other_process_environ": (f"print('ESCAPED' if b'{MARK}' in open('/proc/{e['victim'].pid}/environ','rb').read() else 'no')",
                                  f"grep -qa {MARK} /proc/{e['victim'].pid}/environ && echo ESCAPED", "bypass"),
        "connect_warden": (f"import socket; s=socket.create_connection(('127.0.0.1', {w.port}), 2); print('ESCAPED')",
                           f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {w.port}), 5); print('ESCAPED')\"",
                           "bypass"),
        "interfaces": ("import os; n=[i for i in os.listdir('/sys/class/net') if i!='lo']; print('ESCAPED' if n else 'only lo')",
                       "ls /sys/class/net | grep -vqx lo && echo ESCAPED", "bypass"),
        "write_home": (py_write(p["home"]), sh_write(p["home"]), "bypass"),
        "write_etc": (py_write(p["etc"]), sh_write(p["etc"]), "bypass"),
        "write_host_tmp": (f"open({str(p['tmp'])!r},'w').write('x')", f"echo x > {p['tmp']}", "bypass"),
        "write_other_workspace": (py_write(p["other"]), sh_write(p["other"]), "bypass"),
        "read_other_workspace": (f"print('ESCAPED' if 'private-data' in open({str(other / 'private.txt')!r}).read() else 'no')",
                                 f"grep -q private-data {other}/private.txt && echo ESCAPED", "bypass"),
        "fork_bomb": ("import os,time\nn=0\nfor i in range(1500):\n  try: pid=os.fork()\n  except OSError: break\n"
                      "  if pid==0: time.sleep(5); os._exit(0)\n  n+=1\nprint('ESCAPED' if n>=1500 else 'capped at %d' % n)",
                      "python3 -c \"import os,time\nn=0\nfor i in range(1500):\n  try: pid=os.fork()\n  except OSError: break\n"
                      "  if pid==0: time.sleep(5); os._exit(0)\n  n+=1\nprint('ESCAPED' if n>=1500 else 'capped at %d' % n)\"",
                      "bypass"),
        "daemon": (f"import os\nif os.fork()==0:\n  os.setsid()\n  if os.fork()==0:\n    import time\n    while True:\n"
                   f"      open('beat-{TAG}','a').write('x'); time.sleep(0.05)\n  os._exit(0)\nimport time\ntime.sleep(0.3)\nprint('forked')",
                   f"setsid bash -c 'while :; do echo x >> beat-{TAG}; sleep 0.05; done' > /dev/null 2>&1 & sleep 0.3; echo forked",
                   "bypass"),
        "alloc_64g": ("import ctypes,ctypes.util\nlibc=ctypes.CDLL(None, use_errno=True)\nlibc.mmap.restype=ctypes.c_void_p\n"
                      "p=libc.mmap(None, ctypes.c_size_t(64<<30), 3, 0x22|0x4000, -1, 0)\n"
                      "print('ESCAPED' if p not in (None, ctypes.c_void_p(-1).value) else 'refused')",
                      "python3 -c \"import ctypes\nlibc=ctypes.CDLL(None)\nlibc.mmap.restype=ctypes.c_void_p\n"
                      "p=libc.mmap(None, ctypes.c_size_t(64<<30), 3, 0x22|0x4000, -1, 0)\n"
                      "print('ESCAPED' if p not in (None, ctypes.c_void_p(-1).value) else 'refused')\"", "bypass"),
        "kill_warden": (f"import os,signal\nos.kill({w.p.pid}, SIG); print('ESCAPED')",
                        f"kill -SIG {w.p.pid} && echo ESCAPED", "bypass"),
        "write_sysctl": ("p='/proc/sys/kernel/printk_ratelimit'\nv=open(p).read()\nopen(p,'w').write(v); print('ESCAPED')",
                         "p=/proc/sys/kernel/printk_ratelimit; v=$(cat $p); echo $v > $p && echo ESCAPED", "bypass"),
        "setuid_root_file": (f"import shutil,os\nshutil.copy('/usr/bin/id','suid-{TAG}')\nos.chmod('suid-{TAG}',0o4755)",
                             f"cp /usr/bin/id suid-{TAG} && chmod 4755 suid-{TAG}", "bypass"),
        "vsock_socket": ("import socket\ns=socket.socket(40, socket.SOCK_STREAM); print('ESCAPED')",
                         "python3 -c \"import socket\ns=socket.socket(40, socket.SOCK_STREAM); print('ESCAPED')\"", "bypass"),
        "inet_socket_high_bits": ("import ctypes\nl=ctypes.CDLL(None)\nl.syscall.restype=ctypes.c_long\n"
                                  "fd=l.syscall(41, ctypes.c_long(2 | (1 << 32)), 1, 0)\nprint('ESCAPED' if fd >= 0 else 'refused')",
                                  "python3 -c \"import ctypes\nl=ctypes.CDLL(None)\nl.syscall.restype=ctypes.c_long\n"
                                  "fd=l.syscall(41, ctypes.c_long(2 | (1 << 32)), 1, 0)\nprint('ESCAPED' if fd >= 0 else 'refused')\"",
                                  "bypass"),
        "huge_output": ("import sys\nb='a'*(1<<20)\nfor i in range(1024): sys.stdout.write(b)",
                        "head -c 1073741824 /dev/zero | tr '\\0' a", "raw_output"),
    }


# How each control shows that an attack works outside the jail (see the module docstring).
CONTROLS = {
    "bypass": "the same tool call with bypass_permissions, on the host as the server user",
    "unscrubbed_env": "run on the host with the server's environment as it is (bypass scrubs the secret)",
    "ptrace_capable": "run on the host as root with CAP_SYS_PTRACE (bypass drops it; the server is non-dumpable)",
    "pid1_carries_secret": "run in a bubblewrap jail whose bubblewrap got the server's environment",
    "raw_output": "run on the host with the output read straight from a pipe (warden caps it either way)",
}


def code_of(e, attack, tool, outside=False):
    code = attacks(e)[attack][0 if tool == "python" else 1]
    if attack == "kill_warden":
        # Outside the jail signal 0: kill(2) makes the same existence and permission checks as
        # for SIGKILL, so it proves the server could be killed without killing this module's
        # server (a faithful SIGKILL control would need a server of its own per case).
        code = code.replace("SIG", "0" if outside else ("9" if tool == "terminal" else "signal.SIGKILL"))
    return code


def hide_marker(code):
    """The marker is assembled at run time, so a traceback that quotes the source cannot fake it."""
    return code.replace("'ESCAPED'", "'ESC'+'APED'").replace("echo ESCAPED", "echo ESC''APED")


def run_tool(e, tool, code, flags, session, timeout=20):
    """The code as the model's tool call; the tool's result. A jailed attack cut short by the
    timeout is still contained; a control gets longer (a fork bomb on two busy cores is slow)."""
    code = hide_marker(code)
    arg = {"code": code} if tool == "python" else {"command": code}
    name = script(e["fake"], [{"tool_calls": [call(tool, arg)]}, {"content": "done"}])
    s = Stream(e["w"].port, chat(name, session_id=session, tool_call_timeout=timeout, **flags), timeout=timeout + 100)
    start = s.until_type("tool_start")
    if start["awaiting_confirmation"]:
        assert confirm(e["w"], start["approval_id"], "allow")[0] == 200
    end = s.until_type("tool_end")
    s.rest()
    return end["result"]


def run_on_host(e, tool, code, env, wrap=(), keep=1 << 20, timeout=60):
    """Runs `code` directly on the host as this test (root), without warden, the way the tool
    runs it (python: /usr/bin/python3 -I -u on a script file in the working directory; terminal:
    /bin/bash --noprofile --norc -c), stdin /dev/null, in its own session; `wrap` goes before
    the program. Returns the merged output, at most `keep` bytes (the program is killed then)."""
    code = hide_marker(code)
    cwd = e["host_dir"]
    if tool == "python":
        name = f".warden_run_{uuid.uuid4().hex[:12]}.py"
        (cwd / name).write_text(code)
        argv = ["/usr/bin/python3", "-I", "-u", name]
    else:
        argv = ["/bin/bash", "--noprofile", "--norc", "-c", code]
    p = subprocess.Popen([*wrap, *argv], cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, start_new_session=True)

    def kill_group():
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    timer = threading.Timer(timeout, kill_group)
    timer.start()
    out = b""
    try:
        while len(out) < keep:
            chunk = p.stdout.read1(65536)
            if not chunk:
                break
            out += chunk
    finally:
        timer.cancel()
        kill_group()  # before the wait: the group's leader is not reaped yet, its pid not reused
        p.wait()
        p.stdout.close()
    return out[:keep].decode(errors="replace")


def run_control(e, attack, tool):
    """The attack's code, outside the jail, under the conditions CONTROLS names; True when it
    escaped there."""
    kind = attacks(e)[attack][2]
    code = code_of(e, attack, tool, outside=True)
    clean = {"PATH": CLEAN_PATH, "LANG": "C.UTF-8"}
    if kind == "bypass":
        session = f"ctl-{attack}-{tool}".replace("_", "-")
        result = run_tool(e, tool, code, {"bypass_permissions": True}, session, timeout=90)
        return escaped(e, attack, result, session, bypass=True), result
    if kind == "unscrubbed_env":
        result = run_on_host(e, tool, code, e["server_env"])
    elif kind == "ptrace_capable":
        result = run_on_host(e, tool, code, clean)
    elif kind == "pid1_carries_secret":
        # the jail's shape (sandbox/bwrap.cpp: user and pid namespace, uid 65534, no capabilities,
        # a fresh /proc, an environment built from scratch), but bubblewrap itself started with
        # the server's environment: the jail's pid 1 is bubblewrap's init, which keeps it
        wrap = [BWRAP, "--dev-bind", "/", "/", "--unshare-user", "--unshare-pid", "--uid", "65534", "--gid", "65534",
                "--cap-drop", "ALL", "--proc", "/proc", "--clearenv", "--setenv", "PATH", CLEAN_PATH, "--"]
        # (--clearenv: the program's own environment, which is not pid 1's, has no secret)
        result = run_on_host(e, tool, code, e["server_env"], wrap)
    elif kind == "raw_output":
        result = run_on_host(e, tool, code, clean)
        # a real flood of text: a megabyte read, every character the 'a' the attack writes
        return len(result) >= 1 << 20 and not result.strip("a"), result[:200] + f"... ({len(result)} chars)"
    else:
        raise AssertionError(f"unknown control {kind}")
    return escaped(e, attack, result, None), result


def control(e, attack, tool):
    """(escaped outside, how, output): run once per attack and tool, then remembered."""
    key = (attack, tool)
    if key not in e["controls"]:
        try:
            ok, result = run_control(e, attack, tool)
        finally:
            cleanup(e)
        e["controls"][key] = (ok, CONTROLS[attacks(e)[attack][2]], result[:500])
    return e["controls"][key]


def assert_control(e, attack, tool):
    ok, how, result = control(e, attack, tool)
    assert ok, (f"{attack} via {tool} does not escape even outside the jail ({how}): the attack is broken, "
                f"so its containment proves nothing. Output: {result}")


def escaped(e, attack, result, session, bypass=False):
    p = host_paths(e)
    if attack == "write_home":
        return p["home"].exists()
    if attack == "write_etc":
        return p["etc"].exists()
    if attack == "write_host_tmp":
        return p["tmp"].exists()
    if attack == "write_other_workspace":
        return p["other"].exists()
    if attack == "huge_output":
        return len(result) > 20000
    if attack in ("daemon", "setuid_root_file"):
        # bypass runs have a workspace of their own on the host (tools: k_host_workspaces)
        ws = e["home"] / "workspaces" / (".host/" + session if bypass else session)
        if attack == "daemon":
            beat = ws / f"beat-{TAG}"
            time.sleep(0.4)
            a = beat.stat().st_size if beat.exists() else 0
            time.sleep(0.4)
            return beat.exists() and beat.stat().st_size != a
        f = ws / f"suid-{TAG}"
        if not f.exists():
            return False
        st = f.stat()
        return st.st_uid == 0 and bool(st.st_mode & 0o4000)
    return "ESCAPED" in result


def kill_leftovers(e):
    """Kills, by pid, what a run leaves behind on the host: processes whose working directory is
    in this module's workspaces (a bypass daemon, a fork bomb's sleepers) or whose command line
    names this module's beat file."""
    root = str(e["home"] / "workspaces")
    spare = {os.getpid(), e["w"].p.pid, e["victim"].pid}
    for _ in range(50):
        hit = False
        for d in os.listdir("/proc"):
            if not d.isdigit() or int(d) in spare:
                continue
            try:
                cwd = os.readlink(f"/proc/{d}/cwd")
                with open(f"/proc/{d}/cmdline", "rb") as f:
                    cmd = f.read()
            except OSError:  # gone, or a zombie
                continue
            if cwd == root or cwd.startswith(root + "/") or f"beat-{TAG}".encode() in cmd:
                try:
                    os.kill(int(d), signal.SIGKILL)
                    hit = True
                except ProcessLookupError:
                    pass
        if not hit:
            return
        time.sleep(0.05)


def cleanup(e):
    for path in host_paths(e).values():  # (files the controls write on purpose)
        try:
            path.unlink()
        except FileNotFoundError:
            pass
    kill_leftovers(e)


ATTACKS = ["env_secret", "env_plain", "server_environ", "proc1_environ", "other_process_environ", "connect_warden",
           "interfaces", "write_home", "write_etc", "write_host_tmp", "write_other_workspace", "read_other_workspace",
           "fork_bomb", "daemon", "alloc_64g", "kill_warden", "write_sysctl", "setuid_root_file", "vsock_socket",
           "inet_socket_high_bits", "huge_output"]


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("where", ["outside", "jailed-gated-allowed", "jailed-ungated"])
@pytest.mark.parametrize("attack", ATTACKS)
def test_attack(env, attack, where, tool):
    """outside: the positive control escapes. jailed-*: the control escapes (it ran once for the
    attack and tool), and the same code as the model's tool call in the sandbox, with the approval
    gate on (then allowed) or off, is contained while warden keeps serving."""
    assert_control(env, attack, tool)
    if where == "outside":
        return
    gated = where == "jailed-gated-allowed"
    session = f"atk-{attack}-{tool}-{int(gated)}".replace("_", "-")
    flags = {"confirm_code_execution": True} if gated else {}
    try:
        result = run_tool(env, tool, code_of(env, attack, tool), flags, session)
        assert not escaped(env, attack, result, session), f"{attack} via {tool} escaped the sandbox: {result[:500]}"
        assert request(env["w"].port, "GET", "/health")[0] == 200  # warden keeps serving
    finally:
        cleanup(env)


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("attack", ["env_secret", "server_environ", "proc1_environ"])
def test_bypass_still_protects(env, attack, tool):
    """What bypass_permissions keeps from the tool even on the host: the server's secret variables
    (scrubbed) and its /proc (non-dumpable, the tool without CAP_SYS_PTRACE). Each against the
    attack's control, which shows the same code does find the secret where it is reachable.
    proc1_environ: on the host pid 1 is not the server, so this matters where warden itself is a
    container's pid 1."""
    assert_control(env, attack, tool)
    session = f"byp-{attack}-{tool}".replace("_", "-")
    try:
        result = run_tool(env, tool, code_of(env, attack, tool), {"bypass_permissions": True}, session)
        assert not escaped(env, attack, result, session, bypass=True), \
            f"{attack} via {tool} with the sandbox off got the secret: {result[:500]}"
        assert request(env["w"].port, "GET", "/health")[0] == 200
    finally:
        cleanup(env)
