"""End to end: models at run time on the real llama-server and default model (issue 27): the
library (/api/models, /v1/models), load / swap / unload with status and SSE progress, refused
loads that leave the resident model serving, and crash recovery: llama-server killed with
SIGKILL during a stream on each surface, under a parked approval, and the embeddings child."""
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import threading
import time
import http.client

import pytest

from conftest import DEFAULT_MODEL, WARDEN_BIN, request, sse_frames, warden_on_model

START_ID = "startup"


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    """A models folder with a second copy of the default model and a truncated GGUF, and a
    start-up model outside it (a copy of its own: one test deletes it)."""
    d = tmp_path_factory.mktemp("models")
    os.link(DEFAULT_MODEL, d / "second.gguf")
    with open(DEFAULT_MODEL, "rb") as f:
        (d / "broken.gguf").write_bytes(f.read(1_000_000))
    (d / ".partial.gguf.part").write_bytes(b"GGUF")
    own = tmp_path_factory.mktemp("startup")
    os.link(DEFAULT_MODEL, own / "startup.gguf")
    return d, own / "startup.gguf"


@pytest.fixture(scope="module")
def w(lib):
    d, startup = lib
    w = warden_on_model("--models-dir", str(d), "--model", str(startup), "--model-id", START_ID, "--ctx", "2048",
                        "--parallel", "2")
    yield w
    w.stop()


def get(w, path):
    st, _, body = request(w.port, "GET", path)
    return st, json.loads(body)


def post(w, path, body, timeout=180):
    st, _, raw = request(w.port, "POST", path, body, timeout=timeout)
    return st, raw


def status(w):
    st, s = get(w, "/api/inference/status")
    assert st == 200
    return s


def chat(w, max_tokens=4):
    st, raw = post(w, "/v1/chat/completions", {"model": "any", "max_tokens": max_tokens, "temperature": 0,
                                               "messages": [{"role": "user", "content": "Say hi."}]})
    return st, json.loads(raw)


def wait_until(pred, timeout=60, what="condition"):
    end = time.time() + timeout
    while time.time() < end:
        v = pred()
        if v:
            return v
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def chat_pid(w):
    pids = re.findall(r"starting llama-server \(pid (\d+)\)", w.log())
    return int(pids[-1])


def test_library_lists_the_folder_and_the_startup_model(w):
    st, body = get(w, "/api/models")
    assert st == 200
    ids = [m["id"] for m in body["data"]]
    assert ids[0] == START_ID and "second" in ids and "broken" in ids
    assert not any("partial" in i for i in ids)  # a pull's partial file is never a model
    by = {m["id"]: m for m in body["data"]}
    assert by[START_ID]["loaded"] is True and by["second"]["loaded"] is False
    second = by["second"]
    assert second["architecture"] == "llama" and second["context_length"] == 8192
    assert second["size_bytes"] == DEFAULT_MODEL.stat().st_size and second["capabilities"]["chat"] is True
    assert second["quantization"] == "Q4_1" and second["capabilities"]["tools"] is False
    assert "error" in by["broken"] and "GGUF" in by["broken"]["error"]
    st, v1 = get(w, "/v1/models")
    assert st == 200 and [m["id"] for m in v1["data"]] == ids and v1["data"][0]["object"] == "model"
    st, one = get(w, "/api/models/second")
    assert st == 200 and one["id"] == "second"
    st, missing = get(w, "/api/models/nope")
    assert st == 404 and missing["error"]["code"] == "model_not_found"


def test_status_reports_the_model_and_llama_servers_own_numbers(w):
    s = status(w)
    assert s["state"] == "ready" and s["model"] == START_ID and s["context_length"] == 2048
    assert s["n_ctx_slot"] == 2048 and s["slots_total"] == 2 and s["slots_busy"] == 0
    assert s["llama_cpp_build"].startswith("b") and s["backend"] == "cpu"
    # set-up's CPU build lists no devices and its log offloads nothing (a GPU build: "cuda", its
    # devices and "31/31"; engine/llama_devices_test.cpp reads those recordings)
    assert s["devices"] == [] and s["gpu_offload"] is None
    st, v1 = get(w, "/v1/models")
    by = {m["id"]: m for m in v1["data"]}
    assert by[START_ID]["n_ctx_slot"] == 2048 and "n_ctx_slot" not in by["second"]
    assert s["embeddings"]["state"] == "unloaded"


def test_load_swaps_with_progress_then_back_then_unload(w):
    t0 = time.time()
    st, raw = post(w, "/api/inference/load", {"model": "second", "stream": True, "ctx": 1024})
    assert st == 200
    frames = [json.loads(d) for k, d in sse_frames(raw) if k == "data"]
    events = re.findall(r"^event: (\w+)", raw.decode(), re.M)
    assert events[-1] == "done" and "progress" in events
    assert any("starting" in f.get("message", "") for f in frames[:-1])
    done = frames[-1]
    assert done["model"] == "second" and done["state"] == "ready" and done["n_ctx_slot"] == 1024
    print(f"swap took {time.time() - t0:.2f} s")
    st, c = chat(w)
    assert st == 200 and c["model"] == "second"
    _, models = get(w, "/api/models")
    assert {m["id"]: m["loaded"] for m in models["data"]}["second"] is True
    st, raw = post(w, "/api/inference/load", {"model": START_ID})
    assert st == 200 and json.loads(raw)["model"] == START_ID
    st, raw = post(w, "/api/inference/unload", {})
    assert st == 200 and json.loads(raw)["state"] == "unloaded"
    st, c = chat(w)
    assert st == 503 and "no model is loaded" in c["error"]["message"]
    st, h = get(w, "/health")
    assert st == 503 and h["status"] == "unloaded"
    st, raw = post(w, "/api/inference/load", {"model": START_ID, "ctx": 2048})
    assert st == 200
    st, c = chat(w)
    assert st == 200 and c["model"] == START_ID


def test_a_corrupt_gguf_is_refused_and_the_resident_model_keeps_serving(w):
    st, raw = post(w, "/api/inference/load", {"model": "broken"})
    err = json.loads(raw)["error"]
    assert st == 400 and err["code"] == "corrupt_gguf" and "download it again" in err["message"]
    s = status(w)
    assert s["state"] == "ready" and s["model"] == START_ID
    st, c = chat(w)
    assert st == 200


def test_an_impossible_context_is_refused_with_what_would_fit(w):
    st, raw = post(w, "/api/inference/load", {"model": "second", "ctx": 16777216})
    err = json.loads(raw)["error"]
    assert st == 400 and err["code"] == "out_of_memory" and err["param"] == "ctx"
    assert "tokens fit" in err["message"] and "KV cache" in err["message"]
    assert status(w)["model"] == START_ID and status(w)["state"] == "ready"
    assert chat(w)[0] == 200


def test_a_flag_llama_server_does_not_know_is_dropped_and_the_load_retried(w):
    st, raw = post(w, "/api/inference/load", {"model": "second", "llama_extra_args": ["--no-such-flag", "3"]})
    assert st == 200, raw
    s = json.loads(raw)
    assert s["model"] == "second" and s["state"] == "ready"
    assert any("--no-such-flag" in x for x in s["warnings"])
    st, raw = post(w, "/api/inference/load", {"model": START_ID})
    assert st == 200


def test_gpu_placement_reaches_llama_servers_command_line(w):
    st, raw = post(w, "/api/inference/load", {"model": "second", "fit": False, "device": "none",
                                              "tensor_split": [1], "gpu_layers": 0})
    assert st == 200, raw
    assert json.loads(raw)["state"] == "ready"
    with open(f"/proc/{chat_pid(w)}/cmdline", "rb") as f:
        argv = f.read().split(b"\0")
    for flag, value in ((b"--fit", b"off"), (b"--device", b"none"), (b"--tensor-split", b"1"), (b"--n-gpu-layers", b"0")):
        assert argv[argv.index(flag) + 1] == value, argv
    st, c = chat(w)
    assert st == 200 and c["model"] == "second"
    st, raw = post(w, "/api/inference/load", {"model": START_ID})
    assert st == 200


@pytest.mark.parametrize("body,param,code", [
    ({"model": "second", "tensor_split": "3,x"}, "tensor_split", "invalid_value"),
    ({"model": "second", "tensor_split": [-1]}, "tensor_split", "invalid_value"),
    ({"model": "second", "device": "CUDA0; rm -rf /"}, "device", "invalid_value"),
    ({"model": "second", "fit": "maybe"}, "fit", "invalid_value"),
    ({}, "model", "missing_field"),
    ({"model": "nope"}, "model", "model_not_found"),
    ({"model": "second", "ctx": 10}, "ctx", "invalid_value"),
    ({"model": "second", "parallel": 0}, "parallel", "invalid_value"),
    ({"model": "second", "rope_scaling": "wild"}, "rope_scaling", "invalid_value"),
    ({"model": "second", "llama_extra_args": ["--port", "1"]}, "llama_extra_args", "managed_flag"),
    ({"model": "second", "llama_extra_args": "--foo"}, "llama_extra_args", "invalid_type"),
    ({"model": "second", "colour": "red"}, "colour", "unknown_field"),
])
def test_bad_load_requests_are_refused_before_anything_stops(w, body, param, code):
    st, raw = post(w, "/api/inference/load", body)
    err = json.loads(raw)["error"]
    assert st in (400, 404) and err["param"] == param and err["code"] == code
    assert status(w)["model"] == START_ID and status(w)["state"] == "ready"


def test_delete_refuses_the_loaded_model(w):
    st, _, raw = request(w.port, "DELETE", f"/api/models/{START_ID}")
    assert st == 409 and json.loads(raw)["error"]["code"] == "model_in_use"


def cli(w, *args):
    r = subprocess.run([WARDEN_BIN, *args, "--url", w.base], capture_output=True, text=True, timeout=180)
    return r.returncode, r.stdout, r.stderr


def test_the_command_line_lists_shows_loads_and_refuses(w):
    rc, out, _ = cli(w, "models")
    assert rc == 0 and re.search(r"^startup\s+\d+ MB\s+llama\s+8192\s+yes", out, re.M) and "second" in out
    assert "unreadable" in out.split("broken", 1)[1].splitlines()[0]
    rc, out, _ = cli(w, "load", "second", "--ctx", "1024")
    assert rc == 0 and "starting llama-server for second" in out and "loaded second (1024 tokens per slot)" in out
    rc, out, _ = cli(w, "ps")
    assert rc == 0 and re.search(r"^model\s+second$", out, re.M) and "1024 per slot" in out
    rc, _, err = cli(w, "rm", "second")
    assert rc == 1 and "is loaded" in err
    rc, _, err = cli(w, "load", "broken")
    assert rc == 1 and "download it again" in err
    rc, out, _ = cli(w, "load", START_ID, "--ctx", "2048")
    assert rc == 0 and status(w)["model"] == START_ID


def stream_kill(w, path, body, headers=None):
    """Starts a stream, SIGKILLs the chat llama-server after the first frame, and returns
    (seconds from the kill to the in-band error frame, seconds to the end of the stream, frames)."""
    conn = http.client.HTTPConnection("127.0.0.1", w.port, timeout=60)
    conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json", **(headers or {})})
    r = conn.getresponse()
    assert r.status == 200
    killed, error_at, lines = None, None, []
    while True:
        line = r.readline()
        if not line:
            break
        lines.append(line)
        if killed is None and line.startswith(b"data:"):
            os.kill(chat_pid(w), signal.SIGKILL)
            killed = time.time()
        elif killed is not None and error_at is None and b"error" in line:
            error_at = time.time()
    ended = time.time()
    conn.close()
    assert killed is not None, b"".join(lines)
    assert error_at is not None, b"".join(lines)
    return error_at - killed, ended - killed, lines


LONG = "Write a very long story about a lighthouse keeper and the sea, with many chapters."


@pytest.mark.parametrize("surface", ["openai", "anthropic", "responses"])
def test_kill_during_a_stream_errors_in_band_then_the_next_request_is_served(w, surface):
    before = status(w)["restarts"]
    if surface == "openai":
        path, body = "/v1/chat/completions", {"model": "any", "stream": True, "max_tokens": 400,
                                               "messages": [{"role": "user", "content": LONG}]}
    elif surface == "anthropic":
        path, body = "/v1/messages", {"model": "any", "stream": True, "max_tokens": 400,
                                      "messages": [{"role": "user", "content": LONG}]}
    else:
        path, body = "/v1/responses", {"model": "any", "stream": True, "max_output_tokens": 400, "input": LONG,
                                       "store": False}
    to_error, to_end, lines = stream_kill(w, path, body)
    print(f"{surface}: in-band error {to_error:.3f} s after the kill, stream ended after {to_end:.3f} s")
    assert to_error < 1.0 and to_end < 1.0
    text = b"".join(lines).decode()
    if surface == "anthropic":
        assert "event: error" in text
    if surface == "responses":
        assert "response.failed" in text or "event: error" in text
    t0 = time.time()
    st, c = chat(w)
    assert st == 200, c
    print(f"{surface}: next request answered {time.time() - t0:.2f} s after the stream ended")
    s = status(w)
    assert s["restarts"] == before + 1 and s["state"] == "ready"
    assert s["last_failure"]["code"] == "crashed" and "signal 9" in s["last_failure"]["message"]


def test_a_parked_approval_survives_a_restart_and_its_turn_completes(w):
    body = {"model": "any", "stream": True, "max_tokens": 48, "temperature": 0, "seed": 7,
            "messages": [{"role": "user", "content": "Use python to print the sum of 2 and 3."}],
            "tool_choice": {"type": "function", "function": {"name": "python"}},
            "enable_tools": True, "enabled_tools": ["python"], "confirm_code_execution": True,
            "session_id": "restart-approval"}
    conn = http.client.HTTPConnection("127.0.0.1", w.port, timeout=120)
    conn.request("POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"})
    r = conn.getresponse()
    assert r.status == 200
    types, finish = [], None
    while True:
        line = r.readline()
        if not line:
            break
        if not line.startswith(b"data: {"):
            continue
        d = json.loads(line[6:])
        if d.get("type"):
            types.append(d["type"])
            if d["type"] == "tool_start":
                assert d["awaiting_confirmation"] is True
                before = status(w)["restarts"]
                os.kill(chat_pid(w), signal.SIGKILL)
                wait_until(lambda: status(w)["restarts"] == before + 1 and status(w)["state"] == "ready",
                           what="the restart")
                st, raw = post(w, "/api/inference/tool-confirm", {"approval_id": d["approval_id"], "decision": "allow"})
                assert st == 200 and json.loads(raw) == {"resolved": True}
            continue
        for ch in d.get("choices", []):
            finish = ch.get("finish_reason") or finish
    conn.close()
    assert "tool_start" in types and "tool_end" in types
    assert finish in ("stop", "length"), types


def test_the_embeddings_child_is_restarted_too(w):
    emb = {"model": "any", "input": ["a lighthouse"]}
    st, raw = post(w, "/v1/embeddings", emb)
    assert st == 200
    pid = int(re.findall(r"starting llama-server for embeddings \(pid (\d+)\)", w.log())[-1])
    os.kill(pid, signal.SIGKILL)
    t0 = time.time()
    st, raw = post(w, "/v1/embeddings", emb)
    assert st == 200, raw
    assert len(json.loads(raw)["data"][0]["embedding"]) > 0
    print(f"embeddings answered {time.time() - t0:.2f} s after the kill")
    e = status(w)["embeddings"]
    assert e["state"] == "ready" and e["restarts"] == 1


def test_a_missing_file_is_classified_and_the_resident_model_keeps_serving(w, lib):
    st, raw = post(w, "/api/inference/load", {"model": "second"})
    assert st == 200
    startup = lib[1]
    startup.unlink()  # the start-up model's file goes away under warden
    st, raw = post(w, "/api/inference/load", {"model": START_ID})
    err = json.loads(raw)["error"]
    assert st == 400 and err["code"] == "missing_file" and str(startup) in err["message"]
    assert status(w)["model"] == "second"
    st, c = chat(w)
    assert st == 200 and c["model"] == "second"


def test_auto_swap_loads_the_named_model_after_the_request_checks(lib):
    d, _ = lib
    w2 = warden_on_model("--models-dir", str(d), "--auto-swap", "--ctx", "1024", "--parallel", "1")
    try:
        first = status(w2)["model"]
        # a bad request naming another model never evicts the loaded one
        st, _ = post(w2, "/v1/chat/completions", {"model": "second", "max_tokens": "many",
                                                  "messages": [{"role": "user", "content": "hi"}]})
        assert st == 400 and status(w2)["model"] == first
        st, raw = post(w2, "/v1/chat/completions", {"model": "second", "max_tokens": 4,
                                                    "messages": [{"role": "user", "content": "hi"}]})
        assert st == 200 and json.loads(raw)["model"] == "second"
        assert status(w2)["model"] == "second"
        # an id that is not in the library is served by the loaded model, as without --auto-swap
        st, raw = post(w2, "/v1/chat/completions", {"model": "gpt-4o", "max_tokens": 4,
                                                    "messages": [{"role": "user", "content": "hi"}]})
        assert st == 200 and status(w2)["model"] == "second"
    finally:
        w2.stop()


def test_idle_unload_and_the_next_request_loads_again():
    w3 = warden_on_model("--idle-unload", "2", "--ctx", "1024", "--parallel", "1")
    try:
        s = wait_until(lambda: (lambda s: s if s["state"] == "unloaded" else None)(status(w3)), timeout=15,
                       what="the idle unload")
        assert s["loads_on_use"] is True
        st, c = chat(w3)
        assert st == 200
        assert status(w3)["state"] == "ready"
    finally:
        w3.stop()
