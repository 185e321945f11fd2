"""Provisional tool cards (reference unsloth-studio.md §2.9, agent/turn_reader.h), against the
scripted fake upstream.

While a large structured call streams (render_html, or arguments of 256 characters or more),
warden opens an early `tool_start` card (arguments {}, provenance.provisional true) and streams
the raw arguments as `tool_args` frames; the real `tool_start` with the same id follows once
the call is planned. A call the gate could ask about never gets one. A card whose call never
runs is closed with a `tool_end`. The fake streams tool-call arguments in 7-character
fragments, so a long call arrives in many deltas. Every request names its permission_mode
explicitly (a streaming request without one gets the `auto` gate)."""
import json
import uuid


from conftest import request, on_fake
from test_tool_loop import Stream, script

LOST = "Error: lost connection to llama-server before the tool call completed."


def control(frames):
    """The tool control frames, in order."""
    return [f for f in frames if isinstance(f, dict) and f.get("type") in ("tool_start", "tool_args", "tool_end")]


def for_call(frames, cid):
    return [f for f in control(frames) if f.get("tool_call_id") == cid]


WARDEN = on_fake("--sse-ping-interval", "300")  # the module's `warden` fixture (conftest.py)


def chat(name, **kw):
    body = {"messages": [{"role": "user", "content": f"scenario:script:{name}"}], "stream": True,
            "enable_tools": True}
    body.update(kw)
    return body


def long_python(cid):
    args = json.dumps({"code": "print(len('" + "a" * 300 + "'))"})
    assert len(args) >= 256
    return {"name": "python", "arguments": args, "id": cid}, args


def test_long_call_streams_a_provisional_card_then_the_real_one(warden, fake_upstream):
    cid = "call_" + uuid.uuid4().hex[:8]
    c, args = long_python(cid)
    name = script(fake_upstream, [{"tool_calls": [c]}, {"content": "done"}])
    frames = Stream(warden.port, chat(name, permission_mode="off")).rest()
    seq = for_call(frames, cid)
    kinds = [f["type"] for f in seq]
    # provisional card, its argument fragments, the real card, the end
    assert kinds[0] == "tool_start" and kinds[-2:] == ["tool_start", "tool_end"], kinds
    assert set(kinds[1:-2]) == {"tool_args"} and len(kinds) > 4, kinds
    card, real, end = seq[0], seq[-2], seq[-1]
    assert card["provenance"]["provisional"] is True and card["arguments"] == {}
    assert card["tool_name"] == "python" and card["awaiting_confirmation"] is False
    assert "".join(f["text"] for f in seq[1:-2]) == args
    assert all(f["tool_name"] == "python" for f in seq[1:-2])
    assert "provisional" not in real["provenance"] and real["arguments"] == json.loads(args)
    assert real["awaiting_confirmation"] is False
    assert end["result"] == "300\n"
    assert frames[-1] == "[DONE]"


def test_gated_call_gets_no_provisional_card(warden, fake_upstream):
    cid = "call_" + uuid.uuid4().hex[:8]
    c, args = long_python(cid)
    name = script(fake_upstream, [{"tool_calls": [c]}, {"content": "ok"}])
    s = Stream(warden.port, chat(name, permission_mode="off", confirm_code_execution=True))
    first = s.until(lambda f: isinstance(f, dict) and f.get("tool_call_id") == cid, "the call's first frame")
    assert first["type"] == "tool_start" and first["awaiting_confirmation"] is True
    assert "provisional" not in first["provenance"] and first["arguments"] == json.loads(args)
    st, _, _ = request(warden.port, "POST", "/api/inference/tool-confirm",
                       {"approval_id": first["approval_id"], "decision": "deny"})
    assert st == 200
    frames = s.rest()
    assert not [f for f in control(frames) if f["type"] == "tool_args"]
    assert [f["type"] for f in for_call(frames, cid)] == ["tool_start", "tool_end"]
    assert frames[-1] == "[DONE]"


def test_render_html_gets_its_card_under_confirm_code_execution(warden, fake_upstream):
    cid = "call_" + uuid.uuid4().hex[:8]
    args = json.dumps({"code": "<p>" + "x" * 300 + "</p>", "title": "Big"})
    name = script(fake_upstream, [{"tool_calls": [{"name": "render_html", "arguments": args, "id": cid}]},
                                  {"content": "ok"}])
    frames = Stream(warden.port, chat(name, permission_mode="off", confirm_code_execution=True)).rest()
    seq = for_call(frames, cid)
    assert seq[0]["type"] == "tool_start" and seq[0]["provenance"]["provisional"] is True
    assert seq[0]["arguments"] == {}
    assert "".join(f["text"] for f in seq if f["type"] == "tool_args") == args
    assert [f["type"] for f in seq[-2:]] == ["tool_start", "tool_end"]
    assert seq[-2]["arguments"] == json.loads(args) and seq[-2]["awaiting_confirmation"] is False
    assert "Rendered" in seq[-1]["result"]


def test_upstream_cut_closes_the_provisional_card(warden, fake_upstream):
    cid = "call_" + uuid.uuid4().hex[:8]
    c, args = long_python(cid)
    name = script(fake_upstream, [{"tool_calls": [c], "cut": True}])
    s = Stream(warden.port, chat(name, permission_mode="off"))
    frames = s.rest()
    assert s.status == 200
    seq = for_call(frames, cid)
    assert seq[0]["type"] == "tool_start" and seq[0]["provenance"]["provisional"] is True
    assert "".join(f["text"] for f in seq if f["type"] == "tool_args") == args
    assert seq[-1]["type"] == "tool_end" and seq[-1]["result"] == LOST
    assert [f["type"] for f in seq].count("tool_start") == 1  # the call never ran
    assert any(isinstance(f, dict) and "error" in f for f in frames)
    assert frames[-1] == "[DONE]"
