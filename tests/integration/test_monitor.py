"""The API monitor (issue 28 §5; api/control/monitor.h): GET/DELETE /api/inference/monitor and
/monitor/{id}, a ring of the last 50 model requests, on the scripted fake upstream.

Shown: the seed's case (a non-streaming request refused by the gate's streaming requirement is one
`error` entry carrying that message, and no `active` entry is left behind); a streamed chat, an
Anthropic message and a Responses call each recorded with model, first-token time, usage, stop
reason and previews; a live stream shows as `active` with status `generating`; a client that goes
away is `cancelled`; secrets in prompts are redacted; the ring keeps 50; named keys see and delete
only their own entries."""
import http.client
import json
import os
import time

from conftest import on_fake, request, script, warden_on_fake

WARDEN = on_fake(timeout=60, check_exit=True)


def monitor(port, headers=None):
    st, _, body = request(port, "GET", "/api/inference/monitor", headers=headers)
    assert st == 200, body
    return json.loads(body)


def newest(port, endpoint, headers=None):
    m = monitor(port, headers)
    for e in m["entries"]:
        if e["endpoint"] == endpoint:
            return e
    raise AssertionError(f"no entry for {endpoint}: {m['entries'][:3]}")


def settled(port, headers=None, timeout=10):
    """The monitor once no entry is active (a handler ends just after its client read the answer)."""
    deadline = time.time() + timeout
    while True:
        m = monitor(port, headers)
        if not any(e["status"] == "active" for e in m["entries"]) or time.time() > deadline:
            return m
        time.sleep(0.05)


def open_script_stream(port, name):
    """A streamed chat request playing script `name`: (connection, response), nothing read yet."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("POST", "/v1/chat/completions",
                 body=json.dumps({"model": "m", "stream": True,
                                  "messages": [{"role": "user", "content": f"scenario:script:{name}"}]}),
                 headers={"Content-Type": "application/json"})
    return conn, conn.getresponse()


def test_a_request_refused_by_the_streaming_requirement_is_one_error_entry(warden):
    request(warden.port, "DELETE", "/api/inference/monitor")
    body = {"model": "m", "messages": [{"role": "user", "content": "run it"}], "enable_tools": True,
            "confirm_code_execution": True}
    st, _, raw = request(warden.port, "POST", "/v1/chat/completions", body)
    assert st == 400, raw
    message = json.loads(raw)["error"]["message"]
    assert "requires stream=true" in message
    m = settled(warden.port)
    mine = [e for e in m["entries"] if e["endpoint"] == "/v1/chat/completions"]
    assert len(mine) == 1, mine
    e = mine[0]
    assert e["status"] == "error" and e["error"] == message and e["http_status"] == 400, e
    assert e["prompt_preview"] == "run it" and e["model"] == "m"
    assert not [x for x in m["entries"] if x["status"] == "active"]
    assert m["active_requests"] == 0 and m["status"] == "ready" and m["logging_enabled"] is True


def test_each_surface_is_recorded_with_usage_stop_reason_and_first_token(warden):
    request(warden.port, "DELETE", "/api/inference/monitor")
    st, _, _ = request(warden.port, "POST", "/v1/chat/completions",
                       {"model": "m", "stream": True, "stream_options": {"include_usage": True},
                        "messages": [{"role": "user", "content": "hello there"}]})
    assert st == 200
    st, _, _ = request(warden.port, "POST", "/v1/messages",
                       {"model": "m", "max_tokens": 50, "messages": [{"role": "user", "content": "from anthropic"}]})
    assert st == 200
    st, _, _ = request(warden.port, "POST", "/v1/responses", {"model": "m", "input": "from responses", "store": False})
    assert st == 200
    settled(warden.port)
    chat = newest(warden.port, "/v1/chat/completions")
    assert chat["status"] == "done" and chat["stream"] is True and chat["http_status"] == 200, chat
    assert chat["prompt_preview"] == "hello there" and chat["reply_preview"], chat
    assert chat["stop_reason"] in ("stop", "length") and chat["usage"]["completion_tokens"] > 0, chat
    assert 0 <= chat["first_token_ms"] <= chat["duration_ms"], chat
    msg = newest(warden.port, "/v1/messages")
    assert msg["status"] == "done" and msg["stop_reason"] in ("end_turn", "max_tokens") and msg["reply_preview"], msg
    assert msg["usage"]["prompt_tokens"] > 0 and msg["usage"]["completion_tokens"] > 0, msg
    resp = newest(warden.port, "/v1/responses")
    assert resp["status"] == "done" and resp["stop_reason"] in ("completed", "incomplete") and resp["reply_preview"], resp
    one = request(warden.port, "GET", f"/api/inference/monitor/{chat['id']}")
    full = json.loads(one[2])
    assert one[0] == 200 and full["prompt"] == "hello there" and full["reply"].startswith(chat["reply_preview"])


def test_a_live_stream_is_active_and_a_client_that_leaves_is_cancelled(warden, fake_upstream):
    request(warden.port, "DELETE", "/api/inference/monitor")
    name = script(fake_upstream, [{"content": "x" * 400, "piece": 1, "piece_delay": 0.02}])
    conn, r = open_script_stream(warden.port, name)
    seen = b""
    while b'"content": "x' not in seen and b'"content":"x' not in seen:  # a token has gone out
        got = r.read1(200)
        assert got, seen
        seen += got
    m = monitor(warden.port)
    live = [e for e in m["entries"] if e["status"] == "active"]
    assert len(live) == 1 and m["status"] == "generating" and m["active_requests"] == 1, m
    assert live[0]["first_token_ms"] is not None
    conn.close()  # the client goes away mid-stream
    deadline = time.time() + 10
    while newest(warden.port, "/v1/chat/completions")["status"] == "active" and time.time() < deadline:
        time.sleep(0.05)
    e = newest(warden.port, "/v1/chat/completions")
    assert e["status"] == "cancelled", e


def test_secrets_in_prompts_are_redacted(warden):
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    st, _, _ = request(warden.port, "POST", "/v1/chat/completions",
                       {"model": "m", "messages": [{"role": "user", "content": f"my token is {secret} ok"}]})
    assert st == 200
    settled(warden.port)
    e = newest(warden.port, "/v1/chat/completions")
    assert secret not in json.dumps(e) and "[REDACTED]" in e["prompt_preview"], e
    full = json.loads(request(warden.port, "GET", f"/api/inference/monitor/{e['id']}")[2])
    assert secret not in json.dumps(full)


def test_the_ring_keeps_the_last_50_and_entries_can_be_deleted(warden):
    request(warden.port, "DELETE", "/api/inference/monitor")
    for i in range(55):
        st, _, _ = request(warden.port, "POST", "/v1/chat/completions",
                           {"model": "m", "messages": [{"role": "user", "content": f"n{i}"}]})
        assert st == 200
    m = settled(warden.port)
    assert len(m["entries"]) == 50
    assert m["entries"][0]["prompt_preview"] == "n54" and m["entries"][-1]["prompt_preview"] == "n5"
    first = m["entries"][0]["id"]
    st, _, body = request(warden.port, "DELETE", f"/api/inference/monitor/{first}")
    assert st == 200 and json.loads(body) == {"id": first, "deleted": True}
    st, _, body = request(warden.port, "GET", f"/api/inference/monitor/{first}")
    assert st == 404 and json.loads(body)["error"]["type"] == "not_found_error"
    st, _, body = request(warden.port, "DELETE", "/api/inference/monitor")
    assert st == 200 and json.loads(body)["deleted"] == 49
    assert monitor(warden.port)["entries"] == []


def test_named_keys_see_and_delete_only_their_own(fake_upstream, tmp_path):
    keys = tmp_path / "keys"
    keys.write_text("alice user sk-alice-0123456789abcdef\nbob user sk-bob-0123456789abcdef00\n"
                    "ops admin sk-ops-0123456789abcdef000\n")
    os.chmod(keys, 0o600)
    w = warden_on_fake(fake_upstream, "--api-keys-file", str(keys), timeout=60)
    try:
        alice = {"Authorization": "Bearer sk-alice-0123456789abcdef"}
        bob = {"Authorization": "Bearer sk-bob-0123456789abcdef00"}
        ops = {"Authorization": "Bearer sk-ops-0123456789abcdef000"}
        for who, text in ((alice, "alice asks"), (bob, "bob asks")):
            st, _, _ = request(w.port, "POST", "/v1/chat/completions",
                               {"model": "m", "messages": [{"role": "user", "content": text}]}, headers=who)
            assert st == 200
        a = settled(w.port, alice)["entries"]
        assert [e["prompt_preview"] for e in a] == ["alice asks"] and a[0]["owner"] == "alice" and a[0]["via_api_key"]
        assert [e["prompt_preview"] for e in monitor(w.port, ops)["entries"]] == ["bob asks", "alice asks"]
        st, _, _ = request(w.port, "GET", f"/api/inference/monitor/{a[0]['id']}", headers=bob)
        assert st == 404
        st, _, _ = request(w.port, "DELETE", f"/api/inference/monitor/{a[0]['id']}", headers=bob)
        assert st == 404
        st, _, body = request(w.port, "DELETE", "/api/inference/monitor", headers=bob)
        assert json.loads(body)["deleted"] == 1
        assert [e["prompt_preview"] for e in monitor(w.port, ops)["entries"]] == ["alice asks"]
        st, _, _ = request(w.port, "GET", "/api/inference/monitor")
        assert st == 401
    finally:
        w.stop()


def test_odd_bodies_are_recorded_without_breaking_the_request(warden):
    """Wrong types where the monitor reads (stream, role, model, content) never turn a 400 into a
    500: the request gets its surface's answer and the monitor an entry."""
    request(warden.port, "DELETE", "/api/inference/monitor")
    odd = [{"model": 7, "messages": [{"role": "user", "content": "x"}]},
           {"model": "m", "stream": "yes", "messages": [{"role": "user", "content": "x"}]},
           {"model": "m", "messages": [{"role": 5, "content": {"a": 1}}]},
           {"model": "m", "messages": "not a list"}]
    for body in odd:
        st, _, raw = request(warden.port, "POST", "/v1/chat/completions", body)
        assert st == 400, (body, raw)
    st, _, raw = request(warden.port, "POST", "/v1/chat/completions", b"\xff\xfe not json")
    assert st == 400, raw
    m = settled(warden.port)
    assert len(m["entries"]) == 5 and all(e["status"] == "error" and e["error"] for e in m["entries"]), m["entries"]


def test_a_running_reply_and_a_cut_one_are_redacted_too(warden, fake_upstream):
    """Redaction happens whenever an entry is read, not only when the request ends, and before a
    text is cut to its cap (a secret across the 12,000-character cut leaves nothing of itself)."""
    secret = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789AB"
    name = script(fake_upstream, [{"content": f"the token {secret} and more " + "z" * 400, "piece": 10,
                                   "piece_delay": 0.05}])
    conn, r = open_script_stream(warden.port, name)
    seen = b""
    while b"zzzzzzzzzz" not in seen:  # the secret has gone out; the stream goes on
        got = r.read1(500)
        assert got, seen
        seen += got
    live = newest(warden.port, "/v1/chat/completions")
    assert live["status"] == "active" and secret not in json.dumps(live), live
    full = json.loads(request(warden.port, "GET", f"/api/inference/monitor/{live['id']}")[2])
    assert secret not in full["reply"] and "[REDACTED]" in full["reply"], full["reply"]
    r.read()
    conn.close()
    cut = script(fake_upstream, [{"content": "y" * 11975 + " " + secret + " tail", "piece": 4000}])
    st, _, _ = request(warden.port, "POST", "/v1/chat/completions",
                       {"model": "m", "messages": [{"role": "user", "content": f"scenario:script:{cut}"}]})
    assert st == 200
    settled(warden.port)
    e = newest(warden.port, "/v1/chat/completions")
    full = json.loads(request(warden.port, "GET", f"/api/inference/monitor/{e['id']}")[2])
    assert "ghp_" not in full["reply"] and "klmnop" not in full["reply"], full["reply"][-60:]
    assert full["reply"].startswith("y" * 11975) and len(full["reply"]) <= 12000
