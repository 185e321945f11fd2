"""Escape suite: each attack runs through the python and the terminal tool, gated-then-allowed
and ungated, inside the sandbox, and must be contained while warden keeps serving. The same
attack with the sandbox off (bypass_permissions) must succeed where bypass does not protect, so
every check here can fail; where bypass does protect (secrets, the server's /proc), it must
still be contained.

An attack prints ESCAPED when it got what it wanted; some are also checked from the host (files
written outside the workspace, a daemon still beating)."""
import json
import os
import pathlib
import signal
import subprocess
import time
import uuid

import pytest

from conftest import Warden, request
from integration.test_tool_loop import Stream, call, chat, confirm, of_type, script  # noqa: F401

SECRET = "hunter2-" + uuid.uuid4().hex[:8]
PLAIN = "plain-" + uuid.uuid4().hex[:8]
MARK = "m4rk-" + uuid.uuid4().hex[:8]
TAG = uuid.uuid4().hex[:8]


@pytest.fixture(scope="module")
def env(fake_upstream, tmp_path_factory):
    home = tmp_path_factory.mktemp("escape-home")
    # a dumpable process of the same user, without capabilities, with a marker in its environment
    victim = subprocess.Popen(["setpriv", "--bounding-set", "-all", "--inh-caps", "-all", "sleep", "600"],
                              env={"PATH": "/usr/bin:/bin", "ESCAPE_MARKER": MARK})
    w = Warden("--upstream", fake_upstream.url, "--sse-ping-interval", "1000",
               env_extra={"WARDEN_HOME": str(home), "WARDEN_TEST_SECRET": SECRET, "ESCAPE_PROBE_PLAIN": PLAIN})
    # another session's workspace with a file in it
    other = home / "workspaces" / "other-session"
    name = script(fake_upstream, [{"tool_calls": [call("terminal", {"command": "echo private-data > private.txt"})]}, {"content": "ok"}])
    Stream(w.port, chat(name, session_id="other-session")).rest()
    assert (other / "private.txt").exists()
    yield {"w": w, "home": home, "other": other, "victim": victim, "fake": fake_upstream}
    victim.kill()
    w.stop()


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
        # name: (python, terminal, bypass expectation: "escaped" | "contained" | None (not run))
        "env_secret": (f"import os; print('ESCAPED' if any('{SECRET}' in v for v in os.environ.values()) else 'no')",
                       f"env | grep -q {SECRET} && echo ESCAPED", "contained"),
        "env_plain": (f"import os; print('ESCAPED' if '{PLAIN}' in os.environ.get('ESCAPE_PROBE_PLAIN','') else 'no')",
                      f"[ \"$ESCAPE_PROBE_PLAIN\" = {PLAIN} ] && echo ESCAPED", "escaped"),
        "server_environ": (f"print('ESCAPED' if b'{SECRET}' in open('/proc/{w.p.pid}/environ','rb').read() else 'no')",
                           f"grep -qa {SECRET} /proc/{w.p.pid}/environ && echo ESCAPED", "contained"),
        "proc1_environ": (f"print('ESCAPED' if b'{SECRET}' in open('/proc/1/environ','rb').read() else 'no')",
                          f"grep -qa {SECRET} /proc/1/environ && echo ESCAPED", "contained"),
        "other_process_environ": (f"print('ESCAPED' if b'{MARK}' in open('/proc/{e['victim'].pid}/environ','rb').read() else 'no')",
                                  f"grep -qa {MARK} /proc/{e['victim'].pid}/environ && echo ESCAPED", "escaped"),
        "connect_warden": (f"import socket; s=socket.create_connection(('127.0.0.1', {w.port}), 2); print('ESCAPED')",
                           f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {w.port}), 5); print('ESCAPED')\"",
                           "escaped"),
        "interfaces": ("import os; n=[i for i in os.listdir('/sys/class/net') if i!='lo']; print('ESCAPED' if n else 'only lo')",
                       "ls /sys/class/net | grep -vqx lo && echo ESCAPED", "escaped"),
        "write_home": (py_write(p["home"]), sh_write(p["home"]), "escaped"),
        "write_etc": (py_write(p["etc"]), sh_write(p["etc"]), "escaped"),
        "write_host_tmp": (f"open({str(p['tmp'])!r},'w').write('x')", f"echo x > {p['tmp']}", "escaped"),
        "write_other_workspace": (py_write(p["other"]), sh_write(p["other"]), "escaped"),
        "read_other_workspace": (f"print('ESCAPED' if 'private-data' in open({str(other / 'private.txt')!r}).read() else 'no')",
                                 f"grep -q private-data {other}/private.txt && echo ESCAPED", "escaped"),
        "fork_bomb": ("import os,time\nn=0\nfor i in range(1500):\n  try: pid=os.fork()\n  except OSError: break\n"
                      "  if pid==0: time.sleep(5); os._exit(0)\n  n+=1\nprint('ESCAPED' if n>=1500 else 'capped at %d' % n)",
                      "python3 -c \"import os,time\nn=0\nfor i in range(1500):\n  try: pid=os.fork()\n  except OSError: break\n"
                      "  if pid==0: time.sleep(5); os._exit(0)\n  n+=1\nprint('ESCAPED' if n>=1500 else 'capped at %d' % n)\"",
                      "escaped"),
        "daemon": (f"import os\nif os.fork()==0:\n  os.setsid()\n  if os.fork()==0:\n    import time\n    while True:\n"
                   f"      open('beat-{TAG}','a').write('x'); time.sleep(0.05)\n  os._exit(0)\nimport time\ntime.sleep(0.3)\nprint('forked')",
                   f"setsid bash -c 'while :; do echo x >> beat-{TAG}; sleep 0.05; done' > /dev/null 2>&1 & sleep 0.3; echo forked",
                   "escaped"),
        "alloc_64g": ("import ctypes,ctypes.util\nlibc=ctypes.CDLL(None, use_errno=True)\nlibc.mmap.restype=ctypes.c_void_p\n"
                      "p=libc.mmap(None, ctypes.c_size_t(64<<30), 3, 0x22|0x4000, -1, 0)\n"
                      "print('ESCAPED' if p not in (None, ctypes.c_void_p(-1).value) else 'refused')",
                      "python3 -c \"import ctypes\nlibc=ctypes.CDLL(None)\nlibc.mmap.restype=ctypes.c_void_p\n"
                      "p=libc.mmap(None, ctypes.c_size_t(64<<30), 3, 0x22|0x4000, -1, 0)\n"
                      "print('ESCAPED' if p not in (None, ctypes.c_void_p(-1).value) else 'refused')\"", "escaped"),
        "kill_warden": (f"import os,signal\nos.kill({w.p.pid}, SIG); print('ESCAPED')",
                        f"kill -SIG {w.p.pid} && echo ESCAPED", "escaped"),
        "write_sysctl": ("p='/proc/sys/kernel/printk_ratelimit'\nv=open(p).read()\nopen(p,'w').write(v); print('ESCAPED')",
                         "p=/proc/sys/kernel/printk_ratelimit; v=$(cat $p); echo $v > $p && echo ESCAPED", "escaped"),
        "setuid_root_file": (f"import shutil,os\nshutil.copy('/usr/bin/id','suid-{TAG}')\nos.chmod('suid-{TAG}',0o4755)",
                             f"cp /usr/bin/id suid-{TAG} && chmod 4755 suid-{TAG}", "escaped"),
        "vsock_socket": ("import socket\ns=socket.socket(40, socket.SOCK_STREAM); print('ESCAPED')",
                         "python3 -c \"import socket\ns=socket.socket(40, socket.SOCK_STREAM); print('ESCAPED')\"", "escaped"),
        "inet_socket_high_bits": ("import ctypes\nl=ctypes.CDLL(None)\nl.syscall.restype=ctypes.c_long\n"
                                  "fd=l.syscall(41, ctypes.c_long(2 | (1 << 32)), 1, 0)\nprint('ESCAPED' if fd >= 0 else 'refused')",
                                  "python3 -c \"import ctypes\nl=ctypes.CDLL(None)\nl.syscall.restype=ctypes.c_long\n"
                                  "fd=l.syscall(41, ctypes.c_long(2 | (1 << 32)), 1, 0)\nprint('ESCAPED' if fd >= 0 else 'refused')\"",
                                  "escaped"),
        "huge_output": ("import sys\nb='a'*(1<<20)\nfor i in range(1024): sys.stdout.write(b)",
                        "head -c 1073741824 /dev/zero | tr '\\\\0' a", None),
    }


def hide_marker(code):
    """The marker is assembled at run time, so a traceback that quotes the source cannot fake it."""
    return code.replace("'ESCAPED'", "'ESC'+'APED'").replace("echo ESCAPED", "echo ESC''APED")


def run_tool(e, tool, code, flags, session):
    code = hide_marker(code)
    arg = {"code": code} if tool == "python" else {"command": code}
    name = script(e["fake"], [{"tool_calls": [call(tool, arg)]}, {"content": "done"}])
    s = Stream(e["w"].port, chat(name, session_id=session, tool_call_timeout=20, **flags), timeout=120)
    start = s.until_type("tool_start")
    if start["awaiting_confirmation"]:
        assert confirm(e["w"], start["approval_id"], "allow")[0] == 200
    end = s.until_type("tool_end")
    s.rest()
    return end["result"]


def escaped(e, attack, result, session, bypass=False):
    p = host_paths(e)
    # bypass runs have a workspace of their own on the host (tools/tool.h, k_host_workspaces)
    ws = e["home"] / "workspaces" / (".host/" + session if bypass else session)
    if attack == "write_home":
        return p["home"].exists()
    if attack == "write_etc":
        return p["etc"].exists()
    if attack == "write_host_tmp":
        return p["tmp"].exists()
    if attack == "write_other_workspace":
        return p["other"].exists()
    if attack == "daemon":
        beat = ws / f"beat-{TAG}"
        time.sleep(0.4)
        a = beat.stat().st_size if beat.exists() else 0
        time.sleep(0.4)
        return beat.exists() and beat.stat().st_size != a
    if attack == "huge_output":
        return len(result) > 20000
    if attack == "setuid_root_file":
        f = ws / f"suid-{TAG}"
        if not f.exists():
            return False
        st = f.stat()
        return st.st_uid == 0 and bool(st.st_mode & 0o4000)
    return "ESCAPED" in result


def cleanup(e):
    for path in host_paths(e).values():  # (files the bypass control writes on purpose)
        try:
            path.unlink()
        except FileNotFoundError:
            pass
    subprocess.run(["pkill", "-f", f"beat-{TAG}"], check=False)


ATTACKS = ["env_secret", "env_plain", "server_environ", "proc1_environ", "other_process_environ", "connect_warden",
           "interfaces", "write_home", "write_etc", "write_host_tmp", "write_other_workspace", "read_other_workspace",
           "fork_bomb", "daemon", "alloc_64g", "kill_warden", "write_sysctl", "setuid_root_file", "vsock_socket",
           "inet_socket_high_bits", "huge_output"]


@pytest.mark.parametrize("tool", ["python", "terminal"])
@pytest.mark.parametrize("gated", [True, False], ids=["gated-allowed", "ungated"])
@pytest.mark.parametrize("attack", ATTACKS)
def test_contained_in_the_sandbox(env, attack, tool, gated):
    code = attacks(env)[attack][0 if tool == "python" else 1].replace("SIG", "9" if tool == "terminal" else "signal.SIGKILL")
    session = f"atk-{attack}-{tool}-{int(gated)}".replace("_", "-")
    flags = {"confirm_code_execution": True} if gated else {}
    try:
        result = run_tool(env, tool, code, flags, session)
        assert not escaped(env, attack, result, session), f"{attack} via {tool} escaped the sandbox: {result[:500]}"
        assert request(env["w"].port, "GET", "/health")[0] == 200  # warden keeps serving
    finally:
        cleanup(env)


@pytest.mark.parametrize("attack", ATTACKS)
def test_same_attack_with_the_sandbox_off(env, attack):
    """bypass_permissions: the attack succeeds where bypass gives no protection (so the sandboxed
    test above can fail), and is still contained for secrets and the server's /proc."""
    want = attacks(env)[attack][2]
    if want is None:
        pytest.skip("output capping is the same with and without the sandbox")
    code = attacks(env)[attack][1].replace("SIG", "0")  # signal 0: only proves the pid is reachable
    session = f"ctl-{attack}".replace("_", "-")
    try:
        result = run_tool(env, "terminal", code, {"bypass_permissions": True}, session)
        assert escaped(env, attack, result, session, bypass=True) == (want == "escaped"), \
            f"{attack} with the sandbox off: {result[:500]}"
        assert request(env["w"].port, "GET", "/health")[0] == 200
    finally:
        cleanup(env)
