"""Issue 8: the browser and network doors are closed.

"The model" (the scripted fake upstream) calls python with bypass_permissions, whose code writes a
marker file on the host: whenever a refused request would have reached the tool loop, the marker
would appear and the fake would have seen a chat request. Each refusal below is checked for both.
A plain JSON request without Origin still runs the same script (the control: the check can fail).
"""
import json
import os
import pathlib
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid

import pytest

from conftest import ROOT, WARDEN_BIN, recv_until_close, request, on_fake, warden_on_fake
from test_tool_loop import Stream, call, chat, of_type, script, upstream_requests, text_of

NOBODY = pwd.getpwnam("nobody")


WARDEN = on_fake("--sse-ping-interval", "300", "--allowed-origins", "http://app.example:3000")  # conftest's `warden`


def attack(fake, marker):
    """A script whose python call (with bypass) writes `marker` on the host; returns the body."""
    code = f"open({str(marker)!r}, 'w').write('ran'); print('ran')"
    name = script(fake, [{"tool_calls": [call("python", {"code": code})]}, {"content": "done"}])
    return name, chat(name, bypass_permissions=True)


def raw_http(port, head, body=b""):
    """Sends exactly these request bytes (no header added) and returns (status, headers, body)."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(head.encode() + body)
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
            if b"\r\n\r\n" in data:
                head_part, _, rest = data.partition(b"\r\n\r\n")
                hdrs = {}
                for line in head_part.decode().split("\r\n")[1:]:
                    k, _, v = line.partition(":")
                    hdrs[k.strip().lower()] = v.strip()
                n = int(hdrs.get("content-length", "-1"))
                if n >= 0 and len(rest) >= n:
                    break
        status = int(data.split(b" ", 2)[1])
        return status, hdrs, rest


def nothing_ran(fake, name, marker):
    assert upstream_requests(fake, name) == [], "the model was asked"
    assert not pathlib.Path(marker).exists(), "the tool ran"


def error_of(body):
    return json.loads(body)["error"]


# --- 3. Content-Type ----------------------------------------------------------------------------

@pytest.mark.parametrize("ctype", ["text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
                                   "multipart/form-data; boundary=x", None])
def test_non_json_posts_get_415_and_nothing_runs(warden, fake_upstream, tmp_path, ctype):
    marker = tmp_path / "marker"
    name, body = attack(fake_upstream, marker)
    head = (f"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:{warden.port}\r\nConnection: close\r\n"
            + (f"Content-Type: {ctype}\r\n" if ctype else "") + f"Content-Length: {len(json.dumps(body))}\r\n\r\n")
    st, _, data = raw_http(warden.port, head, json.dumps(body).encode())
    assert st == 415, data
    e = error_of(data)
    assert e["type"] == "invalid_request_error" and e["code"] == "unsupported_media_type"
    assert "application/json" in e["message"]
    time.sleep(0.3)
    nothing_ran(fake_upstream, name, marker)


def test_the_tool_endpoints_need_json_too(warden):
    for path in ("/api/inference/tool-confirm", "/api/inference/cancel"):
        st, _, data = request(warden.port, "POST", path, b'{"cancel_id":"x"}', headers={"Content-Type": "text/plain"})
        assert st == 415, (path, data)


def test_plain_json_request_without_origin_works_as_before(warden, fake_upstream, tmp_path):
    marker = tmp_path / "marker"
    name, body = attack(fake_upstream, marker)
    frames = Stream(warden.port, body).rest()
    assert of_type(frames, "tool_end")[0]["result"] == "ran\n"
    assert marker.read_text() == "ran"  # the control: this script does run when it is allowed to
    assert len(upstream_requests(fake_upstream, name)) == 2


# --- 1. Host ------------------------------------------------------------------------------------

@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "", ":{port}", "127.0.0.1:{port}.evil.example",
                                  "127.0.0.1:99999", "localhost.:{port}", None])
def test_foreign_empty_or_malformed_host_gets_403(warden, fake_upstream, tmp_path, host):
    marker = tmp_path / "marker"
    name, body = attack(fake_upstream, marker)
    data = json.dumps(body).encode()
    host_line = "" if host is None else "Host: " + host.format(port=warden.port) + "\r\n"
    version = "HTTP/1.0" if host is None else "HTTP/1.1"
    head = (f"POST /v1/chat/completions {version}\r\n{host_line}Connection: close\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n")
    st, _, resp = raw_http(warden.port, head, data)
    assert st == 403, resp
    assert error_of(resp)["type"] == "permission_error"
    time.sleep(0.3)
    nothing_ran(fake_upstream, name, marker)


def test_host_check_covers_every_route(warden):
    for method, path in (("GET", "/health"), ("GET", "/v1/models"), ("POST", "/api/inference/cancel")):
        st, _, _ = request(warden.port, method, path, b'{"cancel_id":"x"}' if method == "POST" else None,
                           headers={"Host": "rebind.example:%d" % warden.port})
        assert st == 403, (method, path)


@pytest.mark.parametrize("host", ["localhost:{port}", "127.0.0.1:{port}", "[::1]:{port}", "LOCALHOST", "127.0.0.1"])
def test_loopback_names_are_accepted(warden, host):
    st, _, _ = request(warden.port, "GET", "/v1/models", headers={"Host": host.format(port=warden.port)})
    assert st == 200


def test_allowed_hosts_flag(fake_upstream, tmp_path):
    w = warden_on_fake(fake_upstream, "--allowed-hosts", "warden.lan, Box.Example:7000", home=tmp_path)
    try:
        for host, want in (("warden.lan", 200), ("warden.lan:1234", 200), ("box.example:7000", 200),
                           ("box.example:7001", 403), ("other.lan", 403)):
            st, _, _ = request(w.port, "GET", "/v1/models", headers={"Host": host})
            assert st == want, host
    finally:
        w.stop()


# --- 2. Origin and CORS ---------------------------------------------------------------------------

@pytest.mark.parametrize("origin", ["http://evil.example", "null", "http://127.0.0.1:1", "https://127.0.0.1:{port}",
                                    "http://app.example:3001"])
def test_foreign_or_null_origin_gets_403(warden, fake_upstream, tmp_path, origin):
    marker = tmp_path / "marker"
    name, body = attack(fake_upstream, marker)
    st, hdrs, data = request(warden.port, "POST", "/v1/chat/completions", body,
                             headers={"Origin": origin.format(port=warden.port)})
    assert st == 403, data
    assert error_of(data)["type"] == "permission_error" and "access-control-allow-origin" not in hdrs
    time.sleep(0.3)
    nothing_ran(fake_upstream, name, marker)


def test_cross_site_fetch_metadata_without_origin_gets_403(warden):
    st, _, _ = request(warden.port, "GET", "/v1/models", headers={"Sec-Fetch-Site": "cross-site"})
    assert st == 403


@pytest.mark.parametrize("origin", ["http://127.0.0.1:{port}", "http://localhost:{port}", "http://app.example:3000"])
def test_own_and_listed_origins_get_200_with_their_exact_origin(warden, fake_upstream, tmp_path, origin):
    origin = origin.format(port=warden.port)
    st, hdrs, data = request(warden.port, "GET", "/v1/models", headers={"Origin": origin})
    assert st == 200 and hdrs["access-control-allow-origin"] == origin and "origin" in hdrs["vary"].lower()
    marker = tmp_path / "marker"
    name, body = attack(fake_upstream, marker)
    st, hdrs, data = request(warden.port, "POST", "/v1/chat/completions", body, headers={"Origin": origin})
    assert st == 200 and hdrs["access-control-allow-origin"] == origin
    assert b'"tool_end"' in data and marker.exists()


def test_preflight_answered_only_for_allowed_origins(warden):
    asked = {"Access-Control-Request-Method": "POST",
             "Access-Control-Request-Headers": "content-type, authorization, x-stainless-os"}
    st, hdrs, _ = request(warden.port, "OPTIONS", "/v1/chat/completions",
                          headers={"Origin": "http://app.example:3000", **asked})
    assert st == 204
    assert hdrs["access-control-allow-origin"] == "http://app.example:3000"  # never *
    assert "POST" in hdrs["access-control-allow-methods"]
    assert "x-stainless-os" in hdrs["access-control-allow-headers"]
    st, hdrs, _ = request(warden.port, "OPTIONS", "/v1/chat/completions",
                          headers={"Origin": "http://app.example:3000", "Access-Control-Request-Private-Network": "true",
                                   **asked})
    assert st == 204 and hdrs["access-control-allow-private-network"] == "true"
    for origin in ("http://evil.example", "null"):
        st, hdrs, _ = request(warden.port, "OPTIONS", "/v1/chat/completions", headers={"Origin": origin, **asked})
        assert st == 403 and "access-control-allow-origin" not in hdrs


# --- 4. Network exposure needs a key ---------------------------------------------------------------

def test_non_loopback_bind_without_key_exits_2(tmp_path):
    p = subprocess.run([WARDEN_BIN, "serve", "--host", "0.0.0.0", "--port", "0", "--upstream", "http://127.0.0.1:9/v1"],
                       capture_output=True, text=True, timeout=60, env={**os.environ, "WARDEN_HOME": str(tmp_path)})
    assert p.returncode == 2, p.stderr
    assert "--api-key" in p.stderr and "--insecure-no-auth" in p.stderr
    p = subprocess.run([WARDEN_BIN, "serve", "--port", "0", "--upstream", "http://127.0.0.1:9/v1"],
                       capture_output=True, text=True, timeout=60,
                       env={**os.environ, "WARDEN_HOME": str(tmp_path), "WARDEN_HOST": "::"})
    assert p.returncode == 2


@pytest.mark.parametrize("extra", [["--api-key", "k3y"], ["--insecure-no-auth"]])
def test_non_loopback_bind_with_a_key_or_the_explicit_opt_out_starts(fake_upstream, tmp_path, extra):
    w = warden_on_fake(fake_upstream, "--host", "0.0.0.0", *extra, home=tmp_path)
    try:
        st, _, _ = request(w.port, "GET", "/health")
        assert st == 200  # /health stays open
        st, _, _ = request(w.port, "GET", "/v1/models")
        assert st == (401 if "--api-key" in extra else 200)
        # the operator is told which names network clients must use (the Host check)
        # (stderr is a pipe of its own: wait for the line rather than race its reader)
        w.wait_for(r"--allowed-hosts", where="err", timeout=10)
        if "--insecure-no-auth" in extra:
            assert "outside the sandbox too" in w.log()
    finally:
        w.stop()


# --- 5. Permission ceiling --------------------------------------------------------------------------

def test_max_permission_ask(fake_upstream, tmp_path):
    w = warden_on_fake(fake_upstream, "--max-permission", "ask", home=tmp_path)
    try:
        marker = tmp_path / "marker"
        name, body = attack(fake_upstream, marker)
        st, _, data = request(w.port, "POST", "/v1/chat/completions", body)
        assert st == 403 and error_of(data)["type"] == "permission_error"
        assert error_of(data)["param"] == "bypass_permissions" and "--max-permission full" in error_of(data)["message"]
        body.pop("bypass_permissions")  # tools on, no gate: mode off
        st, _, data = request(w.port, "POST", "/v1/chat/completions", body)
        assert st == 403 and error_of(data)["param"] == "confirm_tool_calls"
        assert "--max-permission off" in error_of(data)["message"]
        nothing_ran(fake_upstream, name, marker)
        s = Stream(w.port, {**body, "confirm_tool_calls": True, "session_id": "ceiling"})
        assert s.status == 200
        start = s.until_type("tool_start")
        assert start["awaiting_confirmation"] is True
        s.close()
    finally:
        w.stop()


def test_max_permission_from_the_environment_and_bad_value(fake_upstream, tmp_path):
    p = subprocess.run([WARDEN_BIN, "serve", "--port", "0", "--upstream", fake_upstream.url],
                       capture_output=True, text=True, timeout=60,
                       env={**os.environ, "WARDEN_HOME": str(tmp_path), "WARDEN_MAX_PERMISSION": "everything"})
    assert p.returncode == 2 and "--max-permission" in p.stderr
    w = warden_on_fake(fake_upstream, home=tmp_path, env={"WARDEN_MAX_PERMISSION": "off"})
    try:
        name, body = attack(fake_upstream, tmp_path / "m")
        st, _, _ = request(w.port, "POST", "/v1/chat/completions", body)
        assert st == 403
    finally:
        w.stop()


# --- 6. Duplicate keys ------------------------------------------------------------------------------

def test_duplicate_keys_get_400(warden, fake_upstream, tmp_path):
    marker = tmp_path / "marker"
    name, body = attack(fake_upstream, marker)
    # {"bypass_permissions": true, …, "bypass_permissions": false}: never read one way here, another there
    body_bytes = (json.dumps(body)[:-1] + ', "bypass_permissions": false}').encode()
    st, _, data = request(warden.port, "POST", "/v1/chat/completions", body_bytes)
    assert st == 400 and error_of(data)["code"] == "duplicate_key" and error_of(data)["param"] == "bypass_permissions"
    st, _, data = request(warden.port, "POST", "/api/inference/tool-confirm",
                          b'{"approval_id":"a","decision":"deny","decision":"allow"}')
    assert st == 400 and error_of(data)["code"] == "duplicate_key"
    nothing_ran(fake_upstream, name, marker)


# --- 7. What a request may make the model do -----------------------------------------------------------

@pytest.mark.parametrize("form", ["structured", "text"])
def test_tool_choice_none_runs_nothing(warden, fake_upstream, tmp_path, form):
    marker = tmp_path / "marker"
    code = f"open({str(marker)!r}, 'w').write('ran')"
    if form == "structured":
        turn = {"tool_calls": [call("python", {"code": code})]}
    else:
        turn = {"content": "ok <tool_call>" + json.dumps({"name": "python", "arguments": {"code": code}}) + "</tool_call>"}
    name = script(fake_upstream, [turn, {"content": "second turn"}])
    frames = Stream(warden.port, chat(name, bypass_permissions=True, tool_choice="none")).rest()
    assert of_type(frames, "tool_start") == [] and of_type(frames, "tool_end") == []
    assert "<tool_call>" not in text_of(frames)
    assert not marker.exists()
    reqs = upstream_requests(fake_upstream, name)
    assert len(reqs) == 1 and "tools" not in reqs[0]


def test_grammar_with_tools_is_400(warden, fake_upstream, tmp_path):
    marker = tmp_path / "marker"
    name, body = attack(fake_upstream, marker)
    for field, value in (("grammar", 'root ::= "<tool_call>"'), ("json_schema", {"type": "object"})):
        st, _, data = request(warden.port, "POST", "/v1/chat/completions", {**body, field: value})
        assert st == 400 and error_of(data)["param"] == field, data
    nothing_ran(fake_upstream, name, marker)


# --- 9. Code planted in the workspace must not run later by itself ---------------------------------------

PLANT = r"""
import os, site, pathlib
payload = "import os; print('PWNED'); open(os.path.join(os.getcwd(), 'PWNED.txt'), 'w').write('x')\n"
targets = [site.getusersitepackages(),                                   # the user site of this call's HOME
           '/workspace/.local/lib/python3.11/site-packages',             # where HOME used to be
           '/workspace']                                                 # the cwd itself
for t in targets:
    pathlib.Path(t).mkdir(parents=True, exist_ok=True)
    pathlib.Path(t, 'zz_evil.pth').write_text(payload)
pathlib.Path('/workspace/json.py').write_text("print('PWNED'); open('PWNED.txt', 'w').write('x')\n")
pathlib.Path('/workspace/.bashrc').write_text("echo PWNED\n")
print('planted', site.getusersitepackages())
"""


def test_planted_startup_code_runs_in_no_later_call(warden, fake_upstream, home):
    sid = "plant-" + uuid.uuid4().hex[:6]
    harmless = "import json; print('harmless', json.dumps(1))"
    name = script(fake_upstream, [{"tool_calls": [call("python", {"code": PLANT})]},
                                  {"tool_calls": [call("python", {"code": harmless})]},
                                  {"tool_calls": [call("terminal", {"command": "echo shell"})]},
                                  {"content": "done"}])
    ends = of_type(Stream(warden.port, chat(name, session_id=sid)).rest(), "tool_end")
    assert ends[0]["result"].startswith("planted /tmp/"), ends[0]  # HOME is the call's own tmpfs
    assert ends[1]["result"] == "harmless 1\n", ends[1]
    assert ends[2]["result"] == "shell\n", ends[2]
    jailed_ws = pathlib.Path(home) / "workspaces" / sid
    assert (jailed_ws / "json.py").exists() and not (jailed_ws / "PWNED.txt").exists()
    # The same session under bypass: a workspace of its own on the host, and nothing planted runs.
    name = script(fake_upstream, [{"tool_calls": [call("python", {"code": harmless + "; import os; print(os.getcwd())"})]},
                                  {"content": "done"}])
    out = of_type(Stream(warden.port, chat(name, session_id=sid, bypass_permissions=True)).rest(), "tool_end")[0]["result"]
    assert out.startswith("harmless 1\n") and "PWNED" not in out, out
    host_ws = pathlib.Path(home) / "workspaces" / ".host" / sid
    assert out.split("\n")[1] == str(host_ws)
    assert not (host_ws / "PWNED.txt").exists() and not (host_ws / "json.py").exists()
    # The control: without isolation the planted module does run (what warden used to do).
    p = subprocess.run(["/usr/bin/python3", "-c", "import json"], cwd=jailed_ws, capture_output=True, text=True)
    assert "PWNED" in p.stdout


# --- 8. Secrets under bypass: a non-root warden --------------------------------------------------------

SECRETS = {
    "OPENAI_API_KEY": "sk-proj-Zq8xT4mN2pL7vB9cK3wR5yH1", "STRIPE_SECRET": "sk_live_51HxQ2eKz9Lm3Nv8Rt",
    "SLACK_BOT": "xoxb-2231888125QwErTyUiOpAsDfGh", "HUGGINGFACE_HUB_TOKEN": "hf_AbCdEfGhIjKlMnOpQrStUvWxYz12",
    "GITHUB_TOKEN": "ghp_1234567890abcdefghijABCDEFGHIJklmnop", "AWS_ACCESS_KEY_ID": "AKIAIOSFODNN7EXAMPLE",
    "GITLAB": "glpat-xxYYzz1122334455667788", "DB_PWD": "correct-horse-battery", "MY_CREDS": "admin:hunter2-creds",
    "BEARER": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl", "DATABASE_URL": "postgres://app:pw-in-url@db/x",
    "CALLBACK": "https://api.example.com/cb?api_key=k3y-in-query-string", "DB_PASSWORD": "p4ssw0rd-planted",
    "SERVICE_SECRET": "planted-service-secret", "WARDEN_TEST_SECRET": "planted-warden-secret",
    "ANTHROPIC_API_KEY": "sk-ant-api03-planted-value", "MY_TOKEN": "planted-my-token-value",
    "SENTRY_DSN": "https://abc123@o1.ingest.sentry.io/1", "GOOGLE_APPLICATION_CREDENTIALS": "/planted/creds.json",
    "NPM_TOKEN": "npm_plantedTokenValue1234567890",
}

SCAN = r"""
import os, glob, json
secrets = %r
seen, readable = set(), 0
blobs = [('self', '\0'.join(k + '=' + v for k, v in os.environ.items()).encode())]
for path in glob.glob('/proc/[0-9]*/environ'):
    try:
        with open(path, 'rb') as f:
            blobs.append((path, f.read()))
            readable += 1
    except OSError:
        pass
for where, blob in blobs:
    for s in secrets:
        if s.encode() in blob:
            seen.add(s)
print('readable', readable)
print('FOUND', json.dumps(sorted(seen)))
"""


def as_nobody():
    def drop():
        os.setgroups([])
        os.setgid(NOBODY.pw_gid)
        os.setuid(NOBODY.pw_uid)
    return drop


def found_secrets(output):
    return json.loads(output.split("FOUND ", 1)[1].split("\n", 1)[0])


def test_bypass_tool_of_a_non_root_warden_finds_no_planted_secret():
    # Everything the unprivileged warden needs, where uid 65534 can reach it.
    base = pathlib.Path(tempfile.mkdtemp(prefix="warden-nonroot-"))
    os.chmod(base, 0o755)
    bindir = base / "bin"
    shutil.copytree(pathlib.Path(WARDEN_BIN).parent, bindir, ignore=shutil.ignore_patterns("CMakeFiles", "*.cmake"))
    shutil.copytree(ROOT / "tests" / "fake", base / "fake")
    shutil.copytree(ROOT / "tests" / "golden", base / "golden")
    home = base / "home"
    home.mkdir()
    (home / "model.gguf").write_bytes(b"GGUF" + b"\0" * 60)
    key = uuid.uuid4().hex
    (base / "llama.key").write_text(key + "\n")
    for p in [base, *base.rglob("*")]:
        os.chown(p, NOBODY.pw_uid, NOBODY.pw_gid)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "WARDEN_HOME": str(home), **SECRETS}
    argv = [str(bindir / "warden"), "serve", "--port", "0", "--llama-server", str(base / "fake" / "fake_llama_server.py"),
            "--model", str(home / "model.gguf"), "--llama-api-key-file", str(base / "llama.key"),
            "--sse-ping-interval", "300"]
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                         preexec_fn=as_nobody(), start_new_session=True)
    lines = []
    ready = threading.Event()

    def pump():
        for line in p.stdout:
            lines.append(line)
            if line.startswith("warden: serving"):
                ready.set()
        ready.set()
    threading.Thread(target=pump, daemon=True).start()
    try:
        assert ready.wait(120) and any(l.startswith("warden: serving") for l in lines), "".join(lines)
        port = int(next(l for l in lines if l.startswith("warden: serving")).rsplit(":", 1)[1].split("/")[0])
        # The secrets are really there: warden itself was started with them.
        with open(f"/proc/{p.pid}/environ", "rb") as f:
            assert SECRETS["DB_PWD"].encode() in f.read()
        llama = next(l for l in lines if "llama-server ready at" in l).split("ready at ")[1].split()[0]
        lport = int(llama.rsplit(":", 1)[1].rstrip(")"))
        name = uuid.uuid4().hex[:10]
        code = SCAN % (list(SECRETS.values()),)
        turns = [{"tool_calls": [call("python", {"code": code})]}, {"content": "done"}]
        st, _, _ = request(lport, "POST", "/script", {"name": name, "turns": turns},
                           headers={"Authorization": "Bearer " + key})
        assert st == 200
        frames = Stream(port, chat(name, bypass_permissions=True)).rest()
        out = of_type(frames, "tool_end")[0]["result"]
        assert found_secrets(out) == [], out
        readable = int(out.split("readable ")[1].split()[0])
        assert readable >= 1, out  # it could read environments (its own at least)
        # The control: the same scan in a process that does inherit them finds all 20.
        ctl = subprocess.run(["/usr/bin/python3", "-c", code], capture_output=True, text=True, env=env,
                             preexec_fn=as_nobody())
        assert len(found_secrets(ctl.stdout)) == len(SECRETS) == 20, ctl.stdout + ctl.stderr
    finally:
        os.killpg(p.pid, 15)
        p.wait(20)
        shutil.rmtree(base, ignore_errors=True)


# --- the head is judged before any body is read ------------------------------------------------------

def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))


@pytest.mark.parametrize("headers", ["Host: evil.example\r\nContent-Type: application/json",
                                     "Host: 127.0.0.1\r\nContent-Type: text/plain",
                                     "Host: 127.0.0.1\r\nContent-Type: application/json\r\nOrigin: http://evil.example",
                                     "Host: 127.0.0.1\r\nContent-Type: application/json\r\nExpect: 100-continue"])
def test_a_refused_request_is_answered_before_its_body(fake_upstream, tmp_path, headers):
    w = warden_on_fake(fake_upstream, "--api-key", "k3y", home=tmp_path)
    try:
        with socket.create_connection(("127.0.0.1", w.port), timeout=10) as s:
            s.sendall(f"POST /v1/chat/completions HTTP/1.1\r\n{headers}\r\nContent-Length: 30000000\r\n\r\n".encode())
            first = s.recv(65536)  # no body sent: the answer must not wait for 30 MB
        assert first.split(b" ")[1] in (b"401", b"403", b"415"), first
        assert b"100 Continue" not in first
        # 4 clients push 16 MiB each after a refused head: nothing of it is kept
        base = rss_kb(w.p.pid)
        socks = []
        for _ in range(4):
            s = socket.create_connection(("127.0.0.1", w.port), timeout=10)
            s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/json\r\n"
                      b"Content-Length: 33554000\r\n\r\n")
            socks.append(s)
        sent = 0
        for s in socks:
            try:
                for _ in range(256):
                    s.sendall(b"x" * 65536)
                    sent += 65536
            except OSError:
                pass  # warden closed it after the grace period: also fine
        grown_mb = (rss_kb(w.p.pid) - base) / 1024
        for s in socks:
            s.close()
        assert sent > 0 and grown_mb < 24, f"warden grew by {grown_mb:.0f} MB while {sent >> 20} MiB were refused"
    finally:
        w.stop()


# --- findings of the second adversarial run (the HTTP layer) ------------------------------------------

def test_chunked_bodies_get_411_and_a_huge_trailer_cannot_kill_warden(fake_upstream, tmp_path):
    w = warden_on_fake(fake_upstream, "--api-key", "k3y", home=tmp_path)
    try:
        for head in (b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n", b"OPTIONS /x HTTP/1.1\r\nHost: 127.0.0.1\r\n",
                     b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer k3y\r\n"
                     b"Content-Type: application/json\r\n"):
            st, _, body = raw_http(w.port, head.decode() + "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
                                   b"1\r\nx\r\n0\r\nX-T: " + b"a" * 70000 + b"\r\n\r\n")
            assert st in (400, 411), body  # (a 70 KB trailer field used to abort the process)
            if head.startswith(b"POST"):
                assert st == 411 and error_of(body)["code"] == "length_required"
        assert w.p.poll() is None and request(w.port, "GET", "/health")[0] == 200
    finally:
        w.stop()


@pytest.mark.parametrize("method,path", [("OPTIONS", "/anything"), ("GET", "/health"), ("HEAD", "/health")])
def test_bodies_on_methods_that_take_none_are_refused_unread(warden, method, path):
    with socket.create_connection(("127.0.0.1", warden.port), timeout=10) as s:
        s.sendall(f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 33554432\r\n"
                  "Expect: 100-continue\r\n\r\n".encode())
        first = s.recv(65536)  # answered without the 32 MiB and without 100 Continue
    assert first.startswith(b"HTTP/1.1 400"), first


def test_a_pipelined_request_is_answered_after_a_half_close(warden, fake_upstream):
    name = script(fake_upstream, [{"content": "slow", "delay": 0.5}])
    body = json.dumps({"messages": [{"role": "user", "content": f"scenario:script:{name}"}]}).encode()
    with socket.create_connection(("127.0.0.1", warden.port), timeout=20) as s:
        s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                  b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        time.sleep(0.2)  # the first request is being handled
        s.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        s.shutdown(socket.SHUT_WR)
        data = recv_until_close(s)
    assert data.count(b"HTTP/1.1 200") == 2, data[-300:]
