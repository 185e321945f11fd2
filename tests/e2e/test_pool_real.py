"""A pool of two real llama-server children (--replicas 2) and the scripted fake upstream as a
third engine (--upstreams-file, serving the same model id) behind one warden (issue 28 §2).

Shown: load spreads over the three engines; a session stays on one engine; one child killed
(SIGKILL) costs no request that had not started, and the child is re-admitted once model_host has
restarted it; the fake answering 500 before its first byte is failed over (the client sees 200)
and re-admitted when it answers again."""
import concurrent.futures
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

import pytest
from prometheus_client.parser import text_string_to_metric_families

from conftest import ROOT, WARDEN_BIN, Proc, pid_alive, request, warden_on_model

MODEL = "SmolLM2-135M-Instruct.Q4_1"


def engine_counts(port):
    st, _, body = request(port, "GET", "/metrics")
    assert st == 200
    out, up = {}, {}
    for fam in text_string_to_metric_families(body.decode()):
        for s in fam.samples:
            if s.name == "warden_engine_requests_total":
                out[(s.labels["engine"], s.labels["outcome"])] = s.value
            if s.name == "warden_engine_up":
                up[s.labels["engine"]] = s.value
    return out, up


def answered(port):
    counts, _ = engine_counts(port)
    return {e: v for (e, o), v in counts.items() if o == "answered"}


def diff(after, before):
    return {e: after.get(e, 0) - before.get(e, 0) for e in after}


def chat(port, text="Say hi.", **extra):
    body = {"model": MODEL, "messages": [{"role": "user", "content": text}], "max_tokens": 8, **extra}
    st, _, data = request(port, "POST", "/v1/chat/completions", body, timeout=120)
    return st, data


@pytest.fixture(scope="module")
def fake():
    p = Proc([sys.executable, str(ROOT / "tests" / "fake" / "fake_upstream.py"), "0"])
    p.port = int(p.wait_for(r"PORT (\d+)", timeout=20).group(1))
    p.url = f"http://127.0.0.1:{p.port}/v1"
    yield p
    p.stop()


@pytest.fixture(scope="module")
def pool(fake, tmp_path_factory):
    f = tmp_path_factory.mktemp("pool") / "engines.txt"
    f.write_text(f"# the scripted upstream as a third engine of the same model\n{fake.url} model={MODEL} slots=2\n")
    w = warden_on_model("--replicas", "2", "--parallel", "2", "--ctx", "2048", "--upstreams-file", str(f),
                        timeout=300)
    deadline = time.time() + 120
    # each child is named after its engine in the log
    while not all(f"llama-server {e} ready at" in w.log() for e in ("chat", "chat-2")) and time.time() < deadline:
        time.sleep(0.2)
    assert all(f"llama-server {e} ready at" in w.log() for e in ("chat", "chat-2")), w.log()[-3000:]
    yield w
    w.stop()


def child_pids(w, engine=r"chat(?:-\d+)?"):
    """The pids of the chat children (of `engine` only when given), in start order."""
    return [int(p) for p in re.findall(rf"starting llama-server {engine} \(pid (\d+)\)", w.log())]


def test_load_spreads_over_two_children_and_the_scripted_engine(pool):
    before = answered(pool.port)
    with concurrent.futures.ThreadPoolExecutor(6) as ex:
        results = list(ex.map(lambda i: chat(pool.port, f"Count to {i}."), range(12)))
    assert [st for st, _ in results] == [200] * 12, results
    got = diff(answered(pool.port), before)
    assert set(got) == {"chat", "chat-2", "chat-3"}, got
    assert all(v >= 1 for v in got.values()), got
    assert sum(got.values()) == 12, got


def test_a_session_stays_on_one_engine(pool):
    for session in ("s-one", "s-two"):
        before = answered(pool.port)
        for _ in range(4):
            st, data = chat(pool.port, session_id=session)
            assert st == 200, data
        got = diff(answered(pool.port), before)
        assert sorted(got.values()) == [0, 0, 4], (session, got)


def test_a_killed_child_costs_no_unstarted_request_and_is_readmitted(pool):
    pids = child_pids(pool)
    victim = child_pids(pool, "chat")[-1]
    assert pid_alive(victim)
    before = answered(pool.port)
    os.kill(victim, signal.SIGKILL)
    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        results = list(ex.map(lambda i: chat(pool.port, f"Name a color {i}."), range(8)))
    assert [st for st, _ in results] == [200] * 8, results
    # model_host restarts the child (a new pid); the pool re-admits it when it is ready.
    deadline = time.time() + 120
    while time.time() < deadline:
        if len(child_pids(pool)) > len(pids) and engine_counts(pool.port)[1].get("chat") == 1:
            break
        time.sleep(0.2)
    assert len(child_pids(pool)) > len(pids), pool.log()[-2000:]
    mid = answered(pool.port)
    deadline = time.time() + 60
    while time.time() < deadline and diff(answered(pool.port), mid).get("chat", 0) == 0:
        assert chat(pool.port)[0] == 200
    assert diff(answered(pool.port), mid).get("chat", 0) >= 1, "the restarted child was not re-admitted"
    assert sum(diff(answered(pool.port), before).values()) >= 9


def test_a_500_before_the_first_byte_fails_over_and_the_engine_is_readmitted(pool, fake):
    counts_before, _ = engine_counts(pool.port)
    request(fake.port, "POST", "/mode", {"chat": "http500"})
    try:
        for i in range(6):
            st, data = chat(pool.port, stream=i % 2 == 0)
            assert st == 200, data
    finally:
        request(fake.port, "POST", "/mode", {"chat": None})
    counts, _ = engine_counts(pool.port)
    assert counts[("chat-3", "failed_over")] - counts_before[("chat-3", "failed_over")] >= 1, counts
    mid = answered(pool.port)
    deadline = time.time() + 40
    while time.time() < deadline and diff(answered(pool.port), mid).get("chat-3", 0) == 0:
        assert chat(pool.port)[0] == 200
        time.sleep(0.1)
    assert diff(answered(pool.port), mid).get("chat-3", 0) >= 1, "the scripted engine was not re-admitted"
    _, _, stats = request(fake.port, "GET", "/stats")
    assert json.loads(stats)["requests"][-1]["model"] == MODEL


def test_a_load_reaches_every_child_and_the_status_names_each(pool):
    st, _, body = request(pool.port, "GET", "/api/inference/status")
    assert st == 200, body
    reps = json.loads(body)["replicas"]
    assert [(r["name"], r["state"], r["model"]) for r in reps] == [("chat", "ready", MODEL),
                                                                   ("chat-2", "ready", MODEL)], reps
    started = {e: len(child_pids(pool, e)) for e in ("chat", "chat-2")}
    st, _, body = request(pool.port, "POST", "/api/inference/load", {"model": MODEL, "ctx": 1024}, timeout=300)
    assert st == 200, body
    reps = json.loads(body)["replicas"]
    assert [(r["name"], r["state"], r["context_length"]) for r in reps] == [("chat", "ready", 1024),
                                                                           ("chat-2", "ready", 1024)], reps
    now = {e: len(child_pids(pool, e)) for e in ("chat", "chat-2")}
    assert now == {e: n + 1 for e, n in started.items()}, ("each child restarted once with the new context", now)
    # `warden ps` shows every child, not only the first
    ps = subprocess.run([WARDEN_BIN, "ps", "--url", f"http://127.0.0.1:{pool.port}"], capture_output=True, text=True,
                        timeout=60)
    assert ps.returncode == 0, ps.stderr
    for name in ("chat", "chat-2"):
        assert re.search(rf"^replica\s+{name}\s+ready\s+{re.escape(MODEL)}, context 1024,", ps.stdout, re.M), ps.stdout
    before = answered(pool.port)
    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        results = list(ex.map(lambda i: chat(pool.port, f"Say {i}."), range(8)))
    assert [st for st, _ in results] == [200] * 8, results
    got = diff(answered(pool.port), before)
    assert got.get("chat", 0) >= 1 and got.get("chat-2", 0) >= 1, got
    # Two loads at once run one after the other over all the children: each answers the status it
    # left (every child at its own ctx), never a mix.
    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        replies = list(ex.map(lambda c: request(pool.port, "POST", "/api/inference/load", {"model": MODEL, "ctx": c},
                                                timeout=300), (1024, 1536)))
    for ctx, (st, _, body) in zip((1024, 1536), replies):
        assert st == 200, body
        assert [r["context_length"] for r in json.loads(body)["replicas"]] == [ctx, ctx], (ctx, body)
    # An unload stops every child; the scripted engine still serves the model meanwhile.
    st, _, body = request(pool.port, "POST", "/api/inference/unload", {}, timeout=120)
    assert st == 200, body
    assert [r["state"] for r in json.loads(body)["replicas"]] == ["unloaded", "unloaded"], body
    before = answered(pool.port)
    assert chat(pool.port)[0] == 200
    assert diff(answered(pool.port), before).get("chat-3") == 1
    st, _, body = request(pool.port, "POST", "/api/inference/load", {"model": MODEL}, timeout=300)
    assert st == 200, body
    assert [r["state"] for r in json.loads(body)["replicas"]] == ["ready", "ready"], body


def test_warden_with_replicas_stops_on_sigterm_while_requests_run():
    """A breaker run: SIGTERM with --replicas and requests running hung warden for good (its
    shutdown and a child's keeper both stopped one llama-server and joined its threads twice)."""
    w = warden_on_model("--replicas", "3", "--parallel", "1", "--ctx", "1024", timeout=300)
    deadline = time.time() + 120
    while "llama-server chat-3 ready at" not in w.log() and time.time() < deadline:
        time.sleep(0.2)
    pids = child_pids(w)
    assert len(pids) == 3, w.log()[-2000:]
    stop = []

    def loop(i):
        n = 0
        while not stop:
            n += 1
            try:
                chat(w.port, f"hi {n}", stream=(i + n) % 2 == 0)
            except Exception:  # noqa: BLE001 - refused, reset or cut while warden stops
                time.sleep(0.05)

    threads = [threading.Thread(target=loop, args=(i,), daemon=True) for i in range(2)]
    try:
        for t in threads:
            t.start()
        time.sleep(3)
        t0 = time.time()
        w.p.send_signal(signal.SIGTERM)
        try:
            rc = w.p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            rc = None
        assert rc == 0, f"warden did not exit within 30 s of SIGTERM ({time.time() - t0:.1f} s)"
    finally:
        stop.append(True)
        w.stop(signal.SIGKILL)
        for t in threads:
            t.join(timeout=40)
    assert not [p for p in pids if pid_alive(p)], "a llama-server child outlived warden"
