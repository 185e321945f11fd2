"""The Responses surface (POST /v1/responses, GET/DELETE /v1/responses/{id}, input_items), driven
by the official `openai` Python SDK unchanged, against the scripted fake upstream.

The fake plays given model turns and records what warden sent it (GET /stats), so each test checks
both what the SDK parsed and what reached the model. Raw SSE is read with http.client where the
exact events matter (order, sequence numbers, golden transcripts).

Golden transcripts (tests/golden/responses_*.sse) are warden's raw SSE body for a fixed script with
the random ids normalized (resp_… → resp_0, msg_… → msg_0, … by order of first appearance) and
created_at → 0; WARDEN_UPDATE_GOLDEN=1 rewrites them instead of comparing."""
import http.client
import json
import os
import re

import openai
import pytest

from conftest import ROOT, request, script, upstream_requests, on_fake, warden_on_fake

GOLDEN = ROOT / "tests" / "golden"
UPDATE_GOLDEN = os.environ.get("WARDEN_UPDATE_GOLDEN") == "1"
MODEL = "gpt-5"  # any name: warden serves its one model
NO_PING = "600000"


# --- fixtures and helpers -------------------------------------------------------------------

WARDEN = on_fake("--sse-ping-interval", NO_PING)  # the module's `warden` fixture (conftest.py)






def sse_events(port, body, timeout=60):
    """POST /v1/responses streaming; the (event name, data) pairs in order, and the raw text."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    conn.request("POST", "/v1/responses", body=json.dumps(body), headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    assert r.status == 200, r.read()
    assert r.getheader("Content-Type").startswith("text/event-stream")
    raw = r.read().decode()
    conn.close()
    events = []
    for block in raw.split("\n\n"):
        name, data = None, None
        for line in block.split("\n"):
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                data = json.loads(line[6:])
        if data is not None:
            events.append((name, data))
    return events, raw


def normalize(raw):
    seen = {}

    def sub(m):
        key = m.group(0)
        if key not in seen:
            prefix = m.group(1)
            seen[key] = f"{prefix}{sum(1 for k in seen if k.startswith(prefix))}"
        return seen[key]

    raw = re.sub(r"\b(resp_|msg_|rs_|fc_|mcpr_|mcp_|call_)[A-Za-z0-9_-]{24}(?![A-Za-z0-9_-])", sub, raw)
    return re.sub(r'"created_at": ?\d+', '"created_at":0', raw)


def check_golden(name, raw):
    path = GOLDEN / f"responses_{name}.sse"
    text = normalize(raw)
    if UPDATE_GOLDEN or not path.exists():
        path.write_text(text)
    assert text == path.read_text()


def tool(name="get_weather"):
    return {"type": "function", "name": name, "description": "Weather for a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}


# --- plain text, streamed and not ---------------------------------------------------------------

def test_text_not_streamed(client, fake_upstream):
    name = script(fake_upstream, [{"content": "Hello from the fake."}])
    r = client.responses.create(model=MODEL, input=f"scenario:script:{name}", instructions="Be brief.")
    assert r.id.startswith("resp_") and r.object == "response" and r.status == "completed"
    assert r.output_text == "Hello from the fake."
    assert [o.type for o in r.output] == ["message"]
    assert r.output[0].role == "assistant" and r.output[0].status == "completed"
    assert r.output[0].content[0].type == "output_text"
    assert r.usage.input_tokens > 0 and r.usage.output_tokens > 0
    assert r.usage.total_tokens == r.usage.input_tokens + r.usage.output_tokens
    assert r.instructions == "Be brief." and r.store is True
    sent = upstream_requests(fake_upstream, name)[-1]
    assert sent["messages"][0] == {"role": "system", "content": "Be brief."}
    assert sent["messages"][1]["role"] == "user"


def test_text_streamed_events_in_order(client, fake_upstream, warden):
    name = script(fake_upstream, [{"content": "Streaming works fine."}])
    events, raw = sse_events(warden.port, {"model": MODEL, "input": f"scenario:script:{name}", "stream": True})
    types = [d["type"] for _, d in events]
    assert all(n == d["type"] for n, d in events)  # `event:` names the data's type
    assert [d["sequence_number"] for _, d in events] == list(range(len(events)))
    assert types[:4] == ["response.created", "response.in_progress", "response.output_item.added",
                         "response.content_part.added"]
    assert types[-4:] == ["response.output_text.done", "response.content_part.done", "response.output_item.done",
                          "response.completed"]
    deltas = "".join(d["delta"] for _, d in events if d["type"] == "response.output_text.delta")
    assert deltas == "Streaming works fine."
    assert events[0][1]["response"]["status"] == "in_progress"
    done = events[-1][1]["response"]
    assert done["status"] == "completed" and done["output"][0]["content"][0]["text"] == deltas
    # the SDK reads the same stream
    name2 = script(fake_upstream, [{"content": "Again."}])
    with client.responses.stream(model=MODEL, input=f"scenario:script:{name2}") as s:
        text = "".join(e.delta for e in s if e.type == "response.output_text.delta")
        final = s.get_final_response()
    assert text == "Again." and final.output_text == "Again."


def test_golden_text(fake_upstream, warden):
    name = script(fake_upstream, [{"content": "Golden text."}])
    _, raw = sse_events(warden.port, {"model": MODEL, "input": f"scenario:script:{name}", "stream": True})
    check_golden("text", raw.replace(name, "NAME"))


def test_reasoning_item(client, fake_upstream, warden):
    name = script(fake_upstream, [{"reasoning": "Let me think.", "content": "Answer."}])
    r = client.responses.create(model=MODEL, input=f"scenario:script:{name}")
    assert [o.type for o in r.output] == ["reasoning", "message"]
    assert r.output[0].content[0].text == "Let me think."
    assert r.output_text == "Answer."
    name = script(fake_upstream, [{"reasoning": "Hmm, golden.", "content": "Done."}])
    events, raw = sse_events(warden.port, {"model": MODEL, "input": f"scenario:script:{name}", "stream": True})
    assert "".join(d["delta"] for _, d in events if d["type"] == "response.reasoning_text.delta") == "Hmm, golden."
    assert any(d["type"] == "response.reasoning_text.done" for _, d in events)
    check_golden("reasoning", raw.replace(name, "NAME"))


# --- function tools ---------------------------------------------------------------------------

def test_function_call_round_trip(client, fake_upstream):
    name = script(fake_upstream, [
        {"tool_calls": [{"name": "get_weather", "arguments": '{"city": "Paris"}', "id": "call_w1"}], "finish": "tool_calls"},
        {"content": "It is sunny in Paris."},
    ])
    r1 = client.responses.create(model=MODEL, input=f"scenario:script:{name}", tools=[tool()])
    calls = [o for o in r1.output if o.type == "function_call"]
    assert len(calls) == 1 and calls[0].name == "get_weather" and json.loads(calls[0].arguments) == {"city": "Paris"}
    assert calls[0].call_id == "call_w1" and calls[0].id.startswith("fc_")
    sent = upstream_requests(fake_upstream, name)[-1]
    assert sent["tools"][0]["function"]["name"] == "get_weather"
    r2 = client.responses.create(model=MODEL, previous_response_id=r1.id, tools=[tool()],
                                 input=[{"type": "function_call_output", "call_id": "call_w1", "output": "sunny, 24C"}])
    assert r2.output_text == "It is sunny in Paris." and r2.previous_response_id == r1.id
    msgs = upstream_requests(fake_upstream, name)[-1]["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "tool"]
    assert msgs[1]["tool_calls"][0]["id"] == "call_w1" and msgs[1]["tool_calls"][0]["function"]["name"] == "get_weather"
    assert msgs[2]["tool_call_id"] == "call_w1" and msgs[2]["content"] == "sunny, 24C"


def test_function_call_streamed_and_golden(fake_upstream, warden):
    name = script(fake_upstream, [
        {"tool_calls": [{"name": "get_weather", "arguments": '{"city": "Oslo"}', "id": "call_g1"}], "finish": "tool_calls"}])
    events, raw = sse_events(warden.port, {"model": MODEL, "input": f"scenario:script:{name}", "stream": True,
                                           "tools": [tool()]})
    args = "".join(d["delta"] for _, d in events if d["type"] == "response.function_call_arguments.delta")
    assert json.loads(args) == {"city": "Oslo"}
    done = [d for _, d in events if d["type"] == "response.function_call_arguments.done"]
    assert len(done) == 1 and done[0]["arguments"] == args
    check_golden("function_call", raw.replace(name, "NAME"))


def test_input_items_of_every_kind_reach_the_model(client, fake_upstream):
    name = script(fake_upstream, [{"content": "ok"}])
    client.responses.create(model=MODEL, input=[
        {"role": "developer", "content": "Rules."},
        {"role": "user", "content": [{"type": "input_text", "text": f"scenario:script:{name}"}]},
        {"type": "reasoning", "id": "rs_x", "summary": [{"type": "summary_text", "text": "earlier thought"}]},
        {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "rainy"},
        {"role": "assistant", "content": [{"type": "output_text", "text": "It rains."}]},
        {"role": "user", "content": f"scenario:script:{name}"},
    ], tools=[tool()])
    msgs = upstream_requests(fake_upstream, name)[-1]["messages"]
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert msgs[2]["tool_calls"][0]["id"] == "c1" and msgs[2].get("reasoning_content") == "earlier thought"
    assert msgs[3]["content"] == "rainy"


# --- validation (reference §1.4: before any upstream call) --------------------------------------

@pytest.mark.parametrize("body,param", [
    ({"model": MODEL}, "input"),
    ({"model": MODEL, "input": ""}, "input"),
    ({"model": MODEL, "input": []}, "input"),
    ({"model": MODEL, "input": [{"role": "system", "content": "only rules"}]}, "input"),
    ({"model": MODEL, "input": "hi", "tools": [{"type": "function", "parameters": {}}]}, "tools"),
    ({"model": MODEL, "input": "hi", "tools": [tool()], "tool_choice": {"type": "function"}}, "tool_choice"),
    ({"model": MODEL, "input": "hi", "tools": [tool()], "tool_choice": {"type": "function", "name": "nope"}}, "tool_choice"),
    ({"model": MODEL, "input": [{"type": "item_reference", "id": "x"}]}, "input[0].type"),
    ({"model": MODEL, "input": [{"role": "user", "content": [{"type": "input_file", "file_id": "f"}]}]}, "input[0].content[0].type"),
    ({"model": MODEL, "input": "hi", "temperature": 3}, "temperature"),
    ({"model": MODEL, "input": "hi", "max_output_tokens": 0}, "max_output_tokens"),
    ({"model": MODEL, "input": "hi", "text": {"format": {"type": "json_schema"}}}, "text.format.schema"),
    ({"model": MODEL, "input": "hi", "tools": [tool()], "enable_tools": True}, "tools"),
    ({"model": MODEL, "input": "hi", "store": "yes"}, "store"),
    ({"input": "hi"}, "model"),
])
def test_bad_requests_are_400_before_the_upstream(warden, fake_upstream, body, param):
    before = len(json.loads(request(fake_upstream.port, "GET", "/stats")[2])["requests"])
    st, _, data = request(warden.port, "POST", "/v1/responses", body)
    assert st == 400, data
    err = json.loads(data)["error"]
    assert err["type"] == "invalid_request_error" and err["param"] == param
    after = len(json.loads(request(fake_upstream.port, "GET", "/stats")[2])["requests"])
    assert after == before


def test_no_input_message_and_tool_name_code(client):
    with pytest.raises(openai.BadRequestError) as e:
        client.responses.create(model=MODEL, input="")
    assert "No input provided." in str(e.value)
    with pytest.raises(openai.BadRequestError) as e:
        client.responses.create(model=MODEL, input="hi", tools=[{"type": "function", "name": ""}])
    assert e.value.body["code"] == "invalid_value" and e.value.body["param"] == "tools"


def test_text_format_json_schema_reaches_the_upstream(client, fake_upstream):
    name = script(fake_upstream, [{"content": '{"a": 1}'}])
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    client.responses.create(model=MODEL, input=f"scenario:script:{name}", max_output_tokens=50, temperature=0.2,
                            text={"format": {"type": "json_schema", "name": "thing", "schema": schema, "strict": True}})
    sent = upstream_requests(fake_upstream, name)[-1]
    assert sent["response_format"] == {"type": "json_schema", "json_schema": {"name": "thing", "schema": schema, "strict": True}}
    assert sent["max_tokens"] == 50 and sent["temperature"] == 0.2


# --- stored state -------------------------------------------------------------------------------

def test_retrieve_delete_and_input_items(client, fake_upstream):
    name = script(fake_upstream, [{"content": "Stored."}])
    r = client.responses.create(model=MODEL, input=[
        {"role": "user", "content": "first"}, {"role": "user", "content": f"scenario:script:{name}"}])
    got = client.responses.retrieve(r.id)
    assert got.id == r.id and got.output_text == "Stored." and got.status == "completed"
    items = client.responses.input_items.list(r.id)
    assert [i.content[0].text for i in items.data] == [f"scenario:script:{name}", "first"]  # newest first
    assert all(i.id.startswith("msg_") for i in items.data)
    asc = client.responses.input_items.list(r.id, order="asc", limit=1)
    assert [i.content[0].text for i in asc.data] == ["first"] and asc.has_more is True
    client.responses.delete(r.id)
    with pytest.raises(openai.NotFoundError) as e:
        client.responses.retrieve(r.id)
    assert e.value.body["type"] == "not_found_error"
    with pytest.raises(openai.NotFoundError):
        client.responses.create(model=MODEL, input="again", previous_response_id=r.id)
    with pytest.raises(openai.NotFoundError):
        client.responses.delete(r.id)


def test_store_false_keeps_nothing(client, fake_upstream):
    name = script(fake_upstream, [{"content": "Ephemeral."}])
    r = client.responses.create(model=MODEL, input=f"scenario:script:{name}", store=False)
    assert r.output_text == "Ephemeral." and r.store is False
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(r.id)


def test_unknown_previous_response_is_404(client):
    with pytest.raises(openai.NotFoundError) as e:
        client.responses.create(model=MODEL, input="hi", previous_response_id="resp_doesnotexist")
    assert e.value.body["param"] == "previous_response_id"


def test_previous_response_id_survives_a_restart(fake_upstream, tmp_path):
    name = script(fake_upstream, [{"content": "Remember: blue."}])
    name2 = script(fake_upstream, [{"content": "You said blue."}])
    w = warden_on_fake(fake_upstream, home=tmp_path)
    try:
        c = openai.OpenAI(base_url=w.base + "/v1", api_key="x", max_retries=0)
        r1 = c.responses.create(model=MODEL, input=f"scenario:script:{name}", instructions="first instructions")
    finally:
        w.stop()
    w = warden_on_fake(fake_upstream, home=tmp_path)
    try:
        c = openai.OpenAI(base_url=w.base + "/v1", api_key="x", max_retries=0)
        r2 = c.responses.create(model=MODEL, previous_response_id=r1.id, input=f"scenario:script:{name2}")
        assert r2.output_text == "You said blue."
        assert c.responses.retrieve(r1.id).output_text == "Remember: blue."
    finally:
        w.stop()
    msgs = upstream_requests(fake_upstream, name2)[-1]["messages"]
    # instructions are not carried over (OpenAI's rule); the turns are
    assert [(m["role"], m.get("content")) for m in msgs] == [
        ("user", f"scenario:script:{name}"), ("assistant", "Remember: blue."), ("user", f"scenario:script:{name2}")]


# --- approvals: mcp_approval_request → mcp_approval_response ------------------------------------

def python_call(code, cid="call_py1"):
    return {"name": "python", "arguments": json.dumps({"code": code}), "id": cid}


def loop_body(name, **kw):
    body = {"model": MODEL, "input": f"scenario:script:{name}", "enable_tools": True,
            "enabled_tools": ["python"], "permission_mode": "ask"}
    body.update(kw)
    return body


def start_waiting_background_run(client, fake, code, call_id, answer, **kw):
    """A background run (mode ask) whose model calls python(code) and then answers `answer`,
    once its call waits for approval: (script name, the response, its mcp_approval_request item).
    `kw` goes into the request body (session_id=…)."""
    import time
    name = script(fake, [{"tool_calls": [python_call(code, call_id)], "finish": "tool_calls"}, {"content": answer}])
    body = loop_body(name, **kw)
    r = client.responses.create(model=MODEL, input=body["input"], background=True,
                                extra_body={k: v for k, v in body.items() if k not in ("model", "input")})
    deadline = time.time() + 30
    ask = None
    while ask is None and time.time() < deadline:
        ask = next((o for o in client.responses.retrieve(r.id).output if o.type == "mcp_approval_request"), None)
        time.sleep(0.05)
    assert ask is not None
    return name, r, ask


def test_approval_request_then_allow_runs_once(warden, fake_upstream, client):
    name = script(fake_upstream, [{"tool_calls": [python_call("print(6*7)")], "finish": "tool_calls"},
                                  {"content": "The answer is 42."}])
    r1 = client.responses.create(**{k: v for k, v in loop_body(name).items() if k in ("model", "input")},
                                 extra_body={k: v for k, v in loop_body(name).items() if k not in ("model", "input")})
    assert r1.status == "completed"
    asks = [o for o in r1.output if o.type == "mcp_approval_request"]
    assert len(asks) == 1 and asks[0].name == "python" and asks[0].server_label == "warden"
    assert json.loads(asks[0].arguments) == {"code": "print(6*7)"} and asks[0].id.startswith("mcpr_")
    assert len(upstream_requests(fake_upstream, name)) == 1  # nothing ran yet
    r2 = client.responses.create(model=MODEL, previous_response_id=r1.id, input=[
        {"type": "mcp_approval_response", "approval_request_id": asks[0].id, "approve": True}])
    assert r2.status == "completed" and r2.output_text == "The answer is 42."
    mcp = [o for o in r2.output if o.type == "mcp_call"]
    assert len(mcp) == 1 and mcp[0].name == "python" and "42" in mcp[0].output
    msgs = upstream_requests(fake_upstream, name)[-1]["messages"]
    # warden's loop adds its prompt nudge (agent/loop_guidance.h) as a system message
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "tool"]
    assert msgs[0]["content"].startswith("The current date is ") and "42" in msgs[3]["content"]
    # the same answer again: the call is not run twice
    with pytest.raises(openai.BadRequestError):
        client.responses.create(model=MODEL, previous_response_id=r1.id, input=[
            {"type": "mcp_approval_response", "approval_request_id": asks[0].id, "approve": True}])
    assert len(upstream_requests(fake_upstream, name)) == 2
    # the audit log says a person decided
    st, _, data = request(warden.port, "GET", "/api/audit?limit=50")
    rows = [x for x in json.loads(data)["data"] if x.get("call_id") == "call_py1"]
    assert len(rows) == 1 and rows[0]["decided_by"] == "user" and rows[0]["allowed"] is True
    assert rows[0]["surface"] == "openai.responses"


def test_approval_deny_feeds_the_declined_text(client, fake_upstream):
    name = script(fake_upstream, [{"tool_calls": [python_call("print('no')", "call_py2")], "finish": "tool_calls"},
                                  {"content": "Understood, not running it."}])
    body = loop_body(name)
    r1 = client.responses.create(model=MODEL, input=body["input"],
                                 extra_body={k: v for k, v in body.items() if k not in ("model", "input")})
    ask = next(o for o in r1.output if o.type == "mcp_approval_request")
    r2 = client.responses.create(model=MODEL, previous_response_id=r1.id, input=[
        {"type": "mcp_approval_response", "approval_request_id": ask.id, "approve": False, "reason": "no"}])
    assert r2.output_text == "Understood, not running it."
    msgs = upstream_requests(fake_upstream, name)[-1]["messages"]
    assert msgs[-1]["content"] == "The user declined to run this tool call."


def test_approval_unknown_request_id_is_400(client, fake_upstream):
    name = script(fake_upstream, [{"tool_calls": [python_call("1", "call_py3")], "finish": "tool_calls"}])
    body = loop_body(name)
    r1 = client.responses.create(model=MODEL, input=body["input"],
                                 extra_body={k: v for k, v in body.items() if k not in ("model", "input")})
    with pytest.raises(openai.BadRequestError):
        client.responses.create(model=MODEL, previous_response_id=r1.id, input=[
            {"type": "mcp_approval_response", "approval_request_id": "mcpr_nope", "approve": True}])


def test_golden_approval_request(fake_upstream, warden):
    name = script(fake_upstream, [{"content": "Let me run it.", "tool_calls": [python_call("print(1)", "call_gold")],
                                   "finish": "tool_calls"}])
    events, raw = sse_events(warden.port, {**loop_body(name), "stream": True, "approval_format": "mcp"})
    items = [d["item"] for _, d in events if d["type"] == "response.output_item.done"]
    assert [i["type"] for i in items] == ["message", "mcp_approval_request"]
    assert events[-1][1]["type"] == "response.completed"
    check_golden("approval_request", raw.replace(name, "NAME"))


def test_streamed_approval_the_reference_way(warden, fake_upstream):
    """stream without approval_format mcp: tool_start with an approval_id, answered through
    /api/inference/tool-confirm, as on chat."""
    name = script(fake_upstream, [{"tool_calls": [python_call("print(5)", "call_ref")], "finish": "tool_calls"},
                                  {"content": "Five."}])
    conn = http.client.HTTPConnection("127.0.0.1", warden.port, timeout=60)
    conn.request("POST", "/v1/responses", body=json.dumps({**loop_body(name), "stream": True}),
                 headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    assert r.status == 200
    buf, start = b"", None
    while start is None:
        buf += r.read1(65536)
        for block in buf.decode(errors="replace").split("\n\n"):
            for line in block.split("\n"):
                if line.startswith("data: ") and '"tool_start"' in line:
                    d = json.loads(line[6:])
                    if d.get("awaiting_confirmation"):
                        start = d
    st, _, _ = request(warden.port, "POST", "/api/inference/tool-confirm",
                       {"approval_id": start["approval_id"], "decision": "allow"})
    assert st == 200
    rest = (buf + r.read()).decode()
    conn.close()
    assert "response.completed" in rest
    assert "Five." in rest
    msgs = upstream_requests(fake_upstream, name)[-1]["messages"]
    assert "5" in msgs[-1]["content"]


# --- background runs ----------------------------------------------------------------------------

def wait_status(client, rid, statuses, timeout=30):
    import time
    deadline = time.time() + timeout
    while time.time() < deadline:
        r = client.responses.retrieve(rid)
        if r.status in statuses:
            return r
        time.sleep(0.05)
    raise AssertionError(f"{rid} never reached {statuses}")


def test_background_run_is_polled_to_completion(client, fake_upstream):
    name = script(fake_upstream, [{"content": "Slow but sure.", "delay": 0.5}])
    r = client.responses.create(model=MODEL, input=f"scenario:script:{name}", background=True)
    assert r.background is True and r.status in ("queued", "in_progress") and r.output == []
    done = wait_status(client, r.id, ("completed",))
    assert done.output_text == "Slow but sure." and done.background is True


def read_events_until(resp, stop_after):
    """Reads SSE events from an http.client response until one with sequence_number ≥ stop_after."""
    buf, events = "", []
    while True:
        chunk = resp.read1(4096).decode()
        assert chunk, "stream ended early"
        buf += chunk
        while "\n\n" in buf:
            block, buf = buf.split("\n\n", 1)
            for line in block.split("\n"):
                if line.startswith("data: "):
                    events.append(json.loads(line[6:]))
        if events and events[-1]["sequence_number"] >= stop_after:
            return events


def test_background_stream_dropped_and_resumed_gets_every_event_once(warden, fake_upstream, client):
    text = "abcdefghijklmnopqrstuvwxyz0123456789"
    name = script(fake_upstream, [{"content": text, "piece": 2, "piece_delay": 0.05}])
    conn = http.client.HTTPConnection("127.0.0.1", warden.port, timeout=60)
    conn.request("POST", "/v1/responses", headers={"Content-Type": "application/json"}, body=json.dumps(
        {"model": MODEL, "input": f"scenario:script:{name}", "stream": True, "background": True}))
    r = conn.getresponse()
    assert r.status == 200
    first = read_events_until(r, 6)
    rid = first[0]["response"]["id"]
    conn.close()  # the client goes away mid-stream; the run goes on
    last_seen = first[-1]["sequence_number"]
    events, _ = [], None
    conn = http.client.HTTPConnection("127.0.0.1", warden.port, timeout=60)
    conn.request("GET", f"/v1/responses/{rid}?stream=true&starting_after={last_seen}")
    r = conn.getresponse()
    assert r.status == 200 and r.getheader("Content-Type").startswith("text/event-stream")
    for block in r.read().decode().split("\n\n"):
        for line in block.split("\n"):
            if line.startswith("data: "):
                events.append(json.loads(line[6:]))
    conn.close()
    seqs = [e["sequence_number"] for e in first + events]
    assert seqs == list(range(len(seqs)))  # every event exactly once, in order
    assert events[-1]["type"] == "response.completed"
    deltas = "".join(e["delta"] for e in first + events if e["type"] == "response.output_text.delta")
    assert deltas == text
    # after the run: the stored log replays from any point, and retrieve has the result
    st, hdrs, body = request(warden.port, "GET", f"/v1/responses/{rid}?stream=true&starting_after=3")
    replayed = [json.loads(l[6:]) for l in body.decode().split("\n") if l.startswith("data: ")]
    assert [e["sequence_number"] for e in replayed] == list(range(4, len(seqs)))
    assert client.responses.retrieve(rid).output_text == text


def test_background_cancel(client, fake_upstream):
    name = script(fake_upstream, [{"content": "x" * 400, "piece": 1, "piece_delay": 0.02}])
    r = client.responses.create(model=MODEL, input=f"scenario:script:{name}", background=True)
    wait_status(client, r.id, ("in_progress",))
    c = client.responses.cancel(r.id)
    assert c.status == "cancelled"
    assert client.responses.retrieve(r.id).status == "cancelled"
    # a foreground response cannot be cancelled
    name2 = script(fake_upstream, [{"content": "done"}])
    f = client.responses.create(model=MODEL, input=f"scenario:script:{name2}")
    with pytest.raises(openai.BadRequestError):
        client.responses.cancel(f.id)


def test_background_run_waiting_on_an_approval_outlives_its_client(warden, fake_upstream, client):
    name = script(fake_upstream, [{"tool_calls": [python_call("print(7*6)", "call_bg")], "finish": "tool_calls"},
                                  {"content": "Background says 42."}])
    conn = http.client.HTTPConnection("127.0.0.1", warden.port, timeout=60)
    conn.request("POST", "/v1/responses", headers={"Content-Type": "application/json"},
                 body=json.dumps({**loop_body(name), "stream": True, "background": True}))
    r = conn.getresponse()
    buf, rid = "", None
    while '"mcp_approval_request"' not in buf:
        chunk = r.read1(4096).decode()
        assert chunk
        buf += chunk
        m = re.search(r'"id":"(resp_[A-Za-z0-9_-]{24})"', buf)
        rid = rid or (m and m.group(1))
    conn.close()  # the client leaves while the run waits for a person
    # the inbox lists the question; a person answers it there
    st, _, body = request(warden.port, "GET", "/api/inference/approvals")
    pending = [a for a in json.loads(body)["data"] if a["tool_call_id"] == "call_bg"]
    assert len(pending) == 1
    st, _, _ = request(warden.port, "POST", "/api/inference/tool-confirm",
                       {"approval_id": pending[0]["approval_id"], "decision": "allow"})
    assert st == 200
    done = wait_status(client, rid, ("completed",))
    assert done.output_text == "Background says 42."
    mcp = [o for o in done.output if o.type == "mcp_call"]
    assert len(mcp) == 1 and "42" in mcp[0].output
    asks = [o for o in done.output if o.type == "mcp_approval_request"]
    assert len(asks) == 1 and asks[0].id == "mcpr_" + pending[0]["approval_id"]


def test_background_approval_answered_by_mcp_approval_response(fake_upstream, client):
    name, r, ask = start_waiting_background_run(client, fake_upstream, "print(1+1)", "call_bg2", "Two.")
    mid = client.responses.create(model=MODEL, previous_response_id=r.id, input=[
        {"type": "mcp_approval_response", "approval_request_id": ask.id, "approve": False}])
    assert mid.id == r.id  # the answer goes to the live run; its object comes back
    done = wait_status(client, r.id, ("completed",))
    assert done.output_text == "Two."
    msgs = upstream_requests(fake_upstream, name)[-1]["messages"]
    assert msgs[-1]["content"] == "The user declined to run this tool call."


def test_background_run_cut_by_a_restart_is_failed_and_its_log_ends(fake_upstream, tmp_path):
    import time
    name = script(fake_upstream, [{"content": "one two three four five six seven eight nine ten",
                                   "piece": 4, "piece_delay": 0.25}])
    w = warden_on_fake(fake_upstream, home=tmp_path)
    try:
        c = openai.OpenAI(base_url=w.base + "/v1", api_key="x", max_retries=0)
        r = c.responses.create(model=MODEL, input=f"scenario:script:{name}", background=True)
        deadline = time.time() + 20
        polled = ""
        while not polled and time.time() < deadline:  # a poll shows the text as it grows
            got = c.responses.retrieve(r.id)
            polled = got.output[0].content[0].text if got.output and got.output[0].type == "message" else ""
            time.sleep(0.1)
        assert polled and got.status == "in_progress"
    finally:
        w.stop()
    w = warden_on_fake(fake_upstream, home=tmp_path)
    try:
        c = openai.OpenAI(base_url=w.base + "/v1", api_key="x", max_retries=0)
        after = c.responses.retrieve(r.id)
        assert after.status == "failed" and after.error is not None
        st, _, body = request(w.port, "GET", f"/v1/responses/{r.id}?stream=true")
        events = [json.loads(l[6:]) for l in body.decode().split("\n") if l.startswith("data: ")]
        assert events[0]["type"] == "response.created" and events[-1]["type"] == "response.failed"
        assert [e["sequence_number"] for e in events] == list(range(len(events)))
    finally:
        w.stop()


# --- what the adversarial run found: the gate of a parked turn cannot be widened -----------------

def park(client, fake_upstream, calls, then="ok"):
    name = script(fake_upstream, [{"tool_calls": calls, "finish": "tool_calls"}, {"content": then}])
    body = loop_body(name)
    r = client.responses.create(model=MODEL, input=body["input"],
                                extra_body={k: v for k, v in body.items() if k not in ("model", "input")})
    return name, r, [o for o in r.output if o.type == "mcp_approval_request"]


@pytest.mark.parametrize("widen", [{"enable_tools": True}, {"enable_tools": True, "bypass_permissions": True},
                                   {"enable_tools": True, "confirm_tool_calls": False},
                                   {"enable_tools": True, "permission_mode": "full"}])
def test_a_deny_holds_whatever_tool_fields_the_resume_sends(client, fake_upstream, widen):
    name, r1, asks = park(client, fake_upstream, [python_call("print('RAN-' + 'X')", "call_w")])
    r2 = client.responses.create(model=MODEL, previous_response_id=r1.id, extra_body=widen, input=[
        {"type": "mcp_approval_response", "approval_request_id": asks[0].id, "approve": False}])
    mcp = [o for o in r2.output if o.type == "mcp_call"]
    assert len(mcp) == 1 and mcp[0].output == "The user declined to run this tool call."
    msgs = upstream_requests(fake_upstream, name)[-1]["messages"]
    assert msgs[-1]["content"] == "The user declined to run this tool call."


def test_partial_answers_run_the_approved_and_decline_the_rest(client, fake_upstream):
    name, r1, asks = park(client, fake_upstream, [python_call("print(11)", "call_one"), python_call("print(22)", "call_two")])
    assert len(asks) == 2
    r2 = client.responses.create(model=MODEL, previous_response_id=r1.id, input=[
        {"type": "mcp_approval_response", "approval_request_id": asks[0].id, "approve": True}])
    outputs = {o.name + str(i): o.output for i, o in enumerate(o for o in r2.output if o.type == "mcp_call")}
    assert "11" in outputs["python0"] and outputs["python1"] == "The user declined to run this tool call."
    assert not [o for o in r2.output if o.type == "mcp_approval_request"]


def test_a_refused_answer_does_not_consume_the_parked_turn(client, fake_upstream):
    name, r1, asks = park(client, fake_upstream, [python_call("print(33)", "call_keep")])
    for bad in ([{"type": "mcp_approval_response", "approval_request_id": "mcpr_nope", "approve": True}],
                [{"type": "mcp_approval_response", "approval_request_id": asks[0].id, "approve": False},
                 {"type": "mcp_approval_response", "approval_request_id": asks[0].id, "approve": True}],
                [{"type": "mcp_approval_response", "approval_request_id": asks[0].id, "approve": True},
                 {"role": "user", "content": "and also"}]):
        with pytest.raises(openai.BadRequestError):
            client.responses.create(model=MODEL, previous_response_id=r1.id, input=bad)
    r2 = client.responses.create(model=MODEL, previous_response_id=r1.id, input=[
        {"type": "mcp_approval_response", "approval_request_id": asks[0].id, "approve": True}])
    assert "33" in next(o for o in r2.output if o.type == "mcp_call").output


def test_a_response_is_stored_before_its_answer(warden, fake_upstream):
    name = script(fake_upstream, [{"content": "kept"}])
    for _ in range(10):  # each request on its own connection, closed as soon as the answer is read
        st, _, body = request(warden.port, "POST", "/v1/responses", {"model": MODEL, "input": f"scenario:script:{name}"})
        assert st == 200
        rid = json.loads(body)["id"]
        assert request(warden.port, "GET", f"/v1/responses/{rid}")[0] == 200


def test_a_background_run_that_fails_at_once_ends_failed(client, fake_upstream):
    r = client.responses.create(model=MODEL, input="scenario:http500", background=True)
    done = wait_status(client, r.id, ("failed",))
    assert done.error is not None


def test_a_parked_approval_expires_with_the_approval_timeout(fake_upstream, tmp_path):
    import time
    w = warden_on_fake(fake_upstream, "--approval-timeout", "1", home=tmp_path)
    try:
        c = openai.OpenAI(base_url=w.base + "/v1", api_key="x", max_retries=0)
        name, r1, asks = park(c, fake_upstream, [python_call("print(44)", "call_late")])
        time.sleep(1.5)
        r2 = c.responses.create(model=MODEL, previous_response_id=r1.id, input=[
            {"type": "mcp_approval_response", "approval_request_id": asks[0].id, "approve": True}])
        out = next(o for o in r2.output if o.type == "mcp_call").output
        assert "44" not in out and "did not run" in out
    finally:
        w.stop()


@pytest.mark.parametrize("query", ["starting_after=-1", "starting_after=%2B1", "starting_after=1%00", "starting_after=x",
                                   "starting_after=99999999999999999999999"])
def test_starting_after_is_a_plain_number(warden, client, fake_upstream, query):
    name = script(fake_upstream, [{"content": "bg"}])
    r = client.responses.create(model=MODEL, input=f"scenario:script:{name}", background=True)
    wait_status(client, r.id, ("completed",))
    st, _, body = request(warden.port, "GET", f"/v1/responses/{r.id}?stream=true&{query}")
    assert st == 400 and json.loads(body)["error"]["param"] == "starting_after"


def test_unsupported_state_fields_are_refused(warden):
    for field, value in (("conversation", "conv_1"), ("prompt", {"id": "p"}), ("previous_response_id", "")):
        st, _, body = request(warden.port, "POST", "/v1/responses", {"model": MODEL, "input": "hi", field: value})
        assert st == 400 and json.loads(body)["error"]["param"] == field


def test_api_inference_cancel_ends_a_waiting_background_run_cancelled(warden, client, fake_upstream):
    _, r, _ = start_waiting_background_run(client, fake_upstream, "print(5)", "call_cx", "never")
    st, _, data = request(warden.port, "POST", "/api/inference/cancel", {"cancel_id": r.id})
    assert st == 200 and json.loads(data)["cancelled"] >= 1
    done = wait_status(client, r.id, ("cancelled",))
    assert done.status == "cancelled"


# --- the second adversarial run (issue 21): a resume, an answer and a session cannot widen -----

HIGH_RISK = "import subprocess; subprocess.run(['true']); print('RAN-' + 'HIGH')"


def test_a_parked_turn_without_a_mode_cannot_be_resumed_ungated(client, fake_upstream):
    """No permission_mode: the parked turn asked because parking folds the gate as streaming. A
    resume that can neither park nor stream would fold it as ungated: refused, and the turn kept."""
    name = script(fake_upstream, [{"tool_calls": [python_call(HIGH_RISK, "call_nm")], "finish": "tool_calls"},
                                  {"tool_calls": [python_call(HIGH_RISK, "call_nm2")], "finish": "tool_calls"},
                                  {"content": "ok"}])
    body = {"enable_tools": True, "enabled_tools": ["python"]}  # no permission_mode, not streaming
    r1 = client.responses.create(model=MODEL, input=f"scenario:script:{name}", extra_body=body)
    asks = [o for o in r1.output if o.type == "mcp_approval_request"]
    assert len(asks) == 1
    for approve in (False, True):
        with pytest.raises(openai.BadRequestError) as e:
            client.responses.create(model=MODEL, previous_response_id=r1.id, store=False, input=[
                {"type": "mcp_approval_response", "approval_request_id": asks[0].id, "approve": approve}])
        assert e.value.body["param"] == "store"
    r2 = client.responses.create(model=MODEL, previous_response_id=r1.id, input=[
        {"type": "mcp_approval_response", "approval_request_id": asks[0].id, "approve": False}])
    mcp = [o for o in r2.output if o.type == "mcp_call"]
    assert [o.output for o in mcp] == ["The user declined to run this tool call."]
    # the model's next high-risk call is asked about again, not run
    assert [o.type for o in r2.output if o.type == "mcp_approval_request"] == ["mcp_approval_request"]
    assert all("RAN-HIGH" not in (o.output or "") for o in mcp)


def test_a_background_answer_names_only_its_own_runs_questions(client, fake_upstream):
    _, a, ask_a = start_waiting_background_run(client, fake_upstream, "print('A-' + 'RAN')", "call_a", "done a")
    _, b, ask_b = start_waiting_background_run(client, fake_upstream, "print('B-' + 'RAN')", "call_b", "done b")
    bad_answers = ([{"type": "mcp_approval_response", "approval_request_id": ask_b.id, "approve": True}],
                   [{"type": "mcp_approval_response", "approval_request_id": ask_a.id, "approve": True},
                    {"type": "mcp_approval_response", "approval_request_id": "mcpr_bogus", "approve": True}])
    for answers in bad_answers:
        with pytest.raises(openai.BadRequestError):
            client.responses.create(model=MODEL, previous_response_id=a.id, input=answers)
    # neither call ran: both still wait; then each run is answered the right way
    for rid, ask in ((a.id, ask_a), (b.id, ask_b)):
        assert client.responses.retrieve(rid).status == "in_progress"
        client.responses.create(model=MODEL, previous_response_id=rid, input=[
            {"type": "mcp_approval_response", "approval_request_id": ask.id, "approve": False}])
    for rid in (a.id, b.id):
        done = wait_status(client, rid, ("completed",))
        outs = [o.output for o in done.output if o.type == "mcp_call"]
        assert outs == ["The user declined to run this tool call."], outs


def test_a_background_answer_cannot_reach_another_sessions_run(warden, client, fake_upstream):
    """Issue 22: mcp_approval_response answers only tickets of the run it names, in that run's
    session: not another run's through it (with or without a session_id), and not the named run
    from another session."""
    _, a, ask_a = start_waiting_background_run(client, fake_upstream, "print('A-' + 'RAN')", "call_xa", "done a",
                                               session_id="xrun-a")
    _, b, ask_b = start_waiting_background_run(client, fake_upstream, "print('B-' + 'RAN')", "call_xb", "done b",
                                               session_id="xrun-b")
    answer_b = [{"type": "mcp_approval_response", "approval_request_id": ask_b.id, "approve": True}]
    answer_a = [{"type": "mcp_approval_response", "approval_request_id": ask_a.id, "approve": True}]
    # B's question through run A: refused whatever session the request names
    with pytest.raises(openai.BadRequestError) as e:
        client.responses.create(model=MODEL, previous_response_id=a.id, input=answer_b)
    assert e.value.body["param"] == "input"
    for session, refusal in (("xrun-a", openai.BadRequestError), ("xrun-b", openai.NotFoundError)):
        with pytest.raises(refusal):
            client.responses.create(model=MODEL, previous_response_id=a.id, input=answer_b,
                                    extra_body={"session_id": session})
    # run A's own question, from B's session: run A is not found there
    with pytest.raises(openai.NotFoundError) as e:
        client.responses.create(model=MODEL, previous_response_id=a.id, input=answer_a,
                                extra_body={"session_id": "xrun-b"})
    assert e.value.body["param"] == "previous_response_id"
    # nothing was answered: both runs still wait, B's question is still in the inbox
    st, _, body = request(warden.port, "GET", "/api/inference/approvals?session_id=xrun-b")
    assert [x["approval_id"] for x in json.loads(body)["data"]] == [ask_b.id[len("mcpr_"):]]
    for rid in (a.id, b.id):
        assert client.responses.retrieve(rid).status == "in_progress"
    # each run answered the right way (B's from its own session): neither call ran
    for rid, ask, session in ((a.id, ask_a, None), (b.id, ask_b, "xrun-b")):
        extra = {"session_id": session} if session else None
        client.responses.create(model=MODEL, previous_response_id=rid, extra_body=extra, input=[
            {"type": "mcp_approval_response", "approval_request_id": ask.id, "approve": False}])
    for rid in (a.id, b.id):
        done = wait_status(client, rid, ("completed",))
        outs = [o.output for o in done.output if o.type == "mcp_call"]
        assert outs == ["The user declined to run this tool call."], outs


def test_a_parked_turn_is_answered_only_from_its_own_session(client, fake_upstream):
    name = script(fake_upstream, [{"tool_calls": [python_call("print('S-' + 'RAN')", "call_s")], "finish": "tool_calls"},
                                  {"content": "ok"}])
    body = loop_body(name, session_id="victim")
    r1 = client.responses.create(model=MODEL, input=body["input"],
                                 extra_body={k: v for k, v in body.items() if k not in ("model", "input")})
    ask = next(o for o in r1.output if o.type == "mcp_approval_request")
    answer = [{"type": "mcp_approval_response", "approval_request_id": ask.id, "approve": True}]
    with pytest.raises(openai.NotFoundError):
        client.responses.create(model=MODEL, previous_response_id=r1.id, input=answer,
                                extra_body={"session_id": "attacker"})
    r2 = client.responses.create(model=MODEL, previous_response_id=r1.id, input=answer,
                                 extra_body={"session_id": "victim"})
    assert "S-RAN" in next(o for o in r2.output if o.type == "mcp_call").output
