"""Edges of the HTTP surfaces (issue 23), against the scripted fake upstream:
- tool calls whose argument fragments interleave (index 0, 1, 0, 1, …) keep every input on the
  Anthropic surface, streamed (one block open at a time) and not; chat gets them right too;
- an HTTP/1.0 client gets a stream as an identity body ended by the connection's close;
- 405 carries `Allow`, and PUT/PATCH with a body on a path without them is 405 before the body;
- 401 carries `WWW-Authenticate: Bearer realm="warden"` on every surface;
- a `tool_choice` of an unknown type is 400 on chat, messages and responses;
- `--upstream http://host:port` (no path) means its /v1;
- keys from files (`--api-key-file`, `--upstream-api-key-file`, `warden chat --api-key-file`), and
  /proc/<pid>/cmdline shows neither a key given on the command line nor its length."""
import json
import os
import socket
import subprocess

import pytest

from conftest import WARDEN_BIN, on_fake, recv_until_close, request, script, sse_frames, warden_on_fake, warden_on_url

KEY = "edge-key-0123456789"
AUTH = {"Authorization": f"Bearer {KEY}"}
WARDEN = on_fake("--api-key", KEY, "--sse-ping-interval", "600000")  # the module's `warden` (conftest.py)

WEATHER = {"name": "get_weather", "description": "Weather for a city",
           "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}
TIME = {"name": "get_time", "description": "Time in a zone",
        "input_schema": {"type": "object", "properties": {"tz": {"type": "string"}}}}
WEATHER_ARGS = {"city": "Paris", "unit": "celsius", "days": [1, 2, 3]}
TIME_ARGS = {"tz": "Europe/Paris", "format": "24h"}


def interleaved_turn():
    calls = [{"name": "get_weather", "arguments": json.dumps(WEATHER_ARGS)},
             {"name": "get_time", "arguments": json.dumps(TIME_ARGS)}]
    return [{"tool_calls": calls, "interleave": True}]


def user(name):
    return [{"role": "user", "content": f"scenario:script:{name}"}]


def raw(port, data, timeout=30):
    """Sends `data` on a new connection; everything warden sends until it closes the connection,
    split into (status line, headers, body)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        s.sendall(data)
        out = recv_until_close(s)
    finally:
        s.close()
    head, _, body = out.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    hdrs = {k.strip().lower(): v.strip() for k, v in (l.split(":", 1) for l in lines[1:])}
    return lines[0], hdrs, body


def anthropic_events(text):
    out = []
    for block in text.split("\n\n"):
        if block.strip():
            name, data = block.split("\n")
            out.append((name[len("event: "):], json.loads(data[len("data: "):])))
    return out


# --- 1. interleaved tool calls ----------------------------------------------------------------

def test_the_fake_really_interleaves(fake_upstream):
    name = script(fake_upstream, interleaved_turn())
    _, _, body = request(fake_upstream.port, "POST", "/v1/chat/completions",
                         {"messages": user(name), "stream": True})
    order = [tc["index"] for k, p in sse_frames(body) if k == "data" and p != "[DONE]"
             for c in json.loads(p)["choices"] for tc in c["delta"].get("tool_calls", [])]
    assert order[:6] == [0, 1, 0, 1, 0, 1], order


def test_anthropic_stream_gives_each_interleaved_call_its_whole_input(warden, fake_upstream):
    name = script(fake_upstream, interleaved_turn())
    st, _, body = request(warden.port, "POST", "/v1/messages",
                          {"model": "m", "max_tokens": 100, "stream": True, "messages": user(name),
                           "tools": [WEATHER, TIME]}, headers=AUTH)
    assert st == 200, body
    blocks, open_block = [], None
    for ev, data in anthropic_events(body.decode()):
        if ev == "content_block_start":
            assert open_block is None, "a block started while another was open"
            assert data["index"] == len(blocks)
            open_block = data["index"]
            blocks.append([data["content_block"], ""])
        elif ev == "content_block_delta":
            assert data["index"] == open_block
            if data["delta"]["type"] == "input_json_delta":
                blocks[open_block][1] += data["delta"]["partial_json"]
        elif ev == "content_block_stop":
            assert data["index"] == open_block
            open_block = None
        elif ev == "message_delta":
            assert data["delta"]["stop_reason"] == "tool_use"
    assert open_block is None
    got = [(b["name"], json.loads(args)) for b, args in blocks if b["type"] == "tool_use"]
    assert got == [("get_weather", WEATHER_ARGS), ("get_time", TIME_ARGS)]


def test_anthropic_message_gives_each_interleaved_call_its_whole_input(warden, fake_upstream):
    name = script(fake_upstream, interleaved_turn())
    st, _, body = request(warden.port, "POST", "/v1/messages",
                          {"model": "m", "max_tokens": 100, "messages": user(name), "tools": [WEATHER, TIME]},
                          headers=AUTH)
    assert st == 200, body
    msg = json.loads(body)
    assert msg["stop_reason"] == "tool_use"
    assert [(b["name"], b["input"]) for b in msg["content"] if b["type"] == "tool_use"] == \
        [("get_weather", WEATHER_ARGS), ("get_time", TIME_ARGS)]


def test_chat_stream_keeps_interleaved_calls_apart(warden, fake_upstream):
    name = script(fake_upstream, interleaved_turn())
    tools = [{"type": "function", "function": {"name": t["name"], "parameters": t["input_schema"]}} for t in (WEATHER, TIME)]
    st, _, body = request(warden.port, "POST", "/v1/chat/completions",
                          {"messages": user(name), "stream": True, "tools": tools}, headers=AUTH)
    assert st == 200
    calls = {}
    for k, p in sse_frames(body):
        if k != "data" or p == "[DONE]":
            continue
        for c in json.loads(p)["choices"]:
            for tc in c["delta"].get("tool_calls", []):
                entry = calls.setdefault(tc["index"], {"name": "", "args": ""})
                entry["name"] += tc.get("function", {}).get("name") or ""
                entry["args"] += tc.get("function", {}).get("arguments") or ""
    assert [(calls[i]["name"], json.loads(calls[i]["args"])) for i in sorted(calls)] == \
        [("get_weather", WEATHER_ARGS), ("get_time", TIME_ARGS)]


# --- 2. HTTP/1.0 streams ----------------------------------------------------------------------

@pytest.mark.parametrize("path,body,connection", [
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "stream": True}, ""),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "stream": True}, "keep-alive"),
    ("/v1/messages", {"model": "m", "max_tokens": 20, "stream": True,
                      "messages": [{"role": "user", "content": "hi"}]}, ""),
])
def test_http10_stream_is_an_identity_body_ended_by_close(warden, path, body, connection):
    data = json.dumps(body).encode()
    head = (f"POST {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Authorization: Bearer {KEY}\r\nContent-Length: {len(data)}\r\n")
    if connection:
        head += f"Connection: {connection}\r\n"
    status, hdrs, rest = raw(warden.port, head.encode() + b"\r\n" + data)  # returns once warden closes
    assert status.startswith("HTTP/1.0 200"), status
    assert hdrs["content-type"] == "text/event-stream"
    assert "transfer-encoding" not in hdrs and "content-length" not in hdrs, hdrs
    assert hdrs.get("connection", "close").lower() == "close"
    if path == "/v1/messages":
        events = [name for name, _ in anthropic_events(rest.decode())]
        assert events[0] == "message_start" and events[-1] == "message_stop"
    else:
        frames = [p for k, p in sse_frames(rest) if k == "data"]
        assert json.loads(frames[0])["object"] == "chat.completion.chunk"
        assert frames[-1] == "[DONE]" and frames.count("[DONE]") == 1


def test_http10_plain_answer_still_has_its_length(warden):
    status, hdrs, rest = raw(warden.port, b"GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
    assert status.startswith("HTTP/1.0 200") and int(hdrs["content-length"]) == len(rest)
    assert json.loads(rest) == {"status": "ok"}


# --- 3. 405 and Allow -------------------------------------------------------------------------

@pytest.mark.parametrize("method,path,allow", [
    ("GET", "/v1/chat/completions", "POST, OPTIONS"),
    ("PUT", "/v1/chat/completions", "POST, OPTIONS"),
    ("PATCH", "/v1/messages", "POST, OPTIONS"),
    ("POST", "/v1/models", "GET, HEAD, OPTIONS"),
    ("PUT", "/api/inference/tool-confirm", "POST, OPTIONS"),
])
def test_405_names_the_paths_methods(warden, method, path, allow):
    body = {"messages": [{"role": "user", "content": "hi"}]} if method != "GET" else None
    st, h, data = request(warden.port, method, path, body, headers=AUTH)
    assert st == 405, data
    assert h["allow"] == allow
    assert json.loads(data)["error"]["type"] == "invalid_request_error"
    assert f"{method} is not allowed on {path}" in json.loads(data)["error"]["message"]


@pytest.mark.parametrize("method", [b"PUT", b"PATCH"])
def test_put_and_patch_bodies_are_refused_with_405_before_they_are_read(warden, method):
    # a megabyte announced, one byte sent: the answer comes without waiting for the rest
    head = (method + b" /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Authorization: Bearer " + KEY.encode() + b"\r\nContent-Length: 1048576\r\n\r\n{")
    status, hdrs, rest = raw(warden.port, head, timeout=10)
    assert status.startswith("HTTP/1.1 405"), status
    assert hdrs["allow"] == "POST, OPTIONS" and hdrs["connection"].lower() == "close"
    assert json.loads(rest)["error"]["type"] == "invalid_request_error"


def test_a_body_on_a_known_delete_route_is_still_400(warden):
    st, _, data = request(warden.port, "DELETE", "/v1/responses/resp_nothing", {"x": 1}, headers=AUTH)
    assert st == 400 and json.loads(data)["error"]["code"] == "unexpected_body"


# --- 4. 401 and WWW-Authenticate --------------------------------------------------------------

@pytest.mark.parametrize("method,path", [
    ("GET", "/v1/models"), ("POST", "/v1/chat/completions"), ("POST", "/v1/messages"),
    ("POST", "/v1/responses"), ("GET", "/api/inference/approvals"),
])
def test_401_challenges_with_bearer(warden, method, path):
    body = {"messages": [{"role": "user", "content": "hi"}]} if method == "POST" else None
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"X-Api-Key": "wrong"}):
        st, h, data = request(warden.port, method, path, body, headers=headers)
        assert st == 401, data
        assert h["www-authenticate"] == 'Bearer realm="warden"'
        env = json.loads(data)
        if path == "/v1/messages":  # Anthropic's envelope
            assert env["type"] == "error" and env["error"]["type"] == "authentication_error"
        else:
            assert "error" in env
    assert "www-authenticate" not in request(warden.port, "GET", "/v1/models", headers=AUTH)[1]


# --- 5. tool_choice types ---------------------------------------------------------------------

def test_tool_choice_of_an_unknown_type_is_400_on_every_surface(warden, fake_upstream):
    before = len(json.loads(request(fake_upstream.port, "GET", "/stats")[2])["requests"])
    fn = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}
    st, _, data = request(warden.port, "POST", "/v1/chat/completions",
                          {"messages": [{"role": "user", "content": "hi"}], "tools": [fn],
                           "tool_choice": {"type": "bogus", "function": {"name": "get_weather"}}}, headers=AUTH)
    err = json.loads(data)["error"]
    assert st == 400 and err["type"] == "invalid_request_error" and err["param"] == "tool_choice", data
    assert "bogus" in err["message"]
    st, _, data = request(warden.port, "POST", "/v1/messages",
                          {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}],
                           "tools": [WEATHER], "tool_choice": {"type": "bogus", "name": "get_weather"}}, headers=AUTH)
    env = json.loads(data)
    assert st == 400 and env["type"] == "error" and env["error"]["type"] == "invalid_request_error", data
    assert "tool_choice" in env["error"]["message"]
    st, _, data = request(warden.port, "POST", "/v1/responses",
                          {"model": "m", "input": "hi", "tools": [{"type": "function", "name": "get_weather"}],
                           "tool_choice": {"type": "bogus", "name": "get_weather"}}, headers=AUTH)
    err = json.loads(data)["error"]
    assert st == 400 and err["type"] == "invalid_request_error" and err["param"] == "tool_choice", data
    assert len(json.loads(request(fake_upstream.port, "GET", "/stats")[2])["requests"]) == before


# --- 6. --upstream without /v1 ----------------------------------------------------------------

@pytest.mark.parametrize("suffix", ["", "/"])
def test_upstream_without_a_path_means_its_v1(fake_upstream, tmp_path, suffix):
    w = warden_on_url(f"http://127.0.0.1:{fake_upstream.port}{suffix}", home=tmp_path)
    try:
        st, _, data = request(w.port, "GET", "/v1/models")
        assert st == 200 and [m["id"] for m in json.loads(data)["data"]] == ["fake-model"], data
        st, _, data = request(w.port, "POST", "/v1/chat/completions",
                              {"messages": [{"role": "user", "content": "hi"}]})
        assert st == 200 and json.loads(data)["object"] == "chat.completion", data
    finally:
        w.stop()


# --- 7. keys from files; the command line --------------------------------------------------------

def key_file(path, text):
    path.write_text(text)
    os.chmod(path, 0o600)
    return str(path)


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("WARDEN_API_KEY", "WARDEN_API_KEY_FILE", "WARDEN_UPSTREAM_API_KEY",
                        "WARDEN_UPSTREAM_API_KEY_FILE", "NO_COLOR")}
    env.update(extra)
    return env


def test_api_key_file_is_the_key(fake_upstream, tmp_path):
    f = key_file(tmp_path / "key", "file-key-abcdef\n")
    up = key_file(tmp_path / "up", "upstream-key-xyz\r\n")
    w = warden_on_fake(fake_upstream, "--api-key-file", f, "--upstream-api-key-file", up, home=tmp_path / "h")
    try:
        assert request(w.port, "GET", "/v1/models")[0] == 401
        assert request(w.port, "GET", "/v1/models", headers={"Authorization": "Bearer file-key-abcdef"})[0] == 200
        st, _, data = request(w.port, "POST", "/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}]},
                              headers={"X-Api-Key": "file-key-abcdef"})
        assert st == 200, data
        with open(f"/proc/{w.p.pid}/cmdline", "rb") as c:
            assert b"file-key" not in c.read()
    finally:
        w.stop()


@pytest.mark.parametrize("args,says", [
    (["--api-key-file", "{dir}/missing"], "--api-key-file {dir}/missing: No such file or directory"),
    (["--api-key-file", "{dir}/empty"], "the file is empty"),
    (["--api-key-file", "{dir}"], "it is a directory"),
    (["--api-key", "k", "--api-key-file", "{dir}/good"], "--api-key and --api-key-file are exclusive"),
    (["--upstream-api-key-file", "{dir}/empty"], "--upstream-api-key-file {dir}/empty: the file is empty"),
    (["--upstream-api-key", "k", "--upstream-api-key-file", "{dir}/good"], "are exclusive"),
])
def test_bad_key_files_stop_start_up(fake_upstream, tmp_path, args, says):
    key_file(tmp_path / "empty", "\n")
    key_file(tmp_path / "good", "sekrit-good\n")
    argv = [a.format(dir=tmp_path) for a in args]
    r = subprocess.run([WARDEN_BIN, "serve", "--port", "0", "--upstream", fake_upstream.url, *argv],
                       capture_output=True, text=True, timeout=60, env=clean_env(WARDEN_HOME=str(tmp_path / "h")))
    assert r.returncode == 2, r.stderr
    assert says.format(dir=tmp_path) in r.stderr and r.stderr.startswith("warden: "), r.stderr
    assert "sekrit" not in r.stderr


@pytest.mark.parametrize("form", ["separate", "equals"])
def test_cmdline_shows_neither_the_key_nor_its_length(fake_upstream, tmp_path, form):
    seen = []
    for key in ("short-key-1", "a-much-longer-key-" + "x" * 60):
        key_args = ["--api-key", key] if form == "separate" else [f"--api-key={key}"]
        w = warden_on_fake(fake_upstream, *key_args, "--model-id", "m", home=tmp_path / str(len(key)))
        try:
            with open(f"/proc/{w.p.pid}/cmdline", "rb") as f:
                cmd = f.read()
            assert key.encode() not in cmd and b"key-1" not in cmd and b"xxxx" not in cmd
            assert request(w.port, "GET", "/v1/models", headers={"Authorization": f"Bearer {key}"})[0] == 200
            seen.append(cmd)
        finally:
            w.stop()
    assert seen[0] == seen[1]  # same bytes, same length, whatever the key's length
    shown = ["--api-key", "****"] if form == "separate" else ["--api-key=****"]
    want = " ".join([WARDEN_BIN, "serve", "--port", "0", "--upstream", fake_upstream.url, *shown, "--model-id", "m"])
    assert seen[0] == want.encode() + b"\0"


def test_chat_api_key_file(fake_upstream, tmp_path):
    w = warden_on_fake(fake_upstream, "--api-key", "chat-file-key-42", home=tmp_path / "h")
    try:
        good = key_file(tmp_path / "key", "chat-file-key-42\n")
        name = script(fake_upstream, [{"content": "Keyed answer."}])

        def chat(*args, **env):
            return subprocess.run([WARDEN_BIN, "chat", "--url", w.base, *args], input=f"scenario:script:{name}",
                                  capture_output=True, text=True, timeout=60, env=clean_env(**env))

        r = chat("--api-key-file", good)
        assert r.returncode == 0 and r.stdout == "Keyed answer.\n", r.stderr
        r = chat(WARDEN_API_KEY_FILE=good)
        assert r.returncode == 0 and r.stdout == "Keyed answer.\n", r.stderr
        r = chat("--api-key-file", str(tmp_path / "missing"))
        assert r.returncode == 2 and "--api-key-file" in r.stderr and "No such file" in r.stderr, r.stderr
        r = chat("--api-key-file", key_file(tmp_path / "empty", ""))
        assert r.returncode == 2 and "empty" in r.stderr, r.stderr
        r = chat("--api-key", "x", "--api-key-file", good)
        assert r.returncode == 2 and "--api-key" in r.stderr, r.stderr
    finally:
        w.stop()
