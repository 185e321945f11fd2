"""warden in front of a scripted upstream (tests/fake/fake_upstream.py): streaming framing,
pings, in-band errors, status mapping, cancellation, bad input, authentication."""
import json
import socket
import time

import pytest

from conftest import recv_until_close, request, sse_frames, on_fake, warden_on_fake, warden_on_url

USER = {"role": "user", "content": "hi"}


def chat(stream=True, scenario=None, **extra):
    msgs = [{"role": "user", "content": f"scenario:{scenario}"}] if scenario else [USER]
    body = {"model": "anything", "messages": msgs, "stream": stream}
    body.update(extra)
    return body


WARDEN = on_fake("--sse-ping-interval", "200", timeout=30, check_exit=True)  # the `warden` fixture (conftest.py)


def golden_data_frames():
    from conftest import ROOT
    raw = (ROOT / "tests" / "golden" / "llama_server_stream.sse").read_bytes()
    return [p for kind, p in sse_frames(raw) if kind == "data"]


def test_models_and_health_name_the_upstream_model(warden):
    status, _, body = request(warden.port, "GET", "/v1/models")
    assert status == 200
    assert [m["id"] for m in json.loads(body)["data"]] == ["fake-model"]
    status, _, body = request(warden.port, "GET", "/health")
    assert (status, json.loads(body)) == (200, {"status": "ok"})


def test_stream_forwards_every_upstream_frame_unchanged_then_done(warden, fake_upstream):
    status, headers, body = request(warden.port, "POST", "/v1/chat/completions",
                                    chat(stream_options={"include_usage": True}))
    assert status == 200
    assert headers["content-type"] == "text/event-stream"
    assert headers.get("transfer-encoding") == "chunked"
    frames = [p for kind, p in sse_frames(body) if kind == "data"]
    assert frames == golden_data_frames()  # byte-identical payloads, [DONE] last, exactly once
    assert frames[-1] == "[DONE]" and frames.count("[DONE]") == 1
    # warden named the upstream's model and kept the client's fields
    sent = json.loads(request(fake_upstream.port, "GET", "/stats")[2])["requests"][-1]
    assert sent["model"] == "fake-model" and sent["stream"] is True
    assert sent["stream_options"] == {"include_usage": True}


def test_usage_chunk_only_when_asked(warden):
    _, _, body = request(warden.port, "POST", "/v1/chat/completions", chat())
    chunks = [json.loads(p) for k, p in sse_frames(body) if k == "data" and p != "[DONE]"]
    assert all(c["choices"] for c in chunks), "usage-only chunk leaked without include_usage"
    _, _, body = request(warden.port, "POST", "/v1/chat/completions",
                         chat(stream_options={"include_usage": True}))
    chunks = [json.loads(p) for k, p in sse_frames(body) if k == "data" and p != "[DONE]"]
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] > 0


def test_non_stream_is_one_json_body(warden):
    status, headers, body = request(warden.port, "POST", "/v1/chat/completions", chat(stream=False))
    assert status == 200
    assert headers["content-type"] == "application/json"
    j = json.loads(body)
    assert j["object"] == "chat.completion"
    assert j["choices"][0]["finish_reason"]
    assert not body.startswith(b"data:")


def test_ping_comments_while_upstream_is_silent(warden):
    status, _, body = request(warden.port, "POST", "/v1/chat/completions", chat(scenario="stall"))
    assert status == 200
    frames = sse_frames(body)
    kinds = [k for k, _ in frames]
    # 1.2 s of silence with a 200 ms ping interval: several pings, between role and content
    assert kinds.count("comment") >= 3, frames
    first_ping = kinds.index("comment")
    assert 0 < first_ping < kinds.index("data", first_ping)
    assert frames[-1] == ("data", "[DONE]")


@pytest.mark.parametrize("scenario,needle", [("crash", "broke mid-stream"),
                                             ("malformed", "malformed stream frame"),
                                             ("error", "slot crashed")])
def test_errors_after_headers_go_in_band_then_done(warden, scenario, needle):
    status, _, body = request(warden.port, "POST", "/v1/chat/completions", chat(scenario=scenario))
    assert status == 200  # headers were already out
    frames = [p for k, p in sse_frames(body) if k == "data"]
    assert frames[-1] == "[DONE]"
    err = json.loads(frames[-2])["error"]
    assert set(err) == {"message", "type", "param", "code"}
    assert needle in err["message"]
    assert err["type"] in ("api_error", "invalid_request_error")


@pytest.mark.parametrize("stream", [True, False])
def test_upstream_http_errors_map_to_statuses(warden, stream):
    status, _, body = request(warden.port, "POST", "/v1/chat/completions", chat(stream, scenario="http400"))
    assert status == 400
    err = json.loads(body)["error"]
    assert "context size" in err["message"] and err["code"] == "context_length_exceeded"
    status, _, body = request(warden.port, "POST", "/v1/chat/completions", chat(stream, scenario="http500"))
    assert status == 502
    assert json.loads(body)["error"]["type"] == "api_error"
    assert "upstream exploded" in json.loads(body)["error"]["message"]


def test_disconnect_mid_stream_cancels_the_upstream_request(warden, fake_upstream):
    before = json.loads(request(fake_upstream.port, "GET", "/stats")[2])["disconnects"]
    s = socket.create_connection(("127.0.0.1", warden.port))
    body = json.dumps(chat(scenario="endless")).encode()
    s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
              b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    got = b""
    while got.count(b"data:") < 3:
        got += s.recv(65536)
    s.close()
    t0 = time.time()
    while time.time() - t0 < 5:
        if json.loads(request(fake_upstream.port, "GET", "/stats")[2])["disconnects"] > before:
            break
        time.sleep(0.05)
    elapsed = time.time() - t0
    assert json.loads(request(fake_upstream.port, "GET", "/stats")[2])["disconnects"] > before, \
        "upstream kept streaming after the client left"
    assert elapsed < 1.0
    assert "client disconnected" in warden.log()


BAD_BODIES = [
    (b"", None, "invalid_json"),
    (b"not json at all", None, "invalid_json"),
    (b'{"messages": "hello"}', "messages", "invalid_type"),
    (b'{"messages": []}', "messages", "invalid_value"),
    (b'{"messages": [{"role": "system", "content": "x"}]}', "messages", "invalid_value"),
    (b'{"messages": [{"role": "user", "content": "\xff\xfe"}]}', None, "invalid_json"),
    (b'{"messages": [{"role": "user", "content": "x"}], "temperature": "warm"}', "temperature", "invalid_type"),
    (b'[1, 2, 3]', None, "invalid_type"),
    (b'{"messages": [{"role": "user", "content": "x"}], "temperature": 1e400}', None, "invalid_json"),
]


@pytest.mark.parametrize("body,param,code", BAD_BODIES)
def test_bad_input_gets_400_envelope_and_server_keeps_serving(warden, fake_upstream, body, param, code):
    n_before = len(json.loads(request(fake_upstream.port, "GET", "/stats")[2])["requests"])
    status, headers, data = request(warden.port, "POST", "/v1/chat/completions", body)
    assert status == 400
    assert headers["content-type"] == "application/json"
    err = json.loads(data)["error"]
    assert set(err) == {"message", "type", "param", "code"}
    assert err["type"] == "invalid_request_error"
    assert (err["param"], err["code"]) == (param, code)
    # nothing reached the upstream, and a good request still works
    assert len(json.loads(request(fake_upstream.port, "GET", "/stats")[2])["requests"]) == n_before
    assert request(warden.port, "POST", "/v1/chat/completions", chat(stream=False))[0] == 200


def test_unknown_route_wrong_method_and_oversized_body(warden):
    status, _, data = request(warden.port, "GET", "/v1/does-not-exist")
    assert status == 404 and json.loads(data)["error"]["type"] == "not_found_error"
    status, _, data = request(warden.port, "GET", "/v1/chat/completions")
    assert status == 405 and json.loads(data)["error"]["type"] == "invalid_request_error"
    big = b'{"messages":[{"role":"user","content":"' + b"x" * (33 << 20) + b'"}]}'
    try:
        status, _, data = request(warden.port, "POST", "/v1/chat/completions", big)
        assert status == 413
        assert json.loads(data)["error"]["type"] == "invalid_request_error"
    except (ConnectionResetError, BrokenPipeError):
        pass  # the server may close before the client finished sending; it must not crash
    assert request(warden.port, "GET", "/health")[0] == 200


def test_malformed_http_gets_400_and_server_survives(warden):
    s = socket.create_connection(("127.0.0.1", warden.port))
    s.sendall(b"THIS IS NOT HTTP\r\n\r\n")
    reply = s.recv(4096)
    s.close()
    assert reply.startswith(b"HTTP/1.1 400")
    assert b'"invalid_request_error"' in reply
    assert request(warden.port, "GET", "/health")[0] == 200


def test_api_key_required_on_v1_not_on_health(fake_upstream):
    w = warden_on_fake(fake_upstream, "--api-key", "k-123", timeout=30)
    try:
        status, _, data = request(w.port, "GET", "/v1/models")
        assert status == 401 and json.loads(data)["error"]["type"] == "authentication_error"
        status, _, _ = request(w.port, "POST", "/v1/chat/completions", chat(stream=False),
                               headers={"Authorization": "Bearer wrong"})
        assert status == 401
        assert request(w.port, "GET", "/v1/models", headers={"Authorization": "Bearer k-123"})[0] == 200
        assert request(w.port, "GET", "/v1/models", headers={"X-Api-Key": "k-123"})[0] == 200
        assert request(w.port, "GET", "/health")[0] == 200
    finally:
        w.stop()


def test_upstream_down_gives_503_and_health_503():
    # a port nothing listens on
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    w = warden_on_url(f"http://127.0.0.1:{port}/v1", "--model-id", "ghost", timeout=30)
    try:
        status, _, data = request(w.port, "GET", "/health")
        assert status == 503 and json.loads(data)["status"] == "error"
        for stream in (False, True):
            status, _, data = request(w.port, "POST", "/v1/chat/completions", chat(stream))
            assert status == 503
            assert json.loads(data)["error"]["type"] == "api_error"
    finally:
        assert w.stop() == 0
    # without --model-id there is no model to list until the upstream answers
    w = warden_on_url(f"http://127.0.0.1:{port}/v1", timeout=30)
    try:
        status, _, data = request(w.port, "GET", "/v1/models")
        assert status == 503 and "unreachable" in json.loads(data)["error"]["message"]
    finally:
        assert w.stop() == 0


def test_bad_configuration_stops_startup_with_a_clear_message():
    import subprocess
    from conftest import WARDEN_BIN
    for args, needle in ((["--port", "99999"], "--port (WARDEN_PORT)"),
                         (["--parallel", "0"], "--parallel (WARDEN_PARALLEL)"),
                         (["--upstream", "ftp://x"], "--upstream (WARDEN_UPSTREAM)"),
                         (["--model", "/x.gguf", "--upstream", "http://x/v1"], "exclusive")):
        r = subprocess.run([WARDEN_BIN, "serve", *args], capture_output=True, text=True, timeout=10)
        assert r.returncode == 2, (args, r.stderr)
        assert needle in r.stderr, (args, r.stderr)
    r = subprocess.run([WARDEN_BIN, "serve"], capture_output=True, text=True, timeout=10,
                       env={"PATH": "/usr/bin", "HOME": "/tmp", "WARDEN_CTX": "lots"})
    assert r.returncode == 2 and "--ctx (WARDEN_CTX)" in r.stderr


def test_expect_100_continue_is_answered_before_the_body(warden):
    body = json.dumps(chat(stream=False)).encode()
    s = socket.create_connection(("127.0.0.1", warden.port), timeout=5)
    s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
              b"Expect: 100-continue\r\nContent-Length: %d\r\n\r\n" % len(body))
    assert s.recv(4096).startswith(b"HTTP/1.1 100 Continue")
    s.sendall(body)
    reply = b""
    while b"chat.completion" not in reply:
        chunk = s.recv(65536)
        assert chunk, reply
        reply += chunk
    s.close()
    assert reply.startswith(b"HTTP/1.1 200")


def test_deeply_nested_json_is_refused_without_crashing(warden):
    body = b'{"messages":' + b"[" * 200000 + b"]" * 200000 + b"}"
    status, _, data = request(warden.port, "POST", "/v1/chat/completions", body)
    assert status == 400 and json.loads(data)["error"]["code"] == "invalid_json"
    assert request(warden.port, "GET", "/health")[0] == 200


def test_pipelined_requests_on_one_connection(warden):
    one = json.dumps(chat(stream=False)).encode()
    req = (b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
           b"Content-Length: %d\r\n\r\n%s" % (len(one), one))
    s = socket.create_connection(("127.0.0.1", warden.port), timeout=10)
    s.sendall(req + req + b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    reply = recv_until_close(s)
    s.close()
    assert reply.count(b"HTTP/1.1 200") == 3, reply[:500]


def test_sigterm_ends_open_streams_in_band(fake_upstream):
    w = warden_on_fake(fake_upstream, timeout=30)
    s = socket.create_connection(("127.0.0.1", w.port), timeout=10)
    body = json.dumps(chat(scenario="endless")).encode()
    s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
              b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    got = b""
    while got.count(b"data:") < 3:
        got += s.recv(65536)
    assert w.stop() == 0
    got += recv_until_close(s)
    s.close()
    text = got.decode(errors="replace")
    assert "warden is shutting down" in text
    assert "data: [DONE]" in text.split("warden is shutting down", 1)[1]


def read_http_response(s):
    """Reads one Content-Length response from a socket; returns (head, body, rest)."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += s.recv(65536)
    head, rest = data.split(b"\r\n\r\n", 1)
    return head, rest


def test_head_gets_headers_without_a_body(warden):
    s = socket.create_connection(("127.0.0.1", warden.port), timeout=10)
    s.sendall(b"HEAD /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    data = recv_until_close(s)
    s.close()
    first, rest = data.split(b"\r\n\r\n", 1)
    assert first.startswith(b"HTTP/1.1 200") and b"Content-Length: 15" in first
    assert rest.startswith(b"HTTP/1.1 200"), rest[:200]  # no HEAD body before the next response
    assert b"fake-model" in rest


def test_transfer_encoding_other_than_chunked_is_refused(warden):
    s = socket.create_connection(("127.0.0.1", warden.port), timeout=10)
    s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: gzip\r\n\r\n"
              b"GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    data = recv_until_close(s)
    s.close()
    assert data.startswith(b"HTTP/1.1 400")
    assert data.count(b"HTTP/1.1") == 1, "the smuggled request was answered"


def test_sigterm_with_a_pending_non_stream_request_exits_cleanly(fake_upstream):
    w = warden_on_fake(fake_upstream, timeout=30)
    s = socket.create_connection(("127.0.0.1", w.port), timeout=10)
    body = json.dumps(chat(stream=False, scenario="hang")).encode()
    s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
              b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    time.sleep(0.3)
    assert w.stop() == 0  # not a crash (was SIGSEGV: a cancel reached the destroyed client)
    reply = s.recv(65536)
    s.close()
    assert reply == b"" or reply.startswith(b"HTTP/1.1 503")
