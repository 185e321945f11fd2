"""Edges of the HTTP surfaces (issue 23), against the scripted fake upstream:
- tool calls whose argument fragments interleave (index 0, 1, 0, 1, …) keep every input on the
  Anthropic surface, streamed (one block open at a time) and not; chat gets them right too."""
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
