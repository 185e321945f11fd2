"""The server-side tool loop and its approval gate, against the scripted fake upstream.

The fake plays given model turns (structured tool_calls streamed the way llama-server streams
them); warden runs the real tools (python, terminal) in the session workspace. Each test reads
warden's SSE stream as a client would, answers approvals over HTTP, and checks what the model was
sent next (the fake records every request)."""
import http.client
import json
import os
import pathlib
import threading
import time
import uuid

import pytest

from conftest import request, script, upstream_requests, on_fake, warden_on_fake

DECLINED = "The user declined to run this tool call."


class Stream:
    """A streaming chat request read frame by frame."""

    def __init__(self, port, body, timeout=30):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        self.conn.request("POST", "/v1/chat/completions", body=json.dumps(body),
                          headers={"Content-Type": "application/json"})
        self.resp = self.conn.getresponse()
        self.status = self.resp.status
        self.frames = []   # parsed JSON payloads, "[DONE]", or ("comment", text)
        self.done = False

    def next(self):
        block = []
        while True:
            line = self.resp.readline()
            if not line:
                self.done = True
                return None
            line = line.decode().rstrip("\n")
            if line == "":
                if block:
                    break
                continue
            block.append(line)
        if block[0].startswith(":"):
            f = ("comment", block[0][1:].strip())
        else:
            data = "\n".join(l[5:].lstrip(" ") for l in block if l.startswith("data:"))
            f = data if data == "[DONE]" else json.loads(data)
        self.frames.append(f)
        return f

    def until(self, pred, what="frame"):
        while True:
            f = self.next()
            if f is None:
                raise AssertionError(f"stream ended before {what}; frames: {self.frames[-10:]}")
            if pred(f):
                return f

    def until_type(self, t):
        return self.until(lambda f: isinstance(f, dict) and f.get("type") == t, t)

    def rest(self):
        while self.next() is not None:
            pass
        return self.frames

    def close(self):
        self.conn.close()


def of_type(frames, t):
    return [f for f in frames if isinstance(f, dict) and f.get("type") == t]


def text_of(frames):
    out = ""
    for f in frames:
        if isinstance(f, dict) and "choices" in f and f["choices"]:
            out += f["choices"][0].get("delta", {}).get("content") or ""
    return out


def finish_of(frames):
    for f in frames:
        if isinstance(f, dict) and f.get("choices") and f["choices"][0].get("finish_reason"):
            return f["choices"][0]["finish_reason"]
    return None


def call(name, args, cid=None):
    c = {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)}
    if cid:
        c["id"] = cid
    return c


WARDEN = on_fake("--sse-ping-interval", "300")  # the module's `warden` fixture (conftest.py)




def chat(name, **kw):
    """A streaming tool-loop request. These tests exercise the seed's gate flags, so the body says
    confirm_tool_calls: false unless a test sets it: a streaming request with nothing set would
    otherwise get permission_mode auto (reference §3.1; tests/integration/test_permissions.py)."""
    body = {"messages": [{"role": "user", "content": f"scenario:script:{name}"}], "stream": True,
            "enable_tools": True, "confirm_tool_calls": False}
    body.update(kw)
    return body


def confirm(w, approval_id, decision, session_id=None):
    body = {"approval_id": approval_id, "decision": decision}
    if session_id is not None:
        body["session_id"] = session_id
    st, _, data = request(w.port, "POST", "/api/inference/tool-confirm", body)
    return st, json.loads(data)


def workspace(home, session):
    return pathlib.Path(home) / "workspaces" / session


# --- the gate -------------------------------------------------------------------------------

def test_allow_runs_once_and_result_reaches_the_model(warden, fake_upstream, home):
    sid = "allow-" + uuid.uuid4().hex[:6]
    code = "open('runs.txt','a').write('x\\n'); print(6*7)"
    name = script(fake_upstream, [
        {"content": "Running it.", "tool_calls": [call("python", {"code": code})]},
        {"content": "It printed 42."}])
    s = Stream(warden.port, chat(name, confirm_code_execution=True, session_id=sid))
    assert s.status == 200
    start = s.until_type("tool_start")
    assert start["awaiting_confirmation"] is True and start["tool_name"] == "python"
    assert len(start["approval_id"]) >= 22 and start["arguments"] == {"code": code}
    # nothing ran while waiting
    time.sleep(0.3)
    assert not (workspace(home, sid) / "runs.txt").exists()
    assert confirm(warden, start["approval_id"], "allow", sid) == (200, {"resolved": True})
    end = s.until_type("tool_end")
    assert end["result"] == "42\n" and end["tool_call_id"] == start["tool_call_id"]
    frames = s.rest()
    assert frames[-1] == "[DONE]" and finish_of(frames) == "stop"
    assert "It printed 42." in text_of(frames)
    assert (workspace(home, sid) / "runs.txt").read_text() == "x\n"  # ran exactly once
    # the second model turn got one assistant message with the call and its tool result
    reqs = upstream_requests(fake_upstream, name)
    assert len(reqs) == 2
    msgs = reqs[1]["messages"]
    assert msgs[-2]["role"] == "assistant" and msgs[-2]["tool_calls"][0]["id"] == start["tool_call_id"]
    assert msgs[-1] == {"role": "tool", "tool_call_id": start["tool_call_id"], "content": "42\n"}
    # a decided approval cannot be decided again
    assert confirm(warden, start["approval_id"], "deny", sid)[0] == 404


def test_deny_skips_and_feeds_the_rejection(warden, fake_upstream, home):
    sid = "deny-" + uuid.uuid4().hex[:6]
    name = script(fake_upstream, [
        {"tool_calls": [call("terminal", {"command": "touch ran.txt; echo ran"})]},
        {"content": "Okay, I will not run it."}])
    s = Stream(warden.port, chat(name, confirm_code_execution=True, session_id=sid))
    start = s.until_type("tool_start")
    assert start["awaiting_confirmation"] is True
    assert confirm(warden, start["approval_id"], "deny")[0] == 200
    end = s.until_type("tool_end")
    assert end["result"] == DECLINED
    frames = s.rest()
    assert "I will not run it" in text_of(frames) and frames[-1] == "[DONE]"
    assert not (workspace(home, sid) / "ran.txt").exists()
    assert not of_type(frames, "tool_output")
    msgs = upstream_requests(fake_upstream, name)[1]["messages"]
    assert msgs[-1]["role"] == "tool" and msgs[-1]["content"] == DECLINED


def test_code_tool_gated_while_non_code_tool_is_not(warden, fake_upstream):
    name = script(fake_upstream, [
        {"tool_calls": [call("render_html", {"code": "<b>hi</b>", "title": "Hi"}),
                        call("python", {"code": "print('py')"})]},
        {"content": "done"}])
    s = Stream(warden.port, chat(name, confirm_code_execution=True))
    # render_html (not gated) gets its provisional card while it streams (reference §2.9); then
    # the python question is put up front; render_html runs without one
    early = s.until_type("tool_start")
    assert early["tool_name"] == "render_html" and early["provenance"]["provisional"] is True
    asked = s.until(lambda f: isinstance(f, dict) and f.get("type") == "tool_start" and f["tool_name"] == "python",
                    "the python card")
    assert asked["awaiting_confirmation"] is True
    free = s.until_type("tool_start")
    assert free["tool_name"] == "render_html" and free["awaiting_confirmation"] is False
    assert free["approval_id"] == ""
    end = s.until_type("tool_end")
    assert end["tool_name"] == "render_html" and "Rendered" in end["result"]
    confirm(warden, asked["approval_id"], "allow")
    end = s.until_type("tool_end")
    assert end["tool_name"] == "python" and end["result"] == "py\n"
    s.rest()


def test_confirm_tool_calls_gates_every_tool(warden, fake_upstream):
    name = script(fake_upstream, [{"tool_calls": [call("render_html", {"code": "<i>x</i>"})]}, {"content": "ok"}])
    s = Stream(warden.port, chat(name, confirm_tool_calls=True))
    start = s.until_type("tool_start")
    assert start["tool_name"] == "render_html" and start["awaiting_confirmation"] is True
    confirm(warden, start["approval_id"], "deny")
    assert s.until_type("tool_end")["result"] == DECLINED
    s.rest()


@pytest.mark.parametrize("flags", [
    {"confirm_code_execution": True, "bypass_permissions": True},
    {"confirm_tool_calls": True, "bypass_permissions": True},
    {"confirm_tool_calls": True, "confirm_code_execution": True, "bypass_permissions": True},
    {},
    {"confirm_tool_calls": False, "confirm_code_execution": False},
])
def test_no_gate_when_bypassed_or_flags_off(warden, fake_upstream, flags):
    name = script(fake_upstream, [{"tool_calls": [call("terminal", {"command": "echo ungated"})]}, {"content": "ok"}])
    s = Stream(warden.port, chat(name, **flags))
    start = s.until_type("tool_start")
    assert start["awaiting_confirmation"] is False and start["approval_id"] == ""
    assert s.until_type("tool_end")["result"] == "ungated\n"
    assert s.rest()[-1] == "[DONE]"


# --- the streaming requirement (400 before any model work) ---------------------------------

@pytest.mark.parametrize("extra,param", [
    ({"confirm_tool_calls": True}, "confirm_tool_calls"),
    ({"confirm_code_execution": True}, "confirm_code_execution"),
    ({"confirm_code_execution": True, "enabled_tools": ["python"]}, "confirm_code_execution"),
    ({"confirm_code_execution": True, "enabled_tools": ["terminal", "render_html"]}, "confirm_code_execution"),
])
def test_non_streaming_gate_is_rejected(warden, fake_upstream, extra, param):
    before = len(json.loads(request(fake_upstream.port, "GET", "/stats")[2])["requests"])
    body = {"messages": [{"role": "user", "content": "hi"}], "enable_tools": True, **extra}
    st, _, data = request(warden.port, "POST", "/v1/chat/completions", body)
    assert st == 400, data
    err = json.loads(data)["error"]
    assert err["param"] == param and "stream" in err["message"]
    after = len(json.loads(request(fake_upstream.port, "GET", "/stats")[2])["requests"])
    assert after == before  # refused before the model was asked anything


@pytest.mark.parametrize("extra", [
    {"confirm_code_execution": True, "enabled_tools": ["render_html"]},   # no code tool selected
    {"confirm_code_execution": True, "max_tool_calls_per_message": 0},    # budget 0
    {"confirm_code_execution": True, "enable_tools": False},             # tools off
    {"confirm_tool_calls": True, "enable_tools": False},
    {"confirm_tool_calls": True, "enabled_tools": []},
    {"confirm_code_execution": True, "bypass_permissions": True},
])
def test_non_streaming_gate_scoping(warden, fake_upstream, extra):
    name = script(fake_upstream, [{"content": "plain answer"}])
    body = {"messages": [{"role": "user", "content": f"scenario:script:{name}"}], "enable_tools": True, **extra}
    st, _, data = request(warden.port, "POST", "/v1/chat/completions", body)
    assert st == 200, data
    assert json.loads(data)["choices"][0]["message"]["content"] == "plain answer"


def test_non_streaming_loop_returns_final_turn_only(warden, fake_upstream):
    name = script(fake_upstream, [
        {"content": "thinking out loud", "tool_calls": [call("python", {"code": "print(2+2)"})]},
        {"content": "The result is 4."}])
    body = {"messages": [{"role": "user", "content": f"scenario:script:{name}"}], "enable_tools": True}
    st, _, data = request(warden.port, "POST", "/v1/chat/completions", body)
    assert st == 200, data
    out = json.loads(data)
    assert out["object"] == "chat.completion"
    assert out["choices"][0]["message"]["content"] == "The result is 4."
    assert upstream_requests(fake_upstream, name)[1]["messages"][-1]["content"] == "4\n"


@pytest.mark.parametrize("body,param", [
    ({"session_id": "../etc"}, "session_id"),
    ({"session_id": "x" * 65}, "session_id"),
    ({"session_id": 5}, "session_id"),
    ({"enabled_tools": ["rm_rf"]}, "enabled_tools"),
    ({"enabled_tools": "python"}, "enabled_tools"),
    ({"max_tool_calls_per_message": -1}, "max_tool_calls_per_message"),
    ({"tool_call_timeout": 0}, "tool_call_timeout"),
    ({"confirm_tool_calls": "yes"}, "confirm_tool_calls"),
    ({"tool_prompt_nudge": "no"}, "tool_prompt_nudge"),
    ({"tool_error_nudge": 0}, "tool_error_nudge"),
    ({"act_reprompts": []}, "act_reprompts"),
    ({"tools": [{"type": "function", "function": {"name": "mine"}}]}, "tools"),
])
def test_bad_loop_fields(warden, body, param):
    full = {"messages": [{"role": "user", "content": "hi"}], "stream": True, "enable_tools": True, **body}
    st, _, data = request(warden.port, "POST", "/v1/chat/completions", full)
    assert st == 400, data
    assert json.loads(data)["error"]["param"] == param


# --- the approval registry over HTTP -------------------------------------------------------

def test_unknown_duplicate_and_wrong_session_approvals(warden, fake_upstream):
    assert confirm(warden, "no-such-id-000000000000", "allow")[0] == 404
    name = script(fake_upstream, [{"tool_calls": [call("python", {"code": "print('s')"})]}, {"content": "ok"}])
    s = Stream(warden.port, chat(name, confirm_code_execution=True, session_id="owner"))
    start = s.until_type("tool_start")
    st, err = confirm(warden, start["approval_id"], "allow", "intruder")
    assert st == 404 and err["error"]["param"] == "approval_id"
    assert confirm(warden, start["approval_id"], "maybe")[0] == 400
    assert confirm(warden, start["approval_id"], "allow", "owner")[0] == 200
    assert confirm(warden, start["approval_id"], "allow", "owner")[0] == 404  # duplicate
    assert s.until_type("tool_end")["result"] == "s\n"
    s.rest()
    for bad in (b"not json", b"[]", json.dumps({"decision": "allow"}).encode()):
        assert request(warden.port, "POST", "/api/inference/tool-confirm", bad)[0] == 400
    assert request(warden.port, "GET", "/api/inference/tool-confirm")[0] == 405


def test_simultaneous_allow_and_deny_exactly_one_wins(warden, fake_upstream, home):
    for round_ in range(5):
        sid = f"race{round_}-" + uuid.uuid4().hex[:6]
        name = script(fake_upstream, [{"tool_calls": [call("terminal", {"command": "echo ran > ran.txt; echo ran"})]},
                                      {"content": "ok"}])
        s = Stream(warden.port, chat(name, confirm_code_execution=True, session_id=sid))
        start = s.until_type("tool_start")
        results = {}
        barrier = threading.Barrier(2)

        def go(decision):
            barrier.wait()
            results[decision] = confirm(warden, start["approval_id"], decision)[0]

        ts = [threading.Thread(target=go, args=(d,)) for d in ("allow", "deny")]
        [t.start() for t in ts]
        [t.join() for t in ts]
        assert sorted(results.values()) == [200, 404], results
        end = s.until_type("tool_end")
        ran = (workspace(home, sid) / "ran.txt").exists()
        if results["allow"] == 200:
            assert end["result"] == "ran\n" and ran
        else:
            assert end["result"] == DECLINED and not ran
        s.rest()


def test_two_pending_calls_decided_in_reverse_order(warden, fake_upstream, home):
    sid = "two-" + uuid.uuid4().hex[:6]
    name = script(fake_upstream, [
        {"tool_calls": [call("terminal", {"command": "echo one > one.txt; echo one"}, "call_a"),
                        call("terminal", {"command": "echo two > two.txt; echo two"}, "call_b")]},
        {"content": "both handled"}])
    s = Stream(warden.port, chat(name, confirm_code_execution=True, session_id=sid))
    # both questions are pending at once, each with its own id
    first = s.until_type("tool_start")
    second = s.until_type("tool_start")
    assert (first["tool_call_id"], second["tool_call_id"]) == ("call_a", "call_b")
    assert first["awaiting_confirmation"] and second["awaiting_confirmation"]
    assert first["approval_id"] != second["approval_id"]
    # answered in reverse order: the second is allowed first, then the first is denied
    assert confirm(warden, second["approval_id"], "allow")[0] == 200
    time.sleep(0.3)
    assert not (workspace(home, sid) / "two.txt").exists()  # calls still run in the model's order
    assert confirm(warden, first["approval_id"], "deny")[0] == 200
    ends = [s.until_type("tool_end"), s.until_type("tool_end")]
    assert [(e["tool_call_id"], e["result"]) for e in ends] == [("call_a", DECLINED), ("call_b", "two\n")]
    s.rest()
    assert not (workspace(home, sid) / "one.txt").exists()
    assert (workspace(home, sid) / "two.txt").exists()
    msgs = upstream_requests(fake_upstream, name)[1]["messages"]
    assert [m["tool_call_id"] for m in msgs if m["role"] == "tool"] == ["call_a", "call_b"]
    assert [m["content"] for m in msgs if m["role"] == "tool"] == [DECLINED, "two\n"]


def test_cancel_declines_every_pending_call_of_the_turn(warden, fake_upstream, home):
    sid = "cancel2-" + uuid.uuid4().hex[:6]
    name = script(fake_upstream, [
        {"tool_calls": [call("terminal", {"command": "touch a.txt"}, "c1"), call("terminal", {"command": "touch b.txt"}, "c2")]},
        {"content": "x"}])
    s = Stream(warden.port, chat(name, confirm_code_execution=True, session_id=sid))
    a, b = s.until_type("tool_start"), s.until_type("tool_start")
    assert json.loads(request(warden.port, "POST", "/api/inference/cancel", {"session_id": sid})[2]) == {"cancelled": 1}
    frames = s.rest()
    assert [(e["tool_call_id"], e["result"]) for e in of_type(frames, "tool_end")] == [("c1", DECLINED), ("c2", DECLINED)]
    assert frames[-1] == "[DONE]"
    for x in (a, b):
        assert confirm(warden, x["approval_id"], "allow")[0] == 404
    assert not (workspace(home, sid) / "a.txt").exists() and not (workspace(home, sid) / "b.txt").exists()


def test_decision_before_wait_is_not_lost(warden, fake_upstream):
    """The id is registered before tool_start goes out, so an instant answer always lands."""
    for _ in range(5):
        name = script(fake_upstream, [{"tool_calls": [call("python", {"code": "print('fast')"})]}, {"content": "ok"}])
        s = Stream(warden.port, chat(name, confirm_code_execution=True))
        start = s.until_type("tool_start")
        assert confirm(warden, start["approval_id"], "allow")[0] == 200
        assert s.until_type("tool_end")["result"] == "fast\n"
        s.rest()


def test_pings_while_waiting_for_approval(warden, fake_upstream):
    name = script(fake_upstream, [{"tool_calls": [call("python", {"code": "print(1)"})]}, {"content": "ok"}])
    s = Stream(warden.port, chat(name, confirm_code_execution=True))
    start = s.until_type("tool_start")
    t0 = time.time()
    s.until(lambda f: f == ("comment", "ping"), "a ping")
    assert time.time() - t0 < 2
    confirm(warden, start["approval_id"], "deny")
    s.rest()


def test_timeout_is_deny(fake_upstream, tmp_path):
    w = warden_on_fake(fake_upstream, "--approval-timeout", "1", home=tmp_path)
    try:
        name = script(fake_upstream, [{"tool_calls": [call("terminal", {"command": "touch t.txt"})]},
                                      {"content": "gave up"}])
        s = Stream(w.port, chat(name, confirm_code_execution=True, session_id="t"))
        start = s.until_type("tool_start")
        t0 = time.time()
        end = s.until_type("tool_end")
        assert "expired" in end["result"] and 0.5 < time.time() - t0 < 5  # not "declined": nobody answered
        assert "gave up" in text_of(s.rest())
        assert not (tmp_path / "workspaces" / "t" / "t.txt").exists()
        assert confirm(w, start["approval_id"], "allow")[0] == 404
    finally:
        w.stop()


def test_disconnect_while_waiting_denies_and_runs_nothing(warden, fake_upstream, home):
    sid = "gone-" + uuid.uuid4().hex[:6]
    name = script(fake_upstream, [{"tool_calls": [call("terminal", {"command": "touch gone.txt"})]}, {"content": "x"}])
    s = Stream(warden.port, chat(name, confirm_code_execution=True, session_id=sid))
    start = s.until_type("tool_start")
    s.close()
    time.sleep(0.5)
    assert confirm(warden, start["approval_id"], "allow")[0] == 404  # the approval is gone
    time.sleep(0.3)
    assert not (workspace(home, sid) / "gone.txt").exists()
    assert len(upstream_requests(fake_upstream, name)) == 1  # the loop ended
    assert request(warden.port, "GET", "/health")[0] == 200


def test_cancel_endpoint_denies_pending_call_fast(warden, fake_upstream, home):
    sid = "cancel-" + uuid.uuid4().hex[:6]
    name = script(fake_upstream, [{"tool_calls": [call("terminal", {"command": "touch c.txt"})]}, {"content": "x"}])
    s = Stream(warden.port, chat(name, confirm_code_execution=True, session_id=sid, cancel_id="run-" + sid))
    start = s.until_type("tool_start")
    t0 = time.time()
    st, _, data = request(warden.port, "POST", "/api/inference/cancel", {"cancel_id": "run-" + sid})
    assert st == 200 and json.loads(data) == {"cancelled": 1}
    end = s.until_type("tool_end")
    assert end["result"] == DECLINED and time.time() - t0 < 0.5
    frames = s.rest()
    assert frames[-1] == "[DONE]" and finish_of(frames) == "stop"
    assert len(upstream_requests(fake_upstream, name)) == 1
    assert not (workspace(home, sid) / "c.txt").exists()
    assert confirm(warden, start["approval_id"], "allow")[0] == 404
    # cancelling by session and with nothing running
    assert json.loads(request(warden.port, "POST", "/api/inference/cancel", {"session_id": "nobody"})[2]) == {"cancelled": 0}
    assert request(warden.port, "POST", "/api/inference/cancel", {})[0] == 400


def test_cancel_kills_a_running_tool(warden, fake_upstream, home):
    sid = "kill-" + uuid.uuid4().hex[:6]
    name = script(fake_upstream, [{"tool_calls": [call("terminal", {"command": "echo started; sleep 30; touch late.txt"})]},
                                  {"content": "x"}])
    s = Stream(warden.port, chat(name, session_id=sid))
    s.until_type("tool_output")
    t0 = time.time()
    assert json.loads(request(warden.port, "POST", "/api/inference/cancel", {"session_id": sid})[2])["cancelled"] == 1
    end = s.until_type("tool_end")
    assert end["result"].startswith("Execution cancelled.") and time.time() - t0 < 1
    s.rest()
    time.sleep(0.2)
    assert not (workspace(home, sid) / "late.txt").exists()


# --- model output that is not what it should be --------------------------------------------

@pytest.mark.parametrize("args", ['{"code": "print(1)"', "not json at all", '["a list"]', ""])
def test_invalid_or_truncated_arguments_become_a_tool_error(warden, fake_upstream, args):
    name = script(fake_upstream, [{"tool_calls": [call("python", args)]}, {"content": "sorry"}])
    s = Stream(warden.port, chat(name))
    end = s.until_type("tool_end")
    frames = s.rest()
    assert frames[-1] == "[DONE]" and "sorry" in text_of(frames)
    msgs = upstream_requests(fake_upstream, name)[1]["messages"]
    if args == "":  # no arguments at all: an empty object, so the tool reports the missing field
        assert end["result"].startswith("Error: missing required string argument 'code'")
    else:
        assert end["result"].startswith("Error: the arguments for python are not a valid JSON object")
    if args == "":  # the tool ran and failed: the model also gets the tool-error nudge (agent/loop_guidance.h)
        assert msgs[-1]["content"].startswith(end["result"] + "\n\nThe tool reported an error.")
    else:  # refused before running, with its own instruction
        assert msgs[-1]["content"] == end["result"]
    assert json.loads(msgs[-2]["tool_calls"][0]["function"]["arguments"]) == {} or args == ""


def test_text_form_tool_call_is_run_and_hidden(warden, fake_upstream):
    name = script(fake_upstream, [
        {"content": 'Sure. <tool_call>{"name": "python", "arguments": {"code": "print(7*6)"}}</tool_call>'},
        {"content": "Done."}])
    s = Stream(warden.port, chat(name))
    start = s.until_type("tool_start")
    assert start["provenance"]["healed"] is True and start["arguments"] == {"code": "print(7*6)"}
    assert s.until_type("tool_end")["result"] == "42\n"
    frames = s.rest()
    text = text_of(frames)
    assert "<tool_call" not in text and "<tool" not in text and text.startswith("Sure. ")


def test_a_text_form_call_cut_by_max_tokens_is_not_run(warden, fake_upstream):
    # engine/healing.h: the call was cut short; running the repaired half is not what the model meant
    cut = '<tool_call>{"name": "python", "arguments": {"code": "print(\'cut\')'
    name = script(fake_upstream, [{"content": cut, "finish": "length"}, {"content": "ok"}])
    frames = Stream(warden.port, chat(name)).rest()
    assert not of_type(frames, "tool_start")
    assert text_of(frames) == cut


def test_a_text_form_call_without_its_closing_tag_is_run(warden, fake_upstream):
    name = script(fake_upstream, [
        {"content": '<tool_call>{"name": "python", "arguments": {"code": "print(\'no close\')"}}'}, {"content": "ok"}])
    s = Stream(warden.port, chat(name))
    assert s.until_type("tool_end")["result"] == "no close\n"
    assert "<tool_call" not in text_of(s.rest())


def test_unknown_tool_and_tool_outside_selection(warden, fake_upstream):
    name = script(fake_upstream, [{"tool_calls": [call("terminal", {"command": "echo no"})]}, {"content": "fine"}])
    s = Stream(warden.port, chat(name, enabled_tools=["python"]))
    end = s.until_type("tool_end")
    assert "not available" in end["result"]
    s.rest()
    reqs = upstream_requests(fake_upstream, name)
    assert [t["function"]["name"] for t in reqs[0]["tools"]] == ["python"]
    assert "tools" not in reqs[1]  # a call outside the selection ends tool use for this answer


def test_upstream_cut_mid_tool_call(warden, fake_upstream):
    name = script(fake_upstream, [{"content": "Let me", "tool_calls": [call("python", {"code": "print(1)"})], "cut": True}])
    s = Stream(warden.port, chat(name))
    frames = s.rest()
    assert s.status == 200 and text_of(frames) == "Let me"
    assert any(isinstance(f, dict) and "error" in f for f in frames)
    assert not of_type(frames, "tool_start")  # a call from a broken turn never runs
    assert frames[-1] == "[DONE]"
    # the same break before any byte went out is a real HTTP status
    name = script(fake_upstream, [{"tool_calls": [call("python", {"code": "print(1)"})], "cut": True}])
    st, _, data = request(warden.port, "POST", "/v1/chat/completions", chat(name))
    assert st == 502 and "broke mid-stream" in json.loads(data)["error"]["message"]


# --- budget, parallel calls, dedupe ---------------------------------------------------------

def test_parallel_tool_calls_false_keeps_the_first(warden, fake_upstream):
    name = script(fake_upstream, [{"tool_calls": [call("terminal", {"command": "echo a"}), call("terminal", {"command": "echo b"})]},
                                  {"content": "ok"}])
    frames = Stream(warden.port, chat(name, parallel_tool_calls=False)).rest()
    assert [f["result"] for f in of_type(frames, "tool_end")] == ["a\n"]
    assert upstream_requests(fake_upstream, name)[0]["parallel_tool_calls"] is False


def test_repeated_successful_call_is_not_rerun(warden, fake_upstream, home):
    sid = "dup-" + uuid.uuid4().hex[:6]
    c = call("terminal", {"command": "echo x >> count.txt; echo counted"})
    name = script(fake_upstream, [{"tool_calls": [c]}, {"tool_calls": [c]}, {"content": "stop"}])
    frames = Stream(warden.port, chat(name, session_id=sid)).rest()
    ends = of_type(frames, "tool_end")
    assert ends[0]["result"] == "counted\n" and "already ran" in ends[1]["result"]
    assert (workspace(home, sid) / "count.txt").read_text() == "x\n"


def test_budget_spent_then_final_pass_without_tools(warden, fake_upstream):
    name = script(fake_upstream, [{"tool_calls": [call("terminal", {"command": "echo 1"})]},
                                  {"tool_calls": [call("terminal", {"command": "echo 2"})]},
                                  {"tool_calls": [call("terminal", {"command": "echo 3"})]},
                                  {"content": "final"}])
    frames = Stream(warden.port, chat(name, max_tool_calls_per_message=2)).rest()
    assert [f["result"] for f in of_type(frames, "tool_end")] == ["1\n", "2\n"]
    reqs = upstream_requests(fake_upstream, name)
    assert len(reqs) == 3 and "tools" in reqs[1] and "tools" not in reqs[2]
    assert "used every tool call" in reqs[2]["messages"][-1]["content"]


def test_budget_zero_sends_no_tools(warden, fake_upstream):
    name = script(fake_upstream, [{"tool_calls": [call("terminal", {"command": "echo never"})]}])
    frames = Stream(warden.port, chat(name, max_tool_calls_per_message=0)).rest()
    assert not of_type(frames, "tool_start") and frames[-1] == "[DONE]"
    assert "tools" not in upstream_requests(fake_upstream, name)[0]


# --- tool output ---------------------------------------------------------------------------

def test_large_output_is_capped_for_the_model(warden, fake_upstream):
    code = "import sys\nfor i in range(5000):\n    sys.stdout.write('%099d\\n' % i)\n"  # 500,000 bytes
    name = script(fake_upstream, [{"tool_calls": [call("python", {"code": code})]}, {"content": "big"}])
    frames = Stream(warden.port, chat(name), timeout=60).rest()
    live = "".join(f["text"] for f in of_type(frames, "tool_output"))
    assert len(live) == 400000 + len("\n... (further live output not streamed)")
    assert live.endswith("(further live output not streamed)")
    result = of_type(frames, "tool_end")[0]["result"]
    assert result.startswith("0" * 99 + "\n") and len(result) < 16200
    assert "truncated to 16000 chars for the model; " in result and "500000 " in result
    sent = upstream_requests(fake_upstream, name)[1]["messages"][-1]["content"]
    assert sent == result


def test_exit_code_no_output_and_timeout(warden, fake_upstream):
    name = script(fake_upstream, [{"tool_calls": [call("terminal", {"command": "echo oops; exit 3"}),
                                                  call("terminal", {"command": "true"}),
                                                  call("python", {"code": "import time; print('t', flush=True); time.sleep(20)"})]},
                                  {"content": "ok"}])
    t0 = time.time()
    frames = Stream(warden.port, chat(name, tool_call_timeout=1)).rest()
    results = [f["result"] for f in of_type(frames, "tool_end")]
    assert results[0] == "Exit code 3:\noops\n"
    assert results[1] == "(no output)"
    assert results[2].startswith("Execution timed out after 1 seconds.") and "t\n" in results[2]
    assert time.time() - t0 < 8


def test_tool_environment_is_built_from_scratch(fake_upstream, tmp_path):
    w = warden_on_fake(fake_upstream, home=tmp_path, env={"WARDEN_TEST_SECRET": "hunter2"})
    try:
        name = script(fake_upstream, [{"tool_calls": [call("terminal", {"command": "env | sort; pwd"})]}, {"content": "ok"}])
        frames = Stream(w.port, chat(name, session_id="envcheck")).rest()
        out = of_type(frames, "tool_end")[0]["result"]
        assert "hunter2" not in out and "WARDEN" not in out
        assert "HOME=/tmp\n" in out and "TMPDIR=/tmp\n" in out  # the jail's private tmpfs, not the workspace
        assert out.strip().endswith("/workspace")
        assert (tmp_path / "workspaces" / "envcheck").is_dir()
    finally:
        w.stop()


def test_background_process_does_not_hold_the_call(warden, fake_upstream):
    name = script(fake_upstream, [{"tool_calls": [call("terminal", {"command": "sleep 30 & echo bg"})]}, {"content": "ok"}])
    t0 = time.time()
    frames = Stream(warden.port, chat(name)).rest()
    assert of_type(frames, "tool_end")[0]["result"] == "bg\n" and time.time() - t0 < 3


# --- findings of the adversarial and newcomer runs -----------------------------------------

def test_tools_cannot_read_the_servers_environment(fake_upstream, tmp_path):
    w = warden_on_fake(fake_upstream, home=tmp_path, env={"WARDEN_TEST_SECRET": "hunter2"})
    try:
        pid = w.p.pid
        cmd = f"cat /proc/{pid}/environ; cat /proc/$PPID/environ; grep -a hunter2 /proc/{pid}/mem; echo end"
        for flags, why in (({}, "No such file"), ({"bypass_permissions": True}, "Permission denied")):
            name = script(fake_upstream, [{"tool_calls": [call("terminal", {"command": cmd})]}, {"content": "ok"}])
            out = of_type(Stream(w.port, chat(name, **flags)).rest(), "tool_end")[0]["result"]
            assert "hunter2" not in out, (flags, out)
            assert why in out, (flags, out)  # jail: the pid does not exist; bypass: non-dumpable
    finally:
        w.stop()


@pytest.mark.parametrize("flags", [{}, {"bypass_permissions": True}])
def test_background_job_does_not_survive_the_call(warden, fake_upstream, home, flags):
    sid = "bgjob-" + uuid.uuid4().hex[:6]
    # the job gets time to start beating before the program ends
    name = script(fake_upstream, [{"tool_calls": [call("terminal", {"command": "(while :; do echo x >> beat; sleep 0.05; done) & sleep 0.3; echo ok"})]},
                                  {"content": "x"}])
    frames = Stream(warden.port, chat(name, session_id=sid, **flags)).rest()
    assert of_type(frames, "tool_end")[0]["result"] == "ok\n"
    beat = workspace(home, ".host/" + sid if flags else sid) / "beat"
    time.sleep(0.3)
    a = beat.stat().st_size
    time.sleep(0.3)
    assert beat.stat().st_size == a  # the job died with the call


def test_default_session_approvals_and_cancel(warden, fake_upstream):
    name = script(fake_upstream, [{"tool_calls": [call("terminal", {"command": "echo d"})]}, {"content": "x"}])
    s = Stream(warden.port, chat(name, confirm_code_execution=True))  # no session_id: "_default"
    start = s.until_type("tool_start")
    assert confirm(warden, start["approval_id"], "allow", "other")[0] == 404
    assert confirm(warden, start["approval_id"], "allow", "_default")[0] == 200
    assert s.until_type("tool_end")["result"] == "d\n"
    s.rest()
    name = script(fake_upstream, [{"tool_calls": [call("terminal", {"command": "echo d"})]}, {"content": "x"}])
    s = Stream(warden.port, chat(name, confirm_code_execution=True))
    s.until_type("tool_start")
    assert json.loads(request(warden.port, "POST", "/api/inference/cancel", {"session_id": "_default"})[2])["cancelled"] >= 1
    assert s.until_type("tool_end")["result"] == DECLINED
    s.rest()


def test_cancel_while_the_model_has_not_answered(warden, fake_upstream):
    sid = "slowcancel-" + uuid.uuid4().hex[:6]
    name = script(fake_upstream, [{"delay": 3, "tool_calls": [call("terminal", {"command": "echo never"})]}, {"content": "late"}])
    s = Stream(warden.port, chat(name, session_id=sid))
    time.sleep(0.5)
    t0 = time.time()
    assert json.loads(request(warden.port, "POST", "/api/inference/cancel", {"session_id": sid})[2]) == {"cancelled": 1}
    frames = s.rest()
    assert time.time() - t0 < 1.0
    assert not of_type(frames, "tool_start") and "late" not in text_of(frames)
    assert frames[-1] == "[DONE]" or (s.status != 200)


def test_duplicate_call_ids_get_their_own(warden, fake_upstream):
    name = script(fake_upstream, [{"tool_calls": [call("terminal", {"command": "echo 1"}, "X"), call("terminal", {"command": "echo 2"}, "X")]},
                                  {"content": "x"}])
    frames = Stream(warden.port, chat(name)).rest()
    ids = [e["tool_call_id"] for e in of_type(frames, "tool_end")]
    assert ids[0] == "X" and ids[1] != "X" and len(set(ids)) == 2
    msgs = upstream_requests(fake_upstream, name)[1]["messages"]
    assert [m["tool_call_id"] for m in msgs if m["role"] == "tool"] == ids
    assert [c["id"] for c in msgs[-3]["tool_calls"]] == ids


CALL_TEXT = 'x <tool_call>{"name": "python", "arguments": {"code": "1"}}</tool_call>'


def test_call_markup_of_a_selected_tool_is_hidden_in_a_pass_without_tools(warden, fake_upstream):
    # the last pass after the budget: python is selected, so its markup is healed, and not run
    name = script(fake_upstream, [{"content": CALL_TEXT}])
    frames = Stream(warden.port, chat(name, max_tool_calls_per_message=0)).rest()
    assert text_of(frames) == "x " and not of_type(frames, "tool_start")


def test_call_markup_of_a_tool_not_selected_stays_text(warden, fake_upstream):
    # issue 24: only the request's tools are healed; anything else is text as the model wrote it
    name = script(fake_upstream, [{"content": CALL_TEXT}])
    frames = Stream(warden.port, chat(name, enabled_tools=[])).rest()
    assert text_of(frames) == CALL_TEXT and not of_type(frames, "tool_start")


def test_pings_while_the_model_has_not_answered(fake_upstream, tmp_path):
    w = warden_on_fake(fake_upstream, "--sse-ping-interval", "300", home=tmp_path)
    try:
        name = script(fake_upstream, [{"delay": 1.5, "content": "slow"}])
        s = Stream(w.port, chat(name))
        first = s.next()
        assert s.status == 200
        frames = s.rest()
        assert ("comment", "ping") in frames and "slow" in text_of(frames)
    finally:
        w.stop()


def test_shutdown_ends_a_stream_waiting_for_approval_in_band(fake_upstream, tmp_path):
    w = warden_on_fake(fake_upstream, home=tmp_path)
    name = script(fake_upstream, [{"tool_calls": [call("terminal", {"command": "echo x"})]}, {"content": "x"}])
    s = Stream(w.port, chat(name, confirm_code_execution=True))
    s.until_type("tool_start")
    w.p.send_signal(15)
    frames = s.rest()
    assert any(isinstance(f, dict) and "shutting down" in f.get("error", {}).get("message", "") for f in frames), frames[-3:]
    assert frames[-1] == "[DONE]"
    assert w.p.wait(10) == 0


def test_sandbox_unavailable_fails_closed_before_asking(fake_upstream, tmp_path):
    w = warden_on_fake(fake_upstream, "--bwrap", "/nonexistent/bwrap", home=tmp_path)
    try:
        name = script(fake_upstream, [{"tool_calls": [call("terminal", {"command": "touch ran.txt; echo ran"})]}, {"content": "ok"}])
        s = Stream(w.port, chat(name, confirm_code_execution=True, session_id="nobwrap"))
        start = s.until_type("tool_start")
        assert start["awaiting_confirmation"] is False  # nobody is asked about a call that cannot run
        end = s.until_type("tool_end")
        assert "sandbox is unavailable" in end["result"] and "bypass_permissions" in end["result"]
        s.rest()
        assert not (tmp_path / "workspaces" / "nobwrap" / "ran.txt").exists()
        # the explicit opt-out still works
        name = script(fake_upstream, [{"tool_calls": [call("terminal", {"command": "echo ran"})]}, {"content": "ok"}])
        frames = Stream(w.port, chat(name, bypass_permissions=True)).rest()
        assert of_type(frames, "tool_end")[0]["result"] == "ran\n"
    finally:
        w.stop()


def test_secret_flags_are_hidden_from_the_process_list(fake_upstream, tmp_path):
    w = warden_on_fake(fake_upstream, "--api-key", "sekrit-key-123", "--upstream-api-key=sekrit-up-456", home=tmp_path)
    try:
        cmdline = open(f"/proc/{w.p.pid}/cmdline", "rb").read()
        assert b"sekrit" not in cmdline and b"--api-key" in cmdline
        assert request(w.port, "GET", "/v1/models", headers={"Authorization": "Bearer sekrit-key-123"})[0] == 200
        assert request(w.port, "GET", "/v1/models")[0] == 401
    finally:
        w.stop()


# --- the loop's guidance (agent/loop_guidance.h) ----------------------------------------------

def test_a_plan_without_a_call_gets_one_reprompt_then_the_call_runs(warden, fake_upstream):
    name = script(fake_upstream, [
        {"content": "I'll run the code to compute it."},
        {"tool_calls": [call("python", {"code": "print(6*7)"})]},
        {"content": "It is 42."}])
    s = Stream(warden.port, chat(name, enabled_tools=["python"]))
    assert s.status == 200
    status = s.until(lambda f: isinstance(f, dict) and f.get("type") == "tool_status" and f.get("content"),
                     "the nudging status")
    assert status["content"] == "Nudging tool calls"
    end = s.until_type("tool_end")
    assert end["result"] == "42\n"
    frames = s.rest()
    assert finish_of(frames) == "stop" and "It is 42." in text_of(frames)
    assert "\n\n" not in text_of(frames)  # the paragraph break is only for text that follows text
    reqs = upstream_requests(fake_upstream, name)
    assert len(reqs) == 3
    first, second = reqs[0]["messages"], reqs[1]["messages"]
    # the prompt nudge: a system message with the date and the code tip, the same on every turn
    assert first[0]["role"] == "system" and first[0]["content"].startswith("The current date is ")
    assert "`python`" in first[0]["content"] and second[0] == first[0] == reqs[2]["messages"][0]
    # the re-prompt: the plan as the assistant's turn, then one user message asking for the call
    assert second[-2] == {"role": "assistant", "content": "I'll run the code to compute it."}
    assert second[-1]["role"] == "user" and "call `python` now" in second[-1]["content"]


def test_the_text_after_a_reprompt_starts_its_own_paragraph(warden, fake_upstream):
    name = script(fake_upstream, [{"content": "I'll run the code to compute it."}, {"content": "It is 42."}])
    frames = Stream(warden.port, chat(name, enabled_tools=["python"])).rest()
    assert text_of(frames) == "I'll run the code to compute it.\n\nIt is 42."  # not "…compute it.It is 42."
    assert len(upstream_requests(fake_upstream, name)) == 2


def test_a_call_refused_for_its_arguments_is_no_denial_and_the_model_is_reprompted(warden, fake_upstream):
    name = script(fake_upstream, [
        {"tool_calls": [call("python", "{not json")]},
        {"content": "I'll run the code again to compute it."},
        {"tool_calls": [call("python", {"code": "print(6*7)"})]},
        {"content": "It is 42."}])
    s = Stream(warden.port, chat(name, enabled_tools=["python"]))
    first = s.until_type("tool_end")
    assert first["result"].startswith("Error: the arguments for python are not a valid JSON object")
    assert s.until_type("tool_end")["result"] == "42\n"
    assert "It is 42." in text_of(s.rest()) and len(upstream_requests(fake_upstream, name)) == 4


def test_a_sign_off_is_an_answer_and_the_guidance_can_be_switched_off(warden, fake_upstream):
    name = script(fake_upstream, [{"content": "It is 42. Let me know if you need anything else."}])
    s = Stream(warden.port, chat(name, enabled_tools=["python"]))
    frames = s.rest()
    assert "Let me know" in text_of(frames) and len(upstream_requests(fake_upstream, name)) == 1
    name = script(fake_upstream, [{"content": "I'll run the code."}])
    s = Stream(warden.port, chat(name, enabled_tools=["python"], act_reprompts=False, tool_prompt_nudge=False,
                                 tool_error_nudge=False))
    s.rest()
    reqs = upstream_requests(fake_upstream, name)
    assert len(reqs) == 1 and reqs[0]["messages"] == [{"role": "user", "content": f"scenario:script:{name}"}]


def test_a_failed_call_result_carries_the_error_nudge_for_the_model_only(warden, fake_upstream):
    name = script(fake_upstream, [{"tool_calls": [call("python", {"code": "1/0"})]}, {"content": "Fixed."}])
    s = Stream(warden.port, chat(name, enabled_tools=["python"]))
    end = s.until_type("tool_end")
    assert "ZeroDivisionError" in end["result"] and "The tool reported an error" not in end["result"]
    s.rest()
    tool_msg = upstream_requests(fake_upstream, name)[1]["messages"][-1]
    assert tool_msg["role"] == "tool" and tool_msg["content"].endswith(
        "correct the call (its arguments, code or command) and call the tool again, or tell the user why it cannot be done.")
