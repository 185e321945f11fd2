"""End to end: pulling models into the library (issue 27 "Pull") from tests/fake/hf_hub.py, a
stand-in for the Hugging Face hub's file URLs, into warden on the real llama-server: SSE progress,
an interrupted pull resumed with a Range request, checksum and GGUF checks, free space, cancel,
conflicts, loading what was pulled, and `warden pull`'s progress bar in tmux."""
import json
import os
import re
import shutil
import subprocess
import threading
import time
import uuid

import pytest

from conftest import DEFAULT_MODEL, WARDEN_BIN, request, sse_frames, warden_on_model
from fake.hf_hub import FakeHub

MODEL_BYTES = DEFAULT_MODEL.read_bytes()


@pytest.fixture(scope="module")
def hub():
    h = FakeHub()
    h.files["tiny.gguf"] = MODEL_BYTES
    h.files["notgguf.gguf"] = b"<html>not a model</html>" * 100
    yield h
    h.close()


@pytest.fixture(autouse=True)
def reset_hub(hub):
    hub.chunk_delay, hub.cut_after, hub.wrong_sha, hub.announce_size = 0.0, None, False, None
    yield


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    return tmp_path_factory.mktemp("library")


@pytest.fixture(scope="module")
def w(hub, models):
    w = warden_on_model("--models-dir", str(models), "--hf-endpoint", hub.url, "--ctx", "1024", "--parallel", "1")
    yield w
    w.stop()


def pull(w, body, timeout=120):
    st, _, raw = request(w.port, "POST", "/api/models/pull", body, timeout=timeout)
    if st != 200:
        return st, [], json.loads(raw)
    events = re.findall(r"^event: (\w+)", raw.decode(), re.M)
    frames = [json.loads(d) for k, d in sse_frames(raw) if k == "data"]
    return st, list(zip(events, frames)), None


def listed(w):
    _, _, raw = request(w.port, "GET", "/api/models")
    return [m["id"] for m in json.loads(raw)["data"]]


def test_pull_from_the_hub_shows_progress_then_the_model_is_listed_and_loads(w, hub, models):
    hub.chunk_delay = 0.004  # ~1.5 s for the 98 MB model: several progress frames
    st, frames, _ = pull(w, {"hf": "acme/tiny-GGUF:tiny.gguf"})
    assert st == 200
    kinds = [k for k, _ in frames]
    assert kinds[-1] == "done" and kinds.count("progress") >= 3, kinds
    seen = [f["downloaded_bytes"] for k, f in frames if k == "progress"]
    assert seen == sorted(seen) and seen[-1] > 0 and any(0 < s < len(MODEL_BYTES) for s in seen)
    done = frames[-1][1]
    import hashlib
    assert done["sha256"] == hashlib.sha256(MODEL_BYTES).hexdigest() and done["state"] == "done"
    assert done["total_bytes"] == len(MODEL_BYTES) and done["model"] == "tiny"
    assert (models / "tiny.gguf").stat().st_size == len(MODEL_BYTES)
    assert not list(models.glob(".*part"))
    assert hub.requests[-2][0] == "/acme/tiny-GGUF/resolve/main/tiny.gguf"  # the hub's URL layout
    assert "tiny" in listed(w)
    st, _, raw = request(w.port, "POST", "/api/inference/load", {"model": "tiny"}, timeout=120)
    assert st == 200 and json.loads(raw)["model"] == "tiny"
    st, _, raw = request(w.port, "POST", "/v1/chat/completions",
                         {"model": "tiny", "max_tokens": 4, "messages": [{"role": "user", "content": "hi"}]})
    assert st == 200
    # a pull never overwrites a loaded model
    st, _, err = pull(w, {"hf": "acme/tiny-GGUF:tiny.gguf"})
    assert st == 409 and err["error"]["code"] == "model_in_use"


def test_an_interrupted_pull_resumes_with_a_range_request(w, hub, models):
    hub.cut_after = 30 * 1024 * 1024
    st, frames, _ = pull(w, {"url": hub.url + "/cdn/tiny.gguf", "name": "resumed.gguf"})
    assert st == 200 and frames[-1][0] == "error"
    err = frames[-1][1]["error"]
    assert err["code"] == "download_failed" and "pull it again to resume" in err["message"]
    part = models / ".resumed.gguf.part"
    kept = part.stat().st_size
    assert 0 < kept < len(MODEL_BYTES)
    assert "resumed" not in listed(w)  # a partial file is never a model
    st, frames, _ = pull(w, {"url": hub.url + "/cdn/tiny.gguf", "name": "resumed.gguf"})
    assert frames[-1][0] == "done", frames[-1]
    done = frames[-1][1]
    assert done["resumed"] is True and done["downloaded_bytes"] == len(MODEL_BYTES)
    assert ("/cdn/tiny.gguf", "bytes=%d-" % kept) in hub.requests
    assert (models / "resumed.gguf").read_bytes() == MODEL_BYTES and not part.exists()
    assert "resumed" in listed(w)


def test_a_checksum_mismatch_is_refused_and_nothing_is_left(w, hub, models):
    hub.wrong_sha = True
    st, frames, _ = pull(w, {"hf": "acme/tiny-GGUF:tiny.gguf", "name": "mismatch.gguf"})
    assert frames[-1][0] == "error" and frames[-1][1]["error"]["code"] == "checksum_mismatch"
    assert not (models / "mismatch.gguf").exists() and not (models / ".mismatch.gguf.part").exists()
    hub.wrong_sha = False
    # the request's own sha256 wins over a source that gives none
    st, frames, _ = pull(w, {"url": hub.url + "/plain/tiny.gguf", "name": "own.gguf", "sha256": "ab" * 32})
    assert frames[-1][1]["error"]["code"] == "checksum_mismatch"
    assert "mismatch" not in listed(w) and "own" not in listed(w)


def test_a_file_that_is_not_gguf_is_refused(w, hub, models):
    st, frames, _ = pull(w, {"url": hub.url + "/cdn/notgguf.gguf"})
    assert frames[-1][1]["error"]["code"] == "not_gguf"
    assert not list(models.glob("*notgguf*")) and not list(models.glob(".notgguf*"))


def test_a_file_larger_than_the_free_space_is_refused_before_writing(w, hub, models):
    hub.announce_size = 1 << 50  # a petabyte
    st, frames, _ = pull(w, {"url": hub.url + "/cdn/tiny.gguf", "name": "huge.gguf"})
    err = frames[-1][1]["error"]
    assert err["code"] == "insufficient_storage" and "MiB free" in err["message"]
    assert not (models / ".huge.gguf.part").exists()


def test_cancel_stops_a_running_pull_and_keeps_its_part(w, hub, models):
    hub.chunk_delay = 0.05
    out = {}
    t = threading.Thread(target=lambda: out.update(r=pull(w, {"url": hub.url + "/cdn/tiny.gguf", "name": "cancel.gguf"})))
    t.start()
    pid = None
    for _ in range(100):
        _, _, raw = request(w.port, "GET", "/api/models/pulls")
        running = [p for p in json.loads(raw)["data"] if p["state"] == "running" and p["model"] == "cancel"]
        if running and running[0]["downloaded_bytes"] > 0:
            pid = running[0]["id"]
            break
        time.sleep(0.1)
    assert pid
    # a second pull of the same name is refused while the first runs
    st, _, err = pull(w, {"url": hub.url + "/cdn/tiny.gguf", "name": "cancel.gguf"})
    assert st == 409 and err["error"]["code"] == "pull_in_progress"
    st, _, raw = request(w.port, "DELETE", "/api/models/pulls/" + pid)
    assert st == 200 and json.loads(raw)["cancelled"] is True
    t.join(30)
    frames = out["r"][1]
    assert frames[-1][0] == "error" and frames[-1][1]["error"]["code"] == "cancelled"
    assert (models / ".cancel.gguf.part").exists() and "cancel" not in listed(w)
    st, _, raw = request(w.port, "DELETE", "/api/models/pulls/nope")
    assert st == 404


@pytest.mark.parametrize("body,param", [
    ({}, "url"),
    ({"url": "ftp://host/x.gguf"}, "url"),
    ({"hf": "no-colon"}, "hf"),
    ({"hf": "a/b:../x.gguf"}, "hf"),
    ({"url": "http://127.0.0.1:1/x.gguf", "name": "../up.gguf"}, "name"),
    ({"url": "http://127.0.0.1:1/x.bin"}, "name"),
    ({"url": "http://127.0.0.1:1/x.gguf", "sha256": "xyz"}, "sha256"),
    ({"url": "http://127.0.0.1:1/x.gguf", "colour": 1}, "colour"),
])
def test_bad_pull_requests_are_refused(w, body, param):
    st, _, err = pull(w, body)
    assert st == 400 and err["error"]["param"] == param


def test_warden_pull_draws_a_progress_bar_in_tmux(w, hub, models):
    if not shutil.which("tmux"):
        pytest.skip("tmux is not installed")
    hub.chunk_delay = 0.02  # ~8 s: the bar is seen moving
    name = "t" + uuid.uuid4().hex[:8]
    sock = "pull-" + name
    cmd = f"{WARDEN_BIN} pull acme/tiny-GGUF:tiny.gguf --name {name}.gguf --url {w.base}; echo EXIT=$?; sleep 30"
    subprocess.run(["tmux", "-L", sock, "new-session", "-d", "-x", "120", "-y", "10", cmd], check=True)
    try:
        bars, end = [], time.time() + 60
        while time.time() < end:
            pane = subprocess.run(["tmux", "-L", sock, "capture-pane", "-p"], capture_output=True, text=True).stdout
            m = re.search(r"\[[#-]{30}\]\s+(\d+)%\s+[\d.]+ MB / [\d.]+ MB\s+[\d.]+ MB/s", pane)
            if m:
                bars.append(int(m.group(1)))
            if "EXIT=" in pane:
                break
            time.sleep(0.2)
        assert "EXIT=0" in pane and f"pulled {name}" in pane, pane
        assert len(set(bars)) >= 3 and bars == sorted(bars), bars  # one line, redrawn as it moves
        assert pane.count("MB/s") == 1  # redrawn in place, not one line per update
    finally:
        subprocess.run(["tmux", "-L", sock, "kill-server"], capture_output=True)
    assert name in listed(w)
