"""End to end: what another process on the host can learn from the llama-server child.

warden is started (real llama-server, real model) with planted secrets in its environment. The
child must get none of them, nor its API key in its environment or command line (the key comes
through an inherited pipe, `--api-key-file /proc/self/fd/3`), and it must be non-dumpable (the
preload libwarden_nodump.so next to the warden binary).

Dumpability as root: root's CAP_SYS_PTRACE overrides it, and a checker with another uid is
refused by uid alone, so neither shows anything. What does show it: warden and the checker both
run as root without CAP_SYS_PTRACE in their bounding set (setpriv). Then the kernel's only
remaining ptrace check is the dumpable flag: the checker may read /proc/<pid>/mem of, and attach
to, a dumpable process started the same way (the control) but not llama-server. (On this kernel
such a checker can still read /proc/<pid>/environ of a non-dumpable root process; a non-root user
cannot: see README.)
"""
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from conftest import WARDEN_BIN, on_model

NO_PTRACE = ["setpriv", "--bounding-set=-sys_ptrace", "--inh-caps=-sys_ptrace"]
CAP_SYS_PTRACE = 19

# ~10 secrets, some of them under names llama-server is allowed to get (their values give them away)
PLANTED = {
    "OPENAI_API_KEY": "sk-planted01-openai",
    "ANTHROPIC_API_KEY": "sk-ant-planted02",
    "HF_TOKEN": "hf_planted03token",
    "GITHUB_TOKEN": "ghp_planted04token",
    "AWS_SECRET_ACCESS_KEY": "planted05-aws-secret",
    "DATABASE_URL": "postgres://app:planted06pw@db.internal/app",
    "STRIPE_KEY": "sk_live_planted07",
    "MY_SERVICE_PASSWORD": "planted08-password",
    "LLAMA_API_KEY": "planted09-llama-key",
    "LLAMA_ARG_HOST": "0.0.0.0",
    "GGML_API_KEY": "planted10-ggml",
    "LANGUAGE": "glpat-planted11XyZ0123456789abc",  # a GitLab token format (secrets/secret_detect.h)
}
ALLOWED_EXACT = {"PATH", "HOME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES",
                 "CUDA_DEVICE_ORDER", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL",
                 "HSA_OVERRIDE_GFX_VERSION", "ONEAPI_DEVICE_SELECTOR", "LD_PRELOAD"}
ALLOWED_PREFIXES = ("LC_", "GGML_", "OMP_")
PRELOAD = os.path.join(os.path.dirname(os.path.realpath(WARDEN_BIN)), "libwarden_nodump.so")

# Run as the checker: reads /proc/<pid>/mem at a mapped address, then PTRACE_ATTACH; prints
# "mem=<ok|errno name> attach=<ok|errno name>".
CHECKER = r"""
import ctypes, errno, os, sys
pid = int(sys.argv[1])
def err(e): return errno.errorcode.get(e, str(e))
try:
    start = int(open(f"/proc/{pid}/maps").readline().split("-")[0], 16)
    with open(f"/proc/{pid}/mem", "rb") as f:
        f.seek(start)
        f.read(8)
    mem = "ok"
except OSError as e:
    mem = err(e.errno)
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
if libc.ptrace(16, pid, None, None) == 0:  # PTRACE_ATTACH
    attach = "ok"
    os.waitpid(pid, 0)
    libc.ptrace(17, pid, None, None)  # PTRACE_DETACH
else:
    attach = err(ctypes.get_errno())
print(f"mem={mem} attach={attach}")
"""

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the dumpability check runs as root")


WARDEN = on_model(env=PLANTED, prefix=NO_PTRACE)  # the module's `warden` fixture (conftest.py)


def proc_read(pid, name):
    with open(f"/proc/{pid}/{name}", "rb") as f:
        return f.read()


def environ(pid):
    return dict(e.split(b"=", 1) for e in proc_read(pid, "environ").split(b"\0") if b"=" in e)


def check_as_root_without_ptrace(pid):
    r = subprocess.run(NO_PTRACE + [sys.executable, "-c", CHECKER, str(pid)], capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_environment_is_the_allow_list_without_secrets(warden):
    pid = warden.llama_pid()
    env = environ(pid)
    raw = proc_read(pid, "environ")
    for name, value in PLANTED.items():
        assert value.encode() not in raw, name
        assert name.encode() + b"=" not in raw, name
    assert warden.llama_key().encode() not in raw
    assert b"planted" not in raw
    for name in env:
        n = name.decode()
        assert n in ALLOWED_EXACT or n.startswith(ALLOWED_PREFIXES), n
    assert not any(n.startswith(b"LLAMA_") for n in env)
    assert env[b"LD_PRELOAD"].decode() == PRELOAD
    # warden itself did get them (the test plants them correctly)
    assert set(PLANTED) <= set(k.decode() for k in environ(warden.p.pid))


def test_key_is_not_on_the_command_line_but_in_an_emptied_pipe(warden):
    pid = warden.llama_pid()
    argv = proc_read(pid, "cmdline").split(b"\0")
    assert warden.llama_key().encode() not in b" ".join(argv)
    assert b"--api-key" not in argv
    i = argv.index(b"--api-key-file")
    assert argv[i + 1] == b"/proc/self/fd/3"
    assert os.readlink(f"/proc/{pid}/fd/3").startswith("pipe:")
    # llama-server read it to the end: nothing is left for anyone who opens it now
    fd = os.open(f"/proc/{pid}/fd/3", os.O_RDONLY | os.O_NONBLOCK)
    try:
        assert os.read(fd, 4096) == b""
    except BlockingIOError:
        pytest.fail("a writer of llama-server's key pipe is still open")
    finally:
        os.close(fd)
    # and no file of the child holds it
    for fd_name in os.listdir(f"/proc/{pid}/fd"):
        target = os.readlink(f"/proc/{pid}/fd/{fd_name}")
        assert "key" not in target, target


def test_llama_server_needs_the_key(warden):
    url = warden.llama_url() + "/v1/models"
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(url, timeout=10)
    assert e.value.code == 401
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(urllib.request.Request(url, headers={"Authorization": "Bearer planted09-llama-key"}),
                               timeout=10)
    assert e.value.code == 401
    req = urllib.request.Request(url, headers={"Authorization": "Bearer " + warden.llama_key()})
    with urllib.request.urlopen(req, timeout=10) as r:
        assert r.status == 200


def test_llama_server_is_not_dumpable(warden):
    pid = warden.llama_pid()
    # the preload is loaded (its constructor has run before llama-server's main)
    assert PRELOAD.encode() in proc_read(pid, "maps")
    # precondition: the child has no CAP_SYS_PTRACE either, so the checker's capabilities cover its
    # own (otherwise the kernel refuses the checker for that reason, dumpable or not)
    cap_prm = [l for l in proc_read(pid, "status").decode().splitlines() if l.startswith("CapPrm:")][0]
    assert not int(cap_prm.split()[1], 16) & (1 << CAP_SYS_PTRACE), cap_prm
    # control: a dumpable process started the same way can be read and attached to
    control = subprocess.Popen(NO_PTRACE + ["sleep", "60"])
    try:
        time.sleep(0.2)
        assert check_as_root_without_ptrace(control.pid) == "mem=ok attach=ok"
    finally:
        control.send_signal(signal.SIGKILL)
        control.wait()
    assert check_as_root_without_ptrace(pid) == "mem=EACCES attach=EPERM"
    # still serving (the attach attempt did not stop it)
    req = urllib.request.Request(warden.llama_url() + "/v1/models",
                                 headers={"Authorization": "Bearer " + warden.llama_key()})
    with urllib.request.urlopen(req, timeout=10) as r:
        assert r.status == 200
