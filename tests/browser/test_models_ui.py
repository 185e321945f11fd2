"""The web UI's model picker and pull box (issue 27) in headless Chromium, against warden on the
real llama-server and default model, with a models folder holding a second copy of the model
(a hard link named second.gguf) and a truncated GGUF (broken.gguf: its first 1 MB).

  1. the picker lists the library: the loaded model marked, the broken file disabled with its
     error as the tooltip; the settings' Models block shows the status and the library
  2. choosing `second` loads it: the progress frames show beside the picker (a spinner), the
     status then says it is loaded, and a chat message is answered by it
  3. a load that fails shows the error frame's message, and the resident model stays loaded
  4. Unload, then Load from the settings' list
  5. "Pull a model" (owner/repo:file.gguf, resolved against a small local hub that serves the
     model slowly, with Range): the bar moves through several percents with MB and MB/s, the pull
     completes and the new model is listed; Cancel stops a slower pull (its .part stays, no model)
  6. the Models block in dark mode
  7. the UI page logged no script error and violated none of its CSP

Driven through tests/browser/web_ui.mjs (see test_web_ui.py); screenshots go to
<build dir>/screenshots/ui-models-*.png."""
import http.server
import json
import os
import re
import threading
import time

import pytest

from conftest import DEFAULT_MODEL, request, warden_on_model
from test_web_ui import UI, Browser, logged, wait_until

START_ID = "startup"
LOAD_MS = 180000  # a load of the real model on a busy 2-core machine


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    d = tmp_path_factory.mktemp("models")
    os.link(DEFAULT_MODEL, d / "second.gguf")
    with open(DEFAULT_MODEL, "rb") as f:
        (d / "broken.gguf").write_bytes(f.read(1_000_000))
    own = tmp_path_factory.mktemp("startup")
    os.link(DEFAULT_MODEL, own / "startup.gguf")
    return d, own / "startup.gguf"


class Hub(http.server.BaseHTTPRequestHandler):
    """The Hugging Face URL layout (/<owner>/<repo>/resolve/main/<file>) serving the default model
    for every file, in 256 KiB pieces with `delay` seconds between them, honouring Range."""
    delay = {"pulled.gguf": 0.01, "slow.gguf": 0.25}
    seen = []

    def log_message(self, *args):
        pass

    def do_GET(self):
        m = re.fullmatch(r"/acme/tiny-models/resolve/main/([\w.-]+)", self.path)
        Hub.seen.append((self.path, self.headers.get("Range")))
        if not m:
            self.send_error(404)
            return
        size = os.path.getsize(DEFAULT_MODEL)
        start = int(re.match(r"bytes=(\d+)-", self.headers.get("Range") or "bytes=0-").group(1))
        self.send_response(206 if start else 200)
        if start:
            self.send_header("Content-Range", f"bytes {start}-{size - 1}/{size}")
        self.send_header("Content-Length", str(size - start))
        self.end_headers()
        with open(DEFAULT_MODEL, "rb") as f:
            f.seek(start)
            try:
                while piece := f.read(256 * 1024):
                    self.wfile.write(piece)
                    time.sleep(Hub.delay.get(m.group(1), 0))
            except (BrokenPipeError, ConnectionResetError):
                pass  # the pull was cancelled


@pytest.fixture(scope="module")
def hub():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hub)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()


@pytest.fixture(scope="module")
def w(lib, hub):
    d, startup = lib
    w = warden_on_model("--models-dir", str(d), "--model", str(startup), "--model-id", START_ID,
                        "--ctx", "2048", "--parallel", "1", "--hf-endpoint", hub)
    yield w
    w.stop()


@pytest.fixture(scope="module")
def browser():
    b = Browser()
    yield b
    b.close()


@pytest.fixture(scope="module")
def ui(browser, w):
    page = UI(browser, "models", w.base + "/")
    page.wait_visible(selector='#model-select[data-loaded="1"]')
    yield page
    page.close()


def status(w):
    st, _, body = request(w.port, "GET", "/api/inference/status")
    assert st == 200, body
    return json.loads(body)


def options(ui):
    return ui.evaluate(expression="""[...document.querySelectorAll('#model-select option')].map(o => ({
        value: o.value, text: o.textContent, disabled: o.disabled, title: o.title, loaded: o.dataset.loaded}))""")["value"]


def open_settings(ui):
    ui.click(selector="#open-settings")
    ui.wait_visible(selector="#models-block #model-list .model-row")


def close_settings(ui):
    ui.click(selector="#close-settings")
    ui.wait_hidden(selector="#settings")


def wait_ready(ui, model):
    ui.wait_visible(selector=f'#model-state[data-state="ready"]', timeout_ms=LOAD_MS)
    wait_until(lambda: ui.evaluate(expression="document.querySelector('#model-select').value")["value"] == model,
               what=f"the picker showing {model}")


# --- 1. the library --------------------------------------------------------------------------

def test_picker_lists_the_library(ui, w):
    opts = {o["value"]: o for o in options(ui)}
    assert set(opts) == {START_ID, "second", "broken"}, opts
    assert opts[START_ID]["loaded"] == "1" and "loaded" in opts[START_ID]["text"], opts
    assert opts["second"]["loaded"] == "0" and not opts["second"]["disabled"], opts
    broken = opts["broken"]
    assert broken["disabled"] and "unusable" in broken["text"] and "GGUF" in broken["title"], broken
    assert ui.evaluate(expression="document.querySelector('#model-select').value")["value"] == START_ID
    state = ui.text(selector="#model-state")["value"]
    assert "ready" in state and "2,048 tokens a slot" in state, state

    open_settings(ui)
    assert ui.attr(selector="#model-status", attribute="data-model")["value"] == START_ID
    assert "2,048 tokens a slot" in ui.text(selector="#model-status")["value"]
    row = ui.text(selector='#model-list .model-row[data-model="broken"]')["value"]
    assert "unusable" in row and "GGUF" in row, row
    assert ui.count(selector='#model-list .model-row[data-model="broken"] button')["value"] == 0  # no Load
    meta = ui.text(selector='#model-list .model-row[data-model="second"]')["value"]
    assert "llama" in meta and "Load" in meta, meta
    ui.shot("models-settings")
    close_settings(ui)


# --- 2. choose a model: it loads, with progress, and answers -----------------------------------

def test_choosing_a_model_loads_it_with_progress_and_chats_go_to_it(ui, w):
    ui.select(selector="#model-select", value="second")
    ui.wait_visible(selector="#model-state.busy[data-progress] .spinner", timeout_ms=LOAD_MS)  # a progress frame shown
    assert ui.attr(selector="#model-select", attribute="disabled")["value"] is not None  # no second pick meanwhile
    ui.shot("models-loading")
    wait_ready(ui, "second")
    assert int(ui.attr(selector="#model-state", attribute="data-progress")["value"]) >= 1
    s = status(w)
    assert s["model"] == "second" and s["state"] == "ready", s
    opts = {o["value"]: o for o in options(ui)}
    assert opts["second"]["loaded"] == "1" and opts[START_ID]["loaded"] == "0", opts
    assert ("POST", "/api/inference/load", 200) in logged(w, ("POST", "/api/inference/load", 200))

    ui.new_chat()
    ui.ask("Say hello in one short sentence.")
    ans = ui.answer()
    assert ans["text"].strip() and not ans["notices"], ans
    assert status(w)["model"] == "second"   # the answer came from the loaded model
    sent = ui.evaluate(expression="wardenApp.current.messages.filter(m => m.role === 'assistant').map(m => m.model)")
    assert sent["value"] == ["second"], sent   # the request named it
    ui.shot("models-chat")


# --- 3. a failed load shows its message --------------------------------------------------------

def test_a_failed_load_shows_the_error_and_the_model_stays(ui, w):
    ui.evaluate(expression="wardenApp.models.load('broken')")  # not offered by the UI: the server refuses it too
    ui.wait_visible(selector='#model-state[data-state="failed"]', timeout_ms=LOAD_MS)
    text = ui.text(selector="#model-state")["value"]
    assert "Could not load broken" in text and "download it again" in text, text
    assert status(w)["model"] == "second"
    assert ui.evaluate(expression="document.querySelector('#model-select').value")["value"] == "second"
    ui.shot("models-load-error")
    open_settings(ui)
    assert "download it again" in ui.text(selector='#model-outcome[data-outcome="error"]')["value"]
    close_settings(ui)


# --- 4. Unload, and Load from the settings' list -----------------------------------------------

def test_unload_then_load_from_the_list(ui, w):
    open_settings(ui)
    ui.click(selector="#model-unload")
    ui.wait_visible(selector='#model-status[data-state="unloaded"]', timeout_ms=LOAD_MS)
    assert status(w)["state"] == "unloaded"
    assert ui.text(selector="#model-state")["value"] == "no model loaded"
    assert ui.evaluate(expression="document.querySelector('#model-select').value")["value"] == ""
    assert ui.attr(selector="#model-unload", attribute="disabled")["value"] is not None
    ui.click(selector=f'#model-list .model-row[data-model="{START_ID}"] button')
    ui.wait_visible(selector=f'#model-list .model-row[data-model="{START_ID}"][data-loaded="1"]', timeout_ms=LOAD_MS)
    wait_ready(ui, START_ID)
    assert status(w)["model"] == START_ID
    close_settings(ui)


# --- 5. pull ----------------------------------------------------------------------------------

def percent(ui):
    return ui.attr(selector="#pull-bar", attribute="data-percent")["value"]


def test_pull_progress_bar_moves_and_completes(ui, w, lib):
    open_settings(ui)
    ui.fill(selector="#pull-source", value="acme/tiny-models:pulled.gguf")
    ui.click(selector="#pull-start")
    seen, text, shot = set(), "", False
    deadline = time.time() + 120
    while ui.attr(selector="#pull-form", attribute="data-outcome")["value"] is None and time.time() < deadline:
        p = percent(ui)
        if p and 0 < int(p) < 100:
            seen.add(int(p))
            text = ui.text(selector="#pull-text")["value"]
            if not shot and int(p) >= 20:
                assert ui.attr(selector="#pull-cancel", attribute="hidden")["value"] is None  # Cancel offered
                ui.shot("models-pull")
                shot = True
    assert len(seen) >= 2, f"the bar showed {sorted(seen)}"   # it moved
    assert re.fullmatch(r"\d+% · [\d.]+ / 98 MB · [\d.]+ MB/s", text), text
    ui.wait_visible(selector='#pull-form[data-outcome="done"]')
    assert percent(ui) == "100"
    assert "Pulled pulled" in ui.text(selector="#pull-status")["value"]
    ui.wait_visible(selector='#model-list .model-row[data-model="pulled"]')  # the list was read again
    assert "pulled" in {o["value"] for o in options(ui)}
    assert (lib[0] / "pulled.gguf").stat().st_size == os.path.getsize(DEFAULT_MODEL)
    assert ("POST", "/api/models/pull", 200) in logged(w, ("POST", "/api/models/pull", 200))
    ui.shot("models-pulled")
    close_settings(ui)


def test_pull_cancel(ui, w, lib):
    open_settings(ui)
    ui.fill(selector="#pull-source", value="acme/tiny-models:slow.gguf")
    ui.click(selector="#pull-start")
    wait_until(lambda: percent(ui) not in (None, ""), timeout=60, what="a progress frame")
    ui.click(selector="#pull-cancel")
    ui.wait_visible(selector='#pull-form[data-outcome="cancelled"]')
    assert "Cancelled" in ui.text(selector="#pull-status")["value"]
    assert ui.attr(selector="#pull-cancel", attribute="hidden")["value"] is not None
    assert "slow" not in {o["value"] for o in options(ui)}
    assert (lib[0] / ".slow.gguf.part").exists() and not (lib[0] / "slow.gguf").exists()
    wait_until(lambda: not [p for p in json.loads(request(w.port, "GET", "/api/models/pulls")[2])["data"]
                            if p["state"] == "running"], what="no pull under way")
    pulls = json.loads(request(w.port, "GET", "/api/models/pulls")[2])["data"]
    assert any(p["model"] == "slow" and p["state"] == "cancelled" for p in pulls), pulls
    close_settings(ui)


# --- 6. dark mode ------------------------------------------------------------------------------

def test_models_block_in_dark_mode(browser, w):
    page = UI(browser, "dark", w.base + "/", color_scheme="dark")
    try:
        page.wait_visible(selector='#model-state[data-state="ready"]')
        open_settings(page)
        page.shot("models-dark")
    finally:
        page.close()


# --- 7. no errors --------------------------------------------------------------------------------

def test_ui_page_had_no_errors(ui):
    c = ui.console()
    assert not c["csp"], c["csp"]
    errors = [e for e in c["entries"] if e["type"] in ("error", "pageerror")
              and "/api/inference/load" not in e["text"] and "status of 4" not in e["text"]]
    assert not errors, errors
