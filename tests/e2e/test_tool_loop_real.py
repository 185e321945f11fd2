"""End to end: the tool loop on the real default model, streamed through the official `openai`
SDK. tool_choice forces `python` (warden forces it for llama-server), confirm_code_execution gates
it, and the test answers the approval over HTTP like a UI would."""
import json
import os
import pathlib
import subprocess
import tempfile
import urllib.request

import openai
import pytest

from conftest import on_model

DECLINED = "The user declined to run this tool call."


WARDEN = on_model()  # the module's `warden` fixture (conftest.py); warden.workspaces is under its home




def confirm(warden, approval_id, decision):
    req = urllib.request.Request(warden.base + "/api/inference/tool-confirm",
                                 data=json.dumps({"approval_id": approval_id, "decision": decision}).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.status, json.loads(r.read())


def run_gated(client, warden, decision, session):
    stream = client.chat.completions.create(
        model="any", stream=True, max_tokens=48, temperature=0, seed=7,
        messages=[{"role": "user", "content": "Use python to print the sum of 2 and 3."}],
        tool_choice={"type": "function", "function": {"name": "python"}},
        extra_body={"enable_tools": True, "enabled_tools": ["python"], "confirm_code_execution": True,
                    "session_id": session})
    events, after_end_text, finish = [], "", None
    for chunk in stream:
        d = chunk.to_dict()
        if d.get("type"):
            events.append(d)
            if d["type"] == "tool_start":
                assert d["awaiting_confirmation"] is True and d["tool_name"] == "python"
                # nothing runs before the answer
                assert not any(e["type"] in ("tool_output", "tool_end") for e in events)
                assert confirm(warden, d["approval_id"], decision) == (200, {"resolved": True})
            continue
        choice = chunk.choices[0] if chunk.choices else None
        if choice and any(e["type"] == "tool_end" for e in events):
            after_end_text += choice.delta.content or ""
        if choice and choice.finish_reason:
            finish = choice.finish_reason
    return events, after_end_text, finish


def expected_python_output(code):
    """What the program prints when run the way warden runs it (clean environment, -u)."""
    with tempfile.TemporaryDirectory() as d:
        p = pathlib.Path(d) / "prog.py"
        p.write_text(code)
        r = subprocess.run(["/usr/bin/python3", "-u", str(p)], cwd=d, capture_output=True, text=True,
                           env={"PATH": "/usr/bin:/bin", "HOME": d, "LANG": "C.UTF-8"}, timeout=30)
        return r.returncode, r.stdout + r.stderr


def test_allow_runs_the_models_code_and_the_model_answers(client, warden):
    events, answer, finish = run_gated(client, warden, "allow", "e2e-allow")
    start = next(e for e in events if e["type"] == "tool_start")
    end = next(e for e in events if e["type"] == "tool_end")
    assert end["tool_call_id"] == start["tool_call_id"]
    code = start["arguments"]["code"]
    rc, out = expected_python_output(code)
    if rc == 0:
        assert end["result"] == (out or "(no output)")
    else:
        # same failure; the traceback names warden's script path instead of ours
        assert end["result"].startswith(f"Exit code {rc}:\n")
        assert end["result"].strip().splitlines()[-1] == out.strip().splitlines()[-1]
    live = "".join(e["text"] for e in events if e["type"] == "tool_output")  # streamed as it ran
    if rc == 0:
        assert live == out
    else:
        assert live.strip().splitlines()[-1] == out.strip().splitlines()[-1]
    assert answer.strip() != "" and finish in ("stop", "length")
    # the program ran in the session's workspace, and its temporary script is gone
    ws = warden.workspaces / "e2e-allow"
    assert ws.is_dir() and not list(ws.glob(".warden_run_*"))


def test_deny_skips_and_the_model_still_answers(client, warden):
    events, answer, finish = run_gated(client, warden, "deny", "e2e-deny")
    end = next(e for e in events if e["type"] == "tool_end")
    assert end["result"] == DECLINED
    assert not [e for e in events if e["type"] == "tool_output"]
    assert answer.strip() != "" and finish in ("stop", "length")


def test_non_streaming_gate_is_refused_before_the_model(client):
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(model="any", messages=[{"role": "user", "content": "hi"}],
                                       extra_body={"enable_tools": True, "confirm_code_execution": True})
    assert e.value.body["param"] == "confirm_code_execution"
