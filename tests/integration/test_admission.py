"""Admission control (issue 28 §1; engine/admission_queue.h) in front of an engine with one slot.

The scripted fake upstream stands in for an engine that holds a request as long as a test needs
(a turn with a delay); warden is told it has one slot (--upstream-slots 1, as --parallel 1 is for
its own llama-server). Shown: 80 concurrent requests → one runs, 64 queue and get their surface's
keep-alives (`: ping` comments, Anthropic `ping` events), the other 15 get 429 in their surface's
envelope with Retry-After; a stream parked on an approval lends its slot (a queued request
completes while it waits) and takes one again when answered; one named key flooding leaves room
for another key, which is served next; --queue-timeout answers 503; the queue's gauges."""
import http.client
import json
import os
import threading
import time

import pytest
from prometheus_client.parser import text_string_to_metric_families

from conftest import on_fake, request, script, warden_on_fake
from test_tool_loop import DECLINED, Stream, call, confirm

WARDEN = on_fake("--upstream-slots", "1", "--sse-ping-interval", "200", timeout=60, check_exit=True)


def gauge(port, name, headers=None):
    st, _, body = request(port, "GET", "/metrics", headers=headers)
    assert st == 200, body
    for fam in text_string_to_metric_families(body.decode()):
        for s in fam.samples:
            if s.name == name:
                return s.value
    return None


def wait_gauge(port, name, want, timeout=20, headers=None):
    deadline = time.time() + timeout
    got = None
    while time.time() < deadline:
        got = gauge(port, name, headers)
        if got == want:
            return
        time.sleep(0.05)
    raise AssertionError(f"{name} is {got}, not {want}")


def hold(fake, seconds):
    """A scripted turn that holds its slot for `seconds`, then answers "held"."""
    return script(fake, [{"content": "held", "delay": seconds}])


class Result:
    def __init__(self):
        self.status = None
        self.headers = {}
        self.body = b""
        self.first_frames = []  # the first frames before any data, for keep-alives


def stream_request(port, path, body, out, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    h = {"Content-Type": "application/json", **(headers or {})}
    conn.request("POST", path, body=json.dumps(body), headers=h)
    r = conn.getresponse()
    out.status = r.status
    out.headers = {k.lower(): v for k, v in r.getheaders()}
    out.body = r.read()
    out.done_at = time.monotonic()
    conn.close()


def openai_body(text="hi"):
    return {"model": "m", "messages": [{"role": "user", "content": text}], "stream": True}


def anthropic_body(text="hi"):
    return {"model": "m", "max_tokens": 32, "messages": [{"role": "user", "content": text}], "stream": True}


def start_thread(fn, *args):
    t = threading.Thread(target=fn, args=args, daemon=True)
    t.start()
    return t


def test_80_concurrent_requests_64_queue_with_keep_alives_and_15_get_429(warden, fake_upstream):
    first = Result()
    name = hold(fake_upstream, 6.0)
    t0 = start_thread(stream_request, warden.port, "/v1/chat/completions", openai_body(f"scenario:script:{name}"), first)
    wait_gauge(warden.port, "warden_engine_slots_busy", 1)
    results, threads = [], []
    for i in range(79):
        r = Result()
        path, body = ("/v1/messages", anthropic_body()) if i % 4 == 3 else ("/v1/chat/completions", openai_body())
        r.path = path
        results.append(r)
        threads.append(start_thread(stream_request, warden.port, path, body, r))
    # The refusals come at once; the queue is then full while the first request still holds the slot.
    deadline = time.time() + 20
    while time.time() < deadline and sum(r.status == 429 for r in results) < 15:
        time.sleep(0.05)
    assert gauge(warden.port, "warden_queue_depth") == 64
    assert gauge(warden.port, "warden_engine_slots") == 1
    for t in [t0, *threads]:
        t.join(timeout=120)
    assert first.status == 200 and first.body.rstrip().endswith(b"data: [DONE]")
    refused = [r for r in results if r.status == 429]
    served = [r for r in results if r.status == 200]
    assert len(refused) == 15 and len(served) == 64, sorted(r.status for r in results)
    for r in refused:
        assert int(r.headers["retry-after"]) >= 1, r.headers
        body = json.loads(r.body)
        if r.path == "/v1/messages":
            assert body["type"] == "error" and body["error"]["type"] == "rate_limit_error", body
            msg = body["error"]["message"]
        else:
            assert body["error"]["type"] == "rate_limit_error" and body["error"]["code"] == "queue_full", body
            msg = body["error"]["message"]
        assert "64 requests are waiting for its 1 slot" in msg, msg
    for r in served:
        text = r.body.decode()
        # every queued request waited at least a few ticks of 200 ms: its keep-alives came first
        if r.path == "/v1/messages":
            assert text.index("event: ping") < text.index("content_block_delta"), text[:400]
        else:
            assert text.startswith(": ping\n\n"), text[:200]
            assert text.rstrip().endswith("data: [DONE]"), text[-200:]
    wait_gauge(warden.port, "warden_queue_depth", 0)
    wait_gauge(warden.port, "warden_engine_slots_busy", 0)
    st, _, body = request(warden.port, "GET", "/metrics")
    fams = {f.name: f for f in text_string_to_metric_families(body.decode())}
    rejected = [s for s in fams["warden_queue_rejected"].samples if s.labels.get("reason") == "queue_full"]
    assert rejected and rejected[0].value >= 15
    waits = {s.name: s.value for s in fams["warden_queue_wait_seconds"].samples if s.labels.get("le") in (None, "+Inf")}
    assert waits["warden_queue_wait_seconds_count"] >= 65


def test_a_parked_approval_lends_its_slot_and_takes_one_again(warden, fake_upstream):
    name = script(fake_upstream, [{"tool_calls": [call("python", {"code": "print(1)"})]}, {"content": "after the answer"}])
    s = Stream(warden.port, {"messages": [{"role": "user", "content": f"scenario:script:{name}"}], "stream": True,
                             "enable_tools": True, "enabled_tools": ["python"], "confirm_code_execution": True,
                             "session_id": "lend-1"}, timeout=60)
    start = s.until_type("tool_start")
    assert start["awaiting_confirmation"], start
    wait_gauge(warden.port, "warden_engine_slots_busy", 0)  # parked: no slot held
    # A request queued behind it completes while the approval waits.
    other = Result()
    stream_request(warden.port, "/v1/chat/completions", openai_body(), other)
    assert other.status == 200 and b"[DONE]" in other.body
    # With the slot busy, the resumed turn waits for it, then goes ahead of new requests.
    held = Result()
    busy = start_thread(stream_request, warden.port, "/v1/chat/completions",
                        openai_body(f"scenario:script:{hold(fake_upstream, 1.5)}"), held)
    wait_gauge(warden.port, "warden_engine_slots_busy", 1)
    st, _ = confirm(warden, start["approval_id"], "deny")
    assert st == 200
    end = s.until_type("tool_end")
    assert end["result"] == DECLINED
    frames = s.rest()
    text = "".join(f["choices"][0]["delta"].get("content") or "" for f in frames
                   if isinstance(f, dict) and f.get("choices"))
    assert "after the answer" in text, frames[-5:]
    busy.join(timeout=30)
    assert held.status == 200


def test_one_key_flooding_does_not_starve_another(fake_upstream, tmp_path):
    keys = tmp_path / "keys"
    keys.write_text("flood user sk-flood-0123456789abcdef\nquiet user sk-quiet-0123456789abcdef\n"
                    "ops admin sk-ops-0123456789abcdef0\n")
    os.chmod(keys, 0o600)
    w = warden_on_fake(fake_upstream, "--api-keys-file", str(keys), "--upstream-slots", "1", "--queue-max", "8",
                       "--sse-ping-interval", "200", timeout=60)
    try:
        flood = {"Authorization": "Bearer sk-flood-0123456789abcdef"}
        quiet = {"Authorization": "Bearer sk-quiet-0123456789abcdef"}
        ops = {"Authorization": "Bearer sk-ops-0123456789abcdef0"}
        first = Result()
        name = hold(fake_upstream, 3.0)
        t0 = start_thread(stream_request, w.port, "/v1/chat/completions", openai_body(f"scenario:script:{name}"),
                          first, flood)
        wait_gauge(w.port, "warden_engine_slots_busy", 1, headers=ops)
        floods = [Result() for _ in range(10)]
        ts = [start_thread(stream_request, w.port, "/v1/chat/completions", openai_body(), r, flood) for r in floods]
        deadline = time.time() + 20
        while time.time() < deadline and sum(r.status == 429 for r in floods) < 6:
            time.sleep(0.05)
        refused = [r for r in floods if r.status == 429]
        assert len(refused) == 6, [r.status for r in floods]  # the flood holds half the queue (4)
        assert json.loads(refused[0].body)["error"]["code"] == "queue_full_for_key"
        # The quiet key still queues, and is served before the flood's older requests.
        q = Result()
        tq = start_thread(stream_request, w.port, "/v1/chat/completions", openai_body(), q, quiet)
        wait_gauge(w.port, "warden_queue_depth", 5, headers=ops)
        for t in [t0, tq, *ts]:
            t.join(timeout=60)
        assert q.status == 200 and q.body.rstrip().endswith(b"data: [DONE]")
        queued = [r for r in floods if r.status == 200]
        assert len(queued) == 4 and all(r.body.rstrip().endswith(b"data: [DONE]") for r in queued)
        assert q.done_at < min(r.done_at for r in queued), (q.done_at, sorted(r.done_at for r in queued))
    finally:
        w.stop()


def test_queue_timeout_answers_503(fake_upstream):
    w = warden_on_fake(fake_upstream, "--upstream-slots", "1", "--queue-timeout", "1", "--sse-ping-interval", "5000",
                       timeout=60)
    try:
        first = Result()
        t0 = start_thread(stream_request, w.port, "/v1/chat/completions",
                          openai_body(f"scenario:script:{hold(fake_upstream, 3.0)}"), first)
        wait_gauge(w.port, "warden_engine_slots_busy", 1)
        st, hdrs, body = request(w.port, "POST", "/v1/chat/completions",
                                 {"model": "m", "messages": [{"role": "user", "content": "hi"}]})
        assert st == 503, body
        err = json.loads(body)["error"]
        assert err["code"] == "queue_timeout" and "waited 1 s in the queue" in err["message"], err
        t0.join(timeout=30)
        assert first.status == 200
    finally:
        w.stop()
