"""A real browser on a page from another origin cannot make warden run anything.

Headless Chromium (Debian's `chromium`, installed by `scripts/setup packages`) opens a page served
by a Python http.server thread as http://attacker.test:<port> (chromium's --host-resolver-rules
maps the name to 127.0.0.1, so the page's origin is not warden's). The page sends the requests a
hostile site can make the browser send to http://127.0.0.1:<warden port> without the user doing
anything:

  nocors   fetch(POST, mode "no-cors", a JSON string body: Content-Type text/plain)
  form     an auto-submitted <form method=POST enctype="text/plain"> into an iframe, whose single
           field's name + "=" + value spells valid JSON
  cors     fetch(POST, mode "cors", Content-Type application/json): needs a CORS preflight
  urlenc   fetch(POST, mode "no-cors", Content-Type application/x-www-form-urlencoded)
  beacon   navigator.sendBeacon with the JSON string (text/plain)
  rebind   fetch(GET /v1/models, no-cors) at http://attacker.test:<warden port>, i.e. with a
           foreign Host header, as after DNS rebinding (a GET carries no Origin header)

Each chat body asks for "enable_tools" and "bypass_permissions" (and "stream": false: the browser
drops an opaque or beacon response once its headers are in, and warden cancels a streamed tool
loop when its client goes away, so a streamed attack would race; a non-streaming request runs the
whole loop before the first byte of the answer) and names its own script of the
scripted fake upstream ("the model"), whose python call writes a marker file at an absolute host
path: if a request reached the tool loop, the fake saw a chat request and the marker exists. The
page records what it could observe in its DOM and posts that record back to its own server when
it is done; the test then ends the browser (no fixed sleeps: every wait is bounded).

So that the test cannot pass vacuously, it also checks, in warden's log, that the browser's requests did
reach warden and were refused (403/415), and that a plain JSON request from a program (no Origin)
still runs the same kind of script on this warden (the marker mechanism works).

The second test: an origin given with --allowed-origins can use the API from a page (a simple
cors GET /v1/models, and a preflighted JSON POST /v1/chat/completions), and read the answers;
the same page gets nothing from a warden started without that flag.
"""
import http.server
import json
import os
import re
import shutil
import signal
import subprocess
import threading
import time
import uuid

import pytest

from conftest import request, warden_on_fake

CHROMIUM = os.environ.get("WARDEN_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ATTACKER_HOST = "attacker.test"
REPORT_TIMEOUT_S = 120   # chromium start-up plus the page's steps (each bounded to 10 s) on a busy machine
STEP_TIMEOUT_MS = 10000
ATTACKS = ("nocors", "form", "cors", "urlenc", "beacon")
LOG_LINE = re.compile(r"\b(GET|POST|OPTIONS|PUT|DELETE|HEAD) (/\S*) -> (\d{3})\b")


# --- the attacker's web server -------------------------------------------------------------

class AttackerSite:
    """http.server on 127.0.0.1:<port>: serves /page/<id> (HTML set by the test) and collects the
    page's POST /report/<id> (same origin, so the page may send JSON there)."""

    def __init__(self):
        self.pages, self.reports, self.events = {}, {}, {}
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def reply(self, status, ctype, data):
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                pid = self.path.split("?")[0].rsplit("/", 1)[-1]
                if self.path.startswith("/page/") and pid in site.pages:
                    return self.reply(200, "text/html; charset=utf-8", site.pages[pid].encode())
                self.reply(404, "text/plain", b"not found")

            def do_POST(self):
                data = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                pid = self.path.rsplit("/", 1)[-1]
                if self.path.startswith("/report/") and pid in site.events:
                    site.reports[pid] = json.loads(data)
                    site.events[pid].set()
                    return self.reply(200, "text/plain", b"ok")
                self.reply(404, "text/plain", b"not found")

        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request, client_address):
                pass  # chromium going away mid-connection when the test ends it

        self.srv = Server(("127.0.0.1", 0), Handler)
        self.port = self.srv.server_address[1]
        self.origin = f"http://{ATTACKER_HOST}:{self.port}"
        self.thread = threading.Thread(target=self.srv.serve_forever, daemon=True)
        self.thread.start()

    def add_page(self, html):
        pid = uuid.uuid4().hex[:12]
        self.pages[pid] = html.replace("__REPORT__", f"/report/{pid}")
        self.events[pid] = threading.Event()
        return pid

    def close(self):
        self.srv.shutdown()
        self.srv.server_close()


@pytest.fixture(scope="module")
def site():
    s = AttackerSite()
    yield s
    s.close()


def visit(site, tmp_path, pid):
    """Opens http://attacker.test:<port>/page/<pid> in headless chromium and waits (bounded) for
    the page's report; returns (report or None, chromium's stderr tail)."""
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"{CHROMIUM} not found: run `scripts/setup packages` (it installs Debian's chromium)")
    profile = tmp_path / f"chromium-profile-{pid}"
    argv = [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--disable-sync",
            "--disable-background-networking", "--disable-component-update", "--no-proxy-server",
            "--disable-features=Translate,MediaRouter,OptimizationHints",
            f"--host-resolver-rules=MAP {ATTACKER_HOST} 127.0.0.1",
            f"--user-data-dir={profile}", f"{site.origin}/page/{pid}"]
    errlog = tmp_path / f"chromium-{pid}.log"
    with open(errlog, "w") as err:
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=err, stderr=subprocess.STDOUT,
                             start_new_session=True)
    try:
        deadline = time.time() + REPORT_TIMEOUT_S
        while not site.events[pid].wait(0.5):
            if p.poll() is not None or time.time() > deadline:
                break
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGTERM)
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        shutil.rmtree(profile, ignore_errors=True)
    tail = errlog.read_text(errors="replace")[-3000:]
    return site.reports.get(pid), tail


PAGE_JS_HELPERS = r"""
const results = {};
function note(key, value) {
  results[key] = value;
  document.getElementById('log').textContent = JSON.stringify(results, null, 1);
}
async function tryFetch(key, url, opts, readBody) {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), CFG.step_ms);
  try {
    const r = await fetch(url, Object.assign({signal: ac.signal, credentials: 'omit'}, opts));
    let body = null;
    if (readBody) { try { body = (await r.text()).slice(0, 400); } catch (e) { body = 'unreadable: ' + e; } }
    note(key, {sent: true, type: r.type, status: r.status, body: body});
  } catch (e) {
    note(key, {sent: false, error: String(e)});
  } finally { clearTimeout(timer); }
}
async function report() {
  document.title = 'done';
  await fetch('__REPORT__', {method: 'POST', headers: {'Content-Type': 'application/json'},
                             body: JSON.stringify(results)});
}
"""


def attack_page(target, rebind_target, bodies, form_name, form_value):
    cfg = {"target": target, "rebind": rebind_target, "bodies": bodies, "form_name": form_name,
           "form_value": form_value, "step_ms": STEP_TIMEOUT_MS}
    return """<!doctype html><html><head><meta charset="utf-8"><title>cute cats</title></head><body>
<pre id="log">running</pre>
<iframe name="sink" id="sink" src="about:blank"></iframe>
<form id="f" method="POST" enctype="text/plain" target="sink"><input type="hidden" id="fi"></form>
<script>
const CFG = %s;
%s
function submitForm() {
  return new Promise(resolve => {
    const fr = document.getElementById('sink');
    let done = false;
    const finish = how => { if (!done) { done = true; resolve(how); } };
    fr.addEventListener('load', () => finish('iframe loaded'));
    setTimeout(() => finish('no iframe load within the step time'), CFG.step_ms);
    const f = document.getElementById('f');
    f.action = CFG.target + '/v1/chat/completions';
    const inp = document.getElementById('fi');
    inp.name = CFG.form_name;
    inp.value = CFG.form_value;
    f.submit();
  });
}
async function main() {
  const chat = CFG.target + '/v1/chat/completions';
  await tryFetch('nocors', chat, {method: 'POST', mode: 'no-cors', body: CFG.bodies.nocors}, false);
  note('form', {sent: true, outcome: await submitForm()});
  await tryFetch('cors', chat, {method: 'POST', mode: 'cors', headers: {'Content-Type': 'application/json'},
                                body: CFG.bodies.cors}, true);
  await tryFetch('urlenc', chat, {method: 'POST', mode: 'no-cors',
                                  headers: {'Content-Type': 'application/x-www-form-urlencoded'},
                                  body: CFG.bodies.urlenc}, false);
  let queued = false;
  try { queued = navigator.sendBeacon(chat, CFG.bodies.beacon); } catch (e) { queued = String(e); }
  note('beacon', {sent: queued});
  await tryFetch('rebind', CFG.rebind + '/v1/models', {method: 'GET', mode: 'no-cors'}, false);
  await report();
}
window.addEventListener('load', () => { main().catch(e => { note('page_error', String(e)); report(); }); });
</script></body></html>""" % (json.dumps(cfg), PAGE_JS_HELPERS)


def cors_page(targets, chat_body, plain_body):
    cfg = {"targets": targets, "chat_body": chat_body, "plain_body": plain_body, "step_ms": STEP_TIMEOUT_MS}
    return """<!doctype html><html><head><meta charset="utf-8"><title>a friendly app</title></head><body>
<pre id="log">running</pre>
<script>
const CFG = %s;
%s
async function main() {
  for (const [key, base] of Object.entries(CFG.targets)) {
    await tryFetch(key + ':models', base + '/v1/models', {method: 'GET', mode: 'cors'}, true);
    await tryFetch(key + ':chat', base + '/v1/chat/completions',
                   {method: 'POST', mode: 'cors', headers: {'Content-Type': 'application/json'},
                    body: CFG.chat_body}, true);
    await tryFetch(key + ':plain', base + '/v1/chat/completions',
                   {method: 'POST', mode: 'no-cors', body: CFG.plain_body}, false);
  }
  await report();
}
window.addEventListener('load', () => { main().catch(e => { note('page_error', String(e)); report(); }); });
</script></body></html>""" % (json.dumps(cfg), PAGE_JS_HELPERS)


# --- helpers ---------------------------------------------------------------------------------

def script(fake, turns):
    name = "browser-" + uuid.uuid4().hex[:10]
    st, _, _ = request(fake.port, "POST", "/script", {"name": name, "turns": turns})
    assert st == 200
    return name


def marker_script(fake, marker):
    code = f"open({str(marker)!r}, 'w').write('ran'); print('ran')"
    args = json.dumps({"code": code})
    return script(fake, [{"tool_calls": [{"name": "python", "arguments": args}]}, {"content": "done"}])


def chat_body(name, **extra):
    body = {"messages": [{"role": "user", "content": f"scenario:script:{name}"}], "stream": False,
            "enable_tools": True, "bypass_permissions": True}
    body.update(extra)
    return body


def fake_saw(fake, names):
    """The script names among the chat requests the fake upstream received."""
    st, _, data = request(fake.port, "GET", "/stats")
    assert st == 200
    seen = set()
    for body in json.loads(data)["requests"]:
        for m in body.get("messages", []):
            c = m.get("content")
            if m.get("role") == "user" and isinstance(c, str) and c.startswith("scenario:script:"):
                if c.split(":", 2)[2] in names:
                    seen.add(c.split(":", 2)[2])
    return seen


def access_log(w):
    return [(m.group(1), m.group(2), int(m.group(3))) for line in w.log().splitlines()
            for m in [LOG_LINE.search(line)] if m]


def wait_for_log(w, pred, timeout=15):
    """warden logs a request when it has answered it; a beacon may still be on its way."""
    deadline = time.time() + timeout
    while True:
        entries = access_log(w)
        if pred(entries) or time.time() > deadline:
            return entries
        time.sleep(0.1)


@pytest.fixture
def markers(tmp_path):
    d = tmp_path / "markers"
    d.mkdir()
    os.chmod(d, 0o777)  # the tool process may not be warden's full root
    return d


# --- tests -----------------------------------------------------------------------------------

def test_cross_origin_page_cannot_run_tools(fake_upstream, site, tmp_path, markers):
    names = {k: marker_script(fake_upstream, markers / f"marker-{k}") for k in ATTACKS}
    w = warden_on_fake(fake_upstream, home=tmp_path / "home")
    try:
        target = f"http://127.0.0.1:{w.port}"
        bodies = {k: json.dumps(chat_body(names[k])) for k in ATTACKS if k != "form"}
        # the form's body is NAME=VALUE: the "=" and VALUE end up inside a JSON string
        form_json = json.dumps(chat_body(names["form"], pad="PAD"))
        form_name, form_value = form_json[:-len('PAD"}')], 'X"}'
        assert json.loads(form_name + "=" + form_value)["bypass_permissions"] is True
        pid = site.add_page(attack_page(target, f"http://{ATTACKER_HOST}:{w.port}", bodies,
                                        form_name, form_value))
        t0 = time.time()
        seen_by_page, chromium_log = visit(site, tmp_path, pid)
        browse_s = time.time() - t0
        assert seen_by_page is not None, f"the page never reported (chromium output):\n{chromium_log}"

        entries = wait_for_log(w, lambda es: sum(1 for m, p, s in es
                                                 if m == "POST" and p == "/v1/chat/completions") >= 4
                               and any(m == "GET" and p == "/v1/models" for m, p, s in es), timeout=10)
        ran = sorted(k for k in ATTACKS if (markers / f"marker-{k}").exists())
        reached_model = sorted(k for k in ATTACKS if names[k] in fake_saw(fake_upstream, set(names.values())))
        chat_posts = [s for m, p, s in entries if m == "POST" and p == "/v1/chat/completions"]
        what = (f"\nmarkers written: {ran}; scripts the fake model was asked to play: {reached_model}"
                f"\npage saw: {json.dumps(seen_by_page, indent=1)}\nwarden's access log: {entries}"
                f"\nbrowsing took {browse_s:.1f} s\nwarden's log:\n{w.log()[-4000:]}")
        print(what)  # shown with -rP

        # the attack failed: nothing ran on the host, "the model" was never asked
        assert ran == [], f"a cross-origin page ran code on the host through: {ran}{what}"
        assert reached_model == [], f"a cross-origin page's request reached the model through: {reached_model}{what}"
        assert all(s in (403, 415) for s in chat_posts), f"a chat POST was not refused{what}"
        # ... and not because the browser sent nothing: the no-cors fetch, the form and the
        # urlencoded fetch got to warden and were refused there (the beacon is not awaited by the
        # page, so it is not counted on)
        assert len(chat_posts) >= 3, f"expected >= 3 refused chat POSTs from the browser{what}"
        for k in ("nocors", "form", "urlenc"):
            assert seen_by_page.get(k, {}).get("sent"), f"the page could not send {k}{what}"
        # the preflighted request never got its POST sent, and the page could read nothing
        assert seen_by_page["cors"]["sent"] is False, what
        # a foreign Host header (DNS rebinding) is refused even without an Origin header
        assert ("GET", "/v1/models", 403) in entries, what

        # the control: the same kind of script does run for a plain JSON client (no Origin)
        control = markers / "marker-control"
        name = marker_script(fake_upstream, control)
        st, _, _ = request(w.port, "POST", "/v1/chat/completions", chat_body(name), timeout=60)
        assert st == 200 and control.exists(), "the marker mechanism itself does not work"
    finally:
        w.stop()


def test_allowed_origin_can_use_the_api_and_others_cannot(fake_upstream, site, tmp_path, markers):
    allowed = warden_on_fake(fake_upstream, "--allowed-origins", site.origin, home=tmp_path / "home-a")
    default = warden_on_fake(fake_upstream, home=tmp_path / "home-d")
    try:
        name = script(fake_upstream, [{"content": "hello from the allowed origin"}])
        body = json.dumps({"messages": [{"role": "user", "content": f"scenario:script:{name}"}], "stream": False})
        # even the allowed origin's text/plain POST (a "simple" request) is not parsed
        plain = marker_script(fake_upstream, markers / "marker-plain")
        pid = site.add_page(cors_page({"allowed": f"http://127.0.0.1:{allowed.port}",
                                       "default": f"http://127.0.0.1:{default.port}"}, body,
                                      json.dumps(chat_body(plain))))
        seen, chromium_log = visit(site, tmp_path, pid)
        assert seen is not None, f"the page never reported (chromium output):\n{chromium_log}"
        what = (f"\npage saw: {json.dumps(seen, indent=1)}\nallowed warden's log: {access_log(allowed)}"
                f"\ndefault warden's log: {access_log(default)}")
        print(what)  # shown with -rP

        # the allowed origin reads the model list (simple cors GET: Access-Control-Allow-Origin)
        models = seen["allowed:models"]
        assert models["sent"] and models["type"] == "cors" and models["status"] == 200, what
        assert json.loads(models["body"])["object"] == "list", what
        # ... and its JSON POST passes the preflight and gets the answer
        chat = seen["allowed:chat"]
        assert chat["sent"] and chat["status"] == 200, what
        assert json.loads(chat["body"])["choices"][0]["message"]["content"] == "hello from the allowed origin", what

        # its text/plain POST reached warden and was refused unparsed (415): nothing ran
        entries = wait_for_log(allowed, lambda es: ("POST", "/v1/chat/completions", 415) in es)
        assert ("POST", "/v1/chat/completions", 415) in entries, what
        assert not (markers / "marker-plain").exists() and not fake_saw(fake_upstream, {plain}), what

        # the default warden: the page reads nothing, and the requests were refused by warden
        assert seen["default:models"]["sent"] is False, what
        assert seen["default:chat"]["sent"] is False, what
        entries = wait_for_log(default, lambda es: any(m == "POST" for m, p, s in es))
        assert ("GET", "/v1/models", 403) in entries, what
        assert ("OPTIONS", "/v1/chat/completions", 403) in entries, what
        # the preflight failed, so the JSON POST was never sent; the text/plain one was refused
        assert [(m, s) for m, p, s in entries if m == "POST"] == [("POST", 403)], what
    finally:
        allowed.stop()
        default.stop()
