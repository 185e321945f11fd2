"""Shared helpers for warden's Python tests: start warden (and the fake upstream) as real
processes, speak raw HTTP to them, read SSE.

Starting warden: the presets below (a bare `Warden(...)` only with a home of the test's own).
  warden_on_fake(fake, *args, home=None, env=None, ...)   `--upstream` the scripted fake upstream
  warden_on_url(url, *args, ...)                          `--upstream` any URL (a dead port, say)
  warden_on_model(*args, home=None, env=None, ...)        the real llama-server and default model
Each gets a home folder of its own (a fresh temporary one unless `home` is given), so tests and
suites may run in parallel: nothing is written under the shared $WARDEN_HOME.
Fixtures, per module unless said otherwise:
  fake_upstream   the scripted fake upstream (one per pytest process)
  home            a fresh folder, the home of the module's warden
  warden          the module's warden, as its `WARDEN = on_fake(*args, ...)` or
                  `WARDEN = on_model(*args, ...)` says (default: on_fake())
  client          an SDK client on that warden: openai_client, or the module's `CLIENT`
  model_id        the model that warden serves"""
import http.client
import json
import os
import pathlib
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
WARDEN_BIN = os.environ.get("WARDEN_BIN") or str(ROOT / "build" / "app" / "warden")
# True when WARDEN_BIN is the ASan+UBSan build (tests/CMakeLists.txt sets it).
SANITIZED = os.environ.get("WARDEN_SANITIZED") == "1"
# the shared cache that `make setup` fills: llama-server and the default model live there
CACHE_HOME = pathlib.Path(os.environ.get("WARDEN_HOME") or os.path.expanduser("~/.cache/warden"))
LLAMA_CPP_VERSION = "3.21.1"  # scripts/setup's NODE_LLAMA_CPP_VERSION
DEFAULT_MODEL = CACHE_HOME / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"


def _llama_server():
    """scripts/setup's llama-server, as warden picks it (common/config.h default_llama_server_path):
    a complete GPU build (<version>-cuda, -vulkan) before the CPU one."""
    root = CACHE_HOME / "llama.cpp"
    for suffix in ("-cuda", "-vulkan"):
        d = root / (LLAMA_CPP_VERSION + suffix)
        if (d / ".complete").exists() and (d / "bin" / "llama-server").exists():
            return d / "bin" / "llama-server"
    return root / LLAMA_CPP_VERSION / "bin" / "llama-server"


LLAMA_SERVER = _llama_server()


class Proc:
    """A child process whose stdout/stderr lines are collected by threads."""

    def __init__(self, argv, env=None):
        self.argv = argv
        self.p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  errors="replace", env=env, start_new_session=True)
        self.out, self.err = [], []
        self._cv = threading.Condition()
        for stream, sink in ((self.p.stdout, self.out), (self.p.stderr, self.err)):
            threading.Thread(target=self._pump, args=(stream, sink), daemon=True).start()

    def _pump(self, stream, sink):
        for line in stream:
            with self._cv:
                sink.append(line.rstrip("\n"))
                self._cv.notify_all()
        with self._cv:
            self._cv.notify_all()

    def wait_for(self, pattern, where="out", timeout=300):
        rx = re.compile(pattern)
        deadline = time.time() + timeout
        with self._cv:
            while True:
                lines = self.out if where == "out" else self.err
                for line in lines:
                    m = rx.search(line)
                    if m:
                        return m
                if self.p.poll() is not None and time.time() > deadline - timeout + 0.5:
                    # give the pump a moment to collect the last lines
                    self._cv.wait(0.2)
                    lines = self.out if where == "out" else self.err
                    for line in lines:
                        m = rx.search(line)
                        if m:
                            return m
                    raise RuntimeError(f"{self.argv[0]} exited ({self.p.returncode}) before /{pattern}/:\n"
                                       + "\n".join(self.out[-20:] + self.err[-40:]))
                left = deadline - time.time()
                if left <= 0:
                    raise TimeoutError(f"no /{pattern}/ within {timeout}s:\n" + "\n".join(self.err[-40:]))
                self._cv.wait(min(left, 0.5))

    def log(self):
        with self._cv:
            return "\n".join(self.err)

    def stop(self, sig=signal.SIGTERM, timeout=20):
        if self.p.poll() is None:
            self.p.send_signal(sig)
            try:
                self.p.wait(timeout)
            except subprocess.TimeoutExpired:
                # Not gone after `timeout` s: say where it was, so a slow shutdown can be traced.
                print(f"--- {self.argv[0]} did not exit {timeout} s after signal {sig}; its last output:\n"
                      + "\n".join(self.log().splitlines()[-30:]), file=sys.stderr)
                self.p.kill()
                self.p.wait()
        return self.p.returncode


class Warden(Proc):
    """`warden serve --port 0 ARGS`. Without --upstream it runs the real llama-server with a key
    of our own (a random one in a 0600 file passed as --llama-api-key-file, unless ARGS has one),
    so tests can talk to llama-server directly. `prefix` goes before the binary (e.g. setpriv)."""

    def __init__(self, *args, env_extra=None, timeout=300, prefix=()):
        env = dict(os.environ)
        env.update(env_extra or {})
        self._key, self._key_dir = None, None
        if "--upstream" not in args and "--llama-api-key-file" not in args:
            self._key = secrets.token_hex(16)
            self._key_dir = tempfile.mkdtemp(prefix="warden-llama-key-")  # 0700
            key_file = os.path.join(self._key_dir, "key")
            fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(self._key + "\n")
            args = (*args, "--llama-api-key-file", key_file)
        try:
            super().__init__([*prefix, WARDEN_BIN, "serve", "--port", "0", *args], env=env)
            m = self.wait_for(r"warden: (?:serving .* at|listening at) http://[^:]+:(\d+)/v1", timeout=timeout)
        finally:  # warden reads the file once, before it listens
            if self._key_dir:
                shutil.rmtree(self._key_dir, ignore_errors=True)
        self.port = int(m.group(1))
        self.base = f"http://127.0.0.1:{self.port}"
        if "--upstream" not in args:
            # stdout and stderr are separate pipes: make sure the log line naming llama-server's
            # port has been collected too
            self.wait_for(r"llama-server(?: chat(?:-\d+)?)? ready at", where="err", timeout=30)

    def llama_url(self):
        m = re.search(r"llama-server(?: chat)? ready at (http://127\.0\.0\.1:\d+)", self.log())
        return m.group(1) if m else None

    def llama_pid(self):
        m = re.search(r"starting llama-server(?: chat)? \(pid (\d+)\)", self.log())
        return int(m.group(1)) if m else None

    def llama_key(self):
        """llama-server's key: the one this helper gave warden with --llama-api-key-file (warden
        hands it to llama-server through an inherited pipe, never its command line or environment)."""
        assert self._key is not None, "llama_key() needs a Warden started without --upstream or its own key file"
        return self._key


def script(fake, turns, prefix=""):
    """Registers scripted model turns with the fake upstream; the name to send as
    "scenario:script:<name>" (tests/fake/fake_upstream.py)."""
    import uuid
    name = prefix + uuid.uuid4().hex[:10]
    st, _, _ = request(fake.port, "POST", "/script", {"name": name, "turns": turns})
    assert st == 200
    return name


def upstream_requests(fake, name):
    """The chat requests the fake received for script `name`, oldest first."""
    _, _, body = request(fake.port, "GET", "/stats")
    reqs = json.loads(body)["requests"]
    return [r for r in reqs if any(m.get("content") == f"scenario:script:{name}" for m in r.get("messages", []))]


def request(port, method, path, body=None, headers=None, timeout=120):
    """One raw HTTP request; returns (status, headers dict, body bytes)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    if isinstance(body, (dict, list)):
        body = json.dumps(body).encode()
    h = {"Content-Type": "application/json"}
    h.update(headers or {})
    conn.request(method, path, body=body, headers=h)
    r = conn.getresponse()
    data = r.read()
    hdrs = {k.lower(): v for k, v in r.getheaders()}
    conn.close()
    return r.status, hdrs, data


def recv_until_close(sock):
    """Everything the peer sends until it closes the connection."""
    data = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk


def sse_frames(raw):
    """Splits an SSE body into frames: ('data', payload) or ('comment', text)."""
    out = []
    for block in raw.decode().split("\n\n"):
        if not block.strip():
            continue
        datas = [l[5:].lstrip(" ") if l.startswith("data:") else None for l in block.split("\n")]
        if block.startswith(":"):
            out.append(("comment", block[1:].strip()))
        else:
            out.append(("data", "\n".join(d for d in datas if d is not None)))
    return out


def pid_alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


def node_with_sdk(package):
    """node's path, once the npm `package` pinned in tests/node/package.json is installed where
    node looks for it (tests/node/node_modules); fails (never skips) otherwise."""
    node_dir = ROOT / "tests" / "node"
    fix = "run `scripts/setup nodedeps` (it installs tests/node's package-lock.json into $WARDEN_HOME " \
          "and links tests/node/node_modules to it)"
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not on PATH: install Node.js 20 (apt-get install nodejs npm), then " + fix)
    want = json.loads((node_dir / "package.json").read_text())["dependencies"][package]
    pkg = node_dir / "node_modules" / package / "package.json"
    if not pkg.is_file():
        pytest.fail(f"the {package} Node SDK is not installed ({pkg} is missing): {fix}")
    got = json.loads(pkg.read_text())["version"]
    if got != want:
        pytest.fail(f"tests/node/node_modules has {package} {got}, package.json pins {want}: {fix}")
    return node


@pytest.fixture(scope="session")
def fake_upstream():
    p = Proc([sys.executable, str(ROOT / "tests" / "fake" / "fake_upstream.py"), "0"])
    m = p.wait_for(r"PORT (\d+)", timeout=20)
    p.port = int(m.group(1))
    p.url = f"http://127.0.0.1:{p.port}/v1"
    yield p
    p.stop()


@dataclass(frozen=True)
class Preset:
    """How a module's `warden` fixture starts warden: on the scripted fake upstream or on the real
    model, with extra command-line `args` and environment `env`; `prefix` goes before the binary
    (e.g. setpriv); `check_exit` asserts at teardown that warden exited 0."""
    upstream: str  # "fake" or "model"
    args: tuple = ()
    env: dict = field(default_factory=dict)
    prefix: tuple = ()
    timeout: float = 300
    check_exit: bool = False


def on_fake(*args, env=None, timeout=300, check_exit=False):
    return Preset("fake", tuple(args), dict(env or {}), (), timeout, check_exit)


def on_model(*args, env=None, prefix=(), timeout=300, check_exit=True):
    return Preset("model", tuple(args), dict(env or {}), tuple(prefix), timeout, check_exit)


def _own_home(home):
    """`home` as a string, or a fresh folder of its own (removed at exit) when None."""
    if home is not None:
        return str(home)
    d = tempfile.mkdtemp(prefix="warden-home-")
    _homes.append(d)
    return d


_homes = []


def _start(args, home, env, **kw):
    home = _own_home(home)
    w = Warden(*args, env_extra={**(env or {}), "WARDEN_HOME": home}, **kw)
    w.home = pathlib.Path(home)
    w.workspaces = w.home / "workspaces"  # the default --workspaces, under the home
    return w


def warden_on_url(url, *args, home=None, env=None, timeout=300, prefix=()):
    """`warden serve --port 0 --upstream URL ARGS` with WARDEN_HOME=home (own folder if None)."""
    return _start(("--upstream", url, *args), home, env, timeout=timeout, prefix=prefix)


def warden_on_fake(fake, *args, home=None, env=None, timeout=300, prefix=()):
    """warden_on_url on the scripted fake upstream `fake` (the `fake_upstream` fixture)."""
    return warden_on_url(fake.url, *args, home=home, env=env, timeout=timeout, prefix=prefix)


def warden_on_model(*args, home=None, env=None, timeout=300, prefix=()):
    """`warden serve --port 0 ARGS` on the real llama-server and default model of the shared
    cache (WARDEN_LLAMA_SERVER, WARDEN_MODEL), with its state in `home` (own folder if None)."""
    env = {"WARDEN_LLAMA_SERVER": str(LLAMA_SERVER), "WARDEN_MODEL": str(DEFAULT_MODEL), **(env or {})}
    return _start(args, home, env, timeout=timeout, prefix=prefix)


def start_preset(preset, home=None, fake=None):
    if preset.upstream == "fake":
        return warden_on_fake(fake, *preset.args, home=home, env=preset.env, timeout=preset.timeout,
                              prefix=preset.prefix)
    return warden_on_model(*preset.args, home=home, env=preset.env, timeout=preset.timeout, prefix=preset.prefix)


@pytest.fixture(scope="session", autouse=True)
def _remove_own_homes():
    yield
    for d in _homes:
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def home(tmp_path_factory, request):
    """The module's warden home (a fresh folder under pytest's temporary root)."""
    return tmp_path_factory.mktemp("home-" + request.module.__name__.rsplit(".", 1)[-1])


def openai_client(w, **kw):
    """The openai SDK on warden `w`; no retries, so a 5xx reaches the test once."""
    import openai
    kw.setdefault("api_key", "unused")
    kw.setdefault("timeout", 300)
    return openai.OpenAI(base_url=w.base + "/v1", max_retries=0, **kw)


def anthropic_client(w, **kw):
    """The anthropic SDK on warden `w`; no retries, so a 5xx reaches the test once."""
    import anthropic
    kw.setdefault("api_key", "anything")
    kw.setdefault("timeout", 300)
    return anthropic.Anthropic(base_url=w.base, max_retries=0, **kw)


@pytest.fixture(scope="module")
def client(request, warden):
    """The module's SDK client on its `warden`: `CLIENT = anthropic_client` in a module picks the
    anthropic SDK; default openai_client."""
    return getattr(request.module, "CLIENT", openai_client)(warden)


@pytest.fixture(scope="module")
def model_id(warden):
    """The id of the one model the module's warden serves (GET /v1/models)."""
    st, _, data = request(warden.port, "GET", "/v1/models")
    assert st == 200, data
    return json.loads(data)["data"][0]["id"]


@pytest.fixture(scope="module")
def warden(request, home):
    """The module's warden, started as the module's `WARDEN` preset says (default: on_fake())."""
    preset = getattr(request.module, "WARDEN", None) or on_fake()
    fake = request.getfixturevalue("fake_upstream") if preset.upstream == "fake" else None
    w = start_preset(preset, home=home, fake=fake)
    yield w
    rc = w.stop()
    if preset.check_exit:
        assert rc == 0
