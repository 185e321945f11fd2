"""The Responses budgets (issue 23, part 1; api/responses/budgets.h, retention.h): the history that
previous_response_id carries counts toward --max-body, stored bytes stay within --responses-quota
and --responses-session-quota (429 storage_quota_exceeded), live background runs within
--background-runs and --session-background-runs (429 too_many_background_runs), and finished
responses older than --responses-ttl are swept. Each test starts a warden of its own with the
flags it exercises, on the scripted fake upstream."""
import json
import os
import time

import pytest

from conftest import request, script, warden_on_fake

MIB = 1 << 20
MODEL = "gpt-5"


@pytest.fixture
def start(fake_upstream, tmp_path):
    started = []

    def go(*args):
        w = warden_on_fake(fake_upstream, "--sse-ping-interval", "600000", *args, home=tmp_path / f"h{len(started)}")
        started.append(w)
        return w

    yield go
    for w in started:
        w.stop()


def create(w, body):
    st, _, data = request(w.port, "POST", "/v1/responses", {"model": MODEL, **body}, timeout=120)
    return st, json.loads(data)


def big_input(fake, mib, marker="x"):
    """A user input of about `mib` MiB that the fake answers with a short text (the fake plays the
    script its last user message names)."""
    name = script(fake, [{"content": "ok"}])
    return [{"role": "user", "content": marker * (mib * MIB)}, {"role": "user", "content": f"scenario:script:{name}"}]


def stored_bytes(w):
    """The bytes on disk of warden's database (main file and WAL)."""
    return sum(os.path.getsize(w.home / f) for f in ("warden.db", "warden.db-wal") if (w.home / f).exists())


def test_a_chain_of_large_requests_stops_at_the_quota_and_the_database_stays_under_it(start, fake_upstream):
    w = start("--responses-quota", "20", "--responses-session-quota", "0")
    st, r1 = create(w, {"input": big_input(fake_upstream, 3)})
    assert st == 200, r1
    st, r2 = create(w, {"input": big_input(fake_upstream, 3), "previous_response_id": r1["id"]})
    assert st == 200, r2
    st, r3 = create(w, {"input": big_input(fake_upstream, 3), "previous_response_id": r2["id"]})
    assert st == 429, r3
    assert r3["error"]["code"] == "storage_quota_exceeded"
    assert "--responses-quota" in r3["error"]["message"] and "20 MiB" in r3["error"]["message"]
    assert stored_bytes(w) < 20 * MIB
    # not stored, the same request is served; freeing stored responses makes room again
    st, r3 = create(w, {"input": big_input(fake_upstream, 3), "previous_response_id": r2["id"], "store": False})
    assert st == 200 and r3["output"][0]["content"][0]["text"] == "ok"
    for rid in (r1["id"], r2["id"]):
        assert request(w.port, "DELETE", f"/v1/responses/{rid}")[0] == 200
    st, r4 = create(w, {"input": big_input(fake_upstream, 3)})
    assert st == 200, r4
    assert stored_bytes(w) < 20 * MIB


def test_one_session_cannot_take_another_sessions_share(start, fake_upstream):
    w = start("--responses-session-quota", "8")
    st, a1 = create(w, {"input": big_input(fake_upstream, 3), "session_id": "alpha"})
    assert st == 200, a1
    st, a2 = create(w, {"input": big_input(fake_upstream, 3), "session_id": "alpha"})
    assert st == 429 and a2["error"]["code"] == "storage_quota_exceeded", a2
    assert "--responses-session-quota" in a2["error"]["message"]
    st, b1 = create(w, {"input": big_input(fake_upstream, 3), "session_id": "beta"})
    assert st == 200, b1


def test_history_counts_toward_the_body_limit(start, fake_upstream):
    w = start("--max-body", str(5 * MIB))
    st, r1 = create(w, {"input": big_input(fake_upstream, 3)})
    assert st == 200, r1
    st, r2 = create(w, {"input": big_input(fake_upstream, 3), "previous_response_id": r1["id"]})
    assert st == 413, r2
    assert r2["error"]["code"] == "request_too_large" and r2["error"]["param"] == "previous_response_id"
    assert "--max-body" in r2["error"]["message"]
    name = script(fake_upstream, [{"content": "small"}])
    st, r3 = create(w, {"input": f"scenario:script:{name}", "previous_response_id": r1["id"]})
    assert st == 200 and r3["output"][0]["content"][0]["text"] == "small"


def test_live_background_runs_are_capped_in_all_and_per_session(start, fake_upstream):
    w = start("--background-runs", "3", "--session-background-runs", "2")
    slow = script(fake_upstream, [{"content": "late", "delay": 4}] * 8)
    body = {"input": f"scenario:script:{slow}", "background": True}
    ids = []
    for session in ("s1", "s1"):
        st, r = create(w, {**body, "session_id": session})
        assert st == 200, r
        ids.append(r["id"])
    st, r = create(w, {**body, "session_id": "s1"})
    assert st == 429 and r["error"]["code"] == "too_many_background_runs", r
    assert "--session-background-runs" in r["error"]["message"]
    st, r = create(w, {**body, "session_id": "s2"})
    assert st == 200, r
    ids.append(r["id"])
    st, r = create(w, {**body, "session_id": "s3"})
    assert st == 429 and "--background-runs" in r["error"]["message"], r
    # a foreground request is not a background run
    quick = script(fake_upstream, [{"content": "now"}])
    st, r = create(w, {"input": f"scenario:script:{quick}", "session_id": "s1"})
    assert st == 200, r
    # a cancelled run frees its place
    assert request(w.port, "POST", f"/v1/responses/{ids[0]}/cancel")[0] == 200
    deadline = time.time() + 20
    while True:
        st, r = create(w, {**body, "session_id": "s1"})
        if st == 200 or time.time() > deadline:
            break
        time.sleep(0.1)
    assert st == 200, r


def test_finished_responses_past_the_ttl_are_swept_and_live_runs_are_not(start, fake_upstream):
    w = start("--responses-ttl", "2")
    name = script(fake_upstream, [{"content": "short-lived"}])
    st, r = create(w, {"input": f"scenario:script:{name}"})
    assert st == 200
    slow = script(fake_upstream, [{"content": "slow", "delay": 5}])
    st, bg = create(w, {"input": f"scenario:script:{slow}", "background": True})
    assert st == 200
    assert request(w.port, "GET", f"/v1/responses/{r['id']}")[0] == 200
    deadline = time.time() + 15
    while request(w.port, "GET", f"/v1/responses/{r['id']}")[0] != 404:
        assert time.time() < deadline, "the expired response was never swept"
        time.sleep(0.2)
    # the background run (in progress longer than the ttl) was not swept, and ends completed
    deadline = time.time() + 20
    while True:
        st, _, data = request(w.port, "GET", f"/v1/responses/{bg['id']}")
        assert st == 200, data
        if json.loads(data)["status"] == "completed":
            break
        assert time.time() < deadline
        time.sleep(0.2)
    assert "responses sweep: deleted" in w.log()
