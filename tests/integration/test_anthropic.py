"""The Anthropic Messages surface (POST /v1/messages, /v1/messages/count_tokens), driven by the
official `anthropic` Python SDK unchanged, against the scripted fake upstream.

The fake plays given model turns (reasoning, text, structured tool_calls streamed the way
llama-server streams them) and records what warden sent it (GET /stats), so each test checks both
what the SDK parsed and what reached the model. Raw SSE is read with http.client where the exact
frames matter (event order, the non-standard `event: tool_result`, golden transcripts).

Golden transcripts (tests/golden/anthropic_*.sse) are warden's raw SSE body for a fixed script with
the random ids normalized (msg_… → msg_0, toolu_… → toolu_0, toolu_1, srvtoolu_… → srvtoolu_0 by
order of first appearance); WARDEN_UPDATE_GOLDEN=1 rewrites them instead of comparing."""
import http.client
import json
import os
import re
import subprocess
import uuid

import anthropic
import pytest

from conftest import ROOT, anthropic_client, on_fake, request, warden_on_fake
from fake.fake_upstream import render_prompt  # the fake's /apply-template rendering, to know the expected count

GOLDEN = ROOT / "tests" / "golden"
UPDATE_GOLDEN = os.environ.get("WARDEN_UPDATE_GOLDEN") == "1"
MODEL = "claude-sonnet-4-5"   # any name: warden serves its one model
NO_PING = "600000"            # ms: no `event: ping` in the middle of a transcript


# --- fixtures and helpers -------------------------------------------------------------------

WARDEN = on_fake("--sse-ping-interval", NO_PING)  # the module's `warden` fixture (conftest.py)


@pytest.fixture
def fresh_warden(fake_upstream, tmp_path):
    """A warden of the test's own, for tests that could take the shared one down."""
    w = warden_on_fake(fake_upstream, "--sse-ping-interval", NO_PING, home=tmp_path)
    yield w
    w.stop()


def still_alive(w, grace=1.0):
    """True when warden has not exited within `grace` seconds (a crash right after the body ended
    is still caught)."""
    try:
        w.p.wait(grace)
        return False
    except subprocess.TimeoutExpired:
        return True


CLIENT = anthropic_client  # the module's `client` fixture (conftest.py)


def script(fake, turns):
    name = "anth-" + uuid.uuid4().hex[:10]
    st, _, _ = request(fake.port, "POST", "/script", {"name": name, "turns": turns})
    assert st == 200
    return name


def stats(fake):
    return json.loads(request(fake.port, "GET", "/stats")[2])


def upstream_requests(fake, name):
    return [r for r in stats(fake)["requests"]
            if any(m.get("content") == f"scenario:script:{name}" for m in r.get("messages", []))]


def request_count(fake):
    return len(stats(fake)["requests"])


def user(name):
    return [{"role": "user", "content": f"scenario:script:{name}"}]


def call(name, args, cid=None):
    c = {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)}
    if cid:
        c["id"] = cid
    return c


WEATHER = {"name": "get_weather", "description": "Weather for a city",
           "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
PYTHON = {"type": "python", "name": "python"}
TIME = {"name": "get_time", "description": "Time in a zone",
        "input_schema": {"type": "object", "properties": {"tz": {"type": "string"}}}}


def post_raw(port, body, path="/v1/messages", headers=None, timeout=60):
    """POST and read the whole body, also when warden cuts it short: (status, headers, text, complete)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    h = {"Content-Type": "application/json"}
    h.update(headers or {})
    conn.request("POST", path, body=json.dumps(body) if not isinstance(body, bytes) else body, headers=h)
    r = conn.getresponse()
    complete = True
    try:
        data = r.read()
    except http.client.IncompleteRead as e:
        data, complete = e.partial, False
    hdrs = {k.lower(): v for k, v in r.getheaders()}
    conn.close()
    return r.status, hdrs, data.decode(), complete


def sse_events(text):
    """[(event name, parsed data)] of an Anthropic SSE body; every frame must be event + data."""
    out = []
    for block in text.split("\n\n"):
        if not block.strip():
            continue
        lines = block.split("\n")
        assert len(lines) == 2 and lines[0].startswith("event: ") and lines[1].startswith("data: "), block
        out.append((lines[0][7:], json.loads(lines[1][6:])))
    return out


def normalize_ids(text):
    seen = {}

    def sub(prefix):
        def f(m):
            key = m.group(0)
            if key not in seen:
                seen[key] = f"{prefix}{sum(1 for k in seen if k.startswith(prefix))}"
            return seen[key]
        return f
    text = re.sub(r"\bmsg_[A-Za-z0-9_-]{8,}", sub("msg_"), text)
    text = re.sub(r"\bsrvtoolu_[A-Za-z0-9_-]{8,}", sub("srvtoolu_"), text)
    text = re.sub(r"\btoolu_[A-Za-z0-9_-]{8,}", sub("toolu_"), text)
    return text


def block_starts(events):
    return [(d["index"], d["content_block"]) for e, d in events if e == "content_block_start"]


# --- messages.create, non-streaming --------------------------------------------------------

def test_create_text_non_streaming(client, fake_upstream):
    name = script(fake_upstream, [{"content": "Hello from the fake."}])
    raw = client.messages.with_raw_response.create(model=MODEL, max_tokens=100, messages=user(name))
    assert raw.headers["request-id"].startswith("req_") and len(raw.headers["request-id"]) > 10
    msg = raw.parse()
    assert msg.id.startswith("msg_") and len(msg.id) > 10
    assert msg.type == "message" and msg.role == "assistant"
    assert len(msg.content) == 1
    assert msg.content[0].type == "text" and msg.content[0].text == "Hello from the fake."
    assert msg.stop_reason == "end_turn" and msg.stop_sequence is None
    assert (msg.usage.input_tokens, msg.usage.output_tokens) == (7, 5)
    assert msg.model == "fake-model"
    sent = upstream_requests(fake_upstream, name)
    assert len(sent) == 1 and sent[0]["max_tokens"] == 100
    assert "stop" not in sent[0]


def test_system_prompt_and_sampling_reach_the_model(client, fake_upstream):
    name = script(fake_upstream, [{"content": "ok"}])
    # SDK 2.15 has no temperature/top_p/top_k arguments any more; warden still reads them
    client.messages.create(model=MODEL, max_tokens=64, messages=user(name), system="Be brief.",
                           extra_body={"temperature": 0.25, "top_p": 0.5, "top_k": 7})
    sent = upstream_requests(fake_upstream, name)[0]
    assert sent["messages"][0] == {"role": "system", "content": "Be brief."}
    assert (sent["temperature"], sent["top_p"], sent["top_k"]) == (0.25, 0.5, 7)


@pytest.mark.parametrize("stream", [False, True])
def test_finish_length_is_max_tokens(client, fake_upstream, stream):
    name = script(fake_upstream, [{"content": "cut off mid", "finish": "length"}])
    if stream:
        with client.messages.stream(model=MODEL, max_tokens=3, messages=user(name)) as s:
            msg = s.get_final_message()
    else:
        msg = client.messages.create(model=MODEL, max_tokens=3, messages=user(name))
    assert msg.stop_reason == "max_tokens" and msg.content[0].text == "cut off mid"


# --- streaming -----------------------------------------------------------------------------

def test_stream_helpers_text_and_final_message(client, fake_upstream):
    text = "Streaming works, piece by piece."
    name = script(fake_upstream, [{"content": text, "piece": 4}])
    with client.messages.stream(model=MODEL, max_tokens=100, messages=user(name)) as s:
        pieces = list(s.text_stream)
        final = s.get_final_message()
    assert "".join(pieces) == text and len(pieces) == (len(text) + 3) // 4
    assert final.id.startswith("msg_") and final.stop_reason == "end_turn"
    assert [b.type for b in final.content] == ["text"] and final.content[0].text == text
    assert (final.usage.input_tokens, final.usage.output_tokens) == (7, 5)


def test_stream_raw_event_order(client, fake_upstream):
    name = script(fake_upstream, [{"content": "abcdefg"}])
    events = list(client.messages.create(model=MODEL, max_tokens=100, messages=user(name), stream=True))
    types = [e.type for e in events]
    assert types == ["message_start", "content_block_start", "content_block_delta", "content_block_delta",
                     "content_block_delta", "content_block_stop", "message_delta", "message_stop"]
    start = events[0].message
    assert start.id.startswith("msg_") and start.content == [] and start.stop_reason is None
    assert events[1].index == 0 and events[1].content_block.type == "text" and events[1].content_block.text == ""
    assert [e.delta.text for e in events[2:5]] == ["abc", "def", "g"]
    assert all(e.index == 0 for e in events[1:6])
    assert events[6].delta.stop_reason == "end_turn" and events[6].delta.stop_sequence is None
    assert events[6].usage.output_tokens == 5


# --- client tools --------------------------------------------------------------------------

def test_no_empty_text_block_before_a_tool_block(warden, fake_upstream):
    name = script(fake_upstream, [{"tool_calls": [call("get_weather", {"city": "Oslo"})]}])
    st, _, text, complete = post_raw(warden.port, {"model": MODEL, "max_tokens": 50, "stream": True,
                                                   "messages": user(name), "tools": [WEATHER]})
    assert st == 200 and complete
    starts = block_starts(sse_events(text))
    assert len(starts) == 1
    assert starts[0][0] == 0 and starts[0][1]["type"] == "tool_use"


def test_single_tool_call_streaming_and_not(client, fake_upstream):
    args = {"city": "Paris", "unit": "celsius"}
    name = script(fake_upstream, [{"content": "Let me check.", "tool_calls": [call("get_weather", args)]}])
    msg = client.messages.create(model=MODEL, max_tokens=100, messages=user(name), tools=[WEATHER])
    assert [b.type for b in msg.content] == ["text", "tool_use"]
    assert msg.content[0].text == "Let me check."
    tu = msg.content[1]
    assert tu.id.startswith("toolu_") and tu.name == "get_weather" and tu.input == args
    assert msg.stop_reason == "tool_use"

    events = []
    with client.messages.stream(model=MODEL, max_tokens=100, messages=user(name), tools=[WEATHER]) as s:
        for ev in s:
            events.append(ev)
        final = s.get_final_message()
    assert [b.type for b in final.content] == ["text", "tool_use"]
    assert final.content[1].input == args and final.content[1].id.startswith("toolu_")
    assert final.content[1].id != tu.id
    assert final.stop_reason == "tool_use"
    # arguments arrive as input_json_delta fragments on the tool block's own index
    frags = [e.delta.partial_json for e in events if e.type == "content_block_delta" and e.delta.type == "input_json_delta"]
    assert len(frags) > 1 and json.loads("".join(frags)) == args
    assert all(e.index == 1 for e in events if e.type == "content_block_delta" and e.delta.type == "input_json_delta")


def test_parallel_tool_calls_are_separate_blocks(client, fake_upstream, warden):
    a1, a2 = {"city": "Paris"}, {"tz": "Europe/Paris"}
    name = script(fake_upstream, [{"tool_calls": [call("get_weather", a1), call("get_time", a2)]}])
    msg = client.messages.create(model=MODEL, max_tokens=100, messages=user(name), tools=[WEATHER, TIME])
    assert [(b.type, b.name, b.input) for b in msg.content] == [("tool_use", "get_weather", a1), ("tool_use", "get_time", a2)]
    assert all(b.id.startswith("toolu_") for b in msg.content) and msg.content[0].id != msg.content[1].id
    assert msg.stop_reason == "tool_use"

    with client.messages.stream(model=MODEL, max_tokens=100, messages=user(name), tools=[WEATHER, TIME]) as s:
        final = s.get_final_message()
    assert [(b.type, b.name, b.input) for b in final.content] == [("tool_use", "get_weather", a1), ("tool_use", "get_time", a2)]
    assert final.content[0].id != final.content[1].id and final.stop_reason == "tool_use"

    # raw: each call has its own index, block 0 is stopped before block 1 starts
    st, _, text, _ = post_raw(warden.port, {"model": MODEL, "max_tokens": 50, "stream": True,
                                            "messages": user(name), "tools": [WEATHER, TIME]})
    ev = sse_events(text)
    seq = [(e, d.get("index")) for e, d in ev if e.startswith("content_block")]
    assert seq.index(("content_block_stop", 0)) < seq.index(("content_block_start", 1))
    for i, args in ((0, a1), (1, a2)):
        frags = "".join(d["delta"]["partial_json"] for e, d in ev if e == "content_block_delta" and d["index"] == i)
        assert json.loads(frags) == args


def test_tool_choice_mapping(client, fake_upstream):
    name = script(fake_upstream, [{"tool_calls": [call("get_weather", {"city": "Rome"})]}])
    client.messages.create(model=MODEL, max_tokens=50, messages=user(name), tools=[WEATHER, TIME],
                           tool_choice={"type": "any"})
    client.messages.create(model=MODEL, max_tokens=50, messages=user(name), tools=[WEATHER, TIME],
                           tool_choice={"type": "tool", "name": "get_weather"})
    client.messages.create(model=MODEL, max_tokens=50, messages=user(name), tools=[WEATHER, TIME],
                           tool_choice={"type": "auto", "disable_parallel_tool_use": True})
    client.messages.create(model=MODEL, max_tokens=50, messages=user(name), tools=[WEATHER, TIME],
                           tool_choice={"type": "none"})
    sent = upstream_requests(fake_upstream, name)
    assert len(sent) == 4
    assert sent[0]["tool_choice"] == "required" and "parallel_tool_calls" not in sent[0]
    assert sent[1]["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    assert sent[2]["tool_choice"] == "auto" and sent[2]["parallel_tool_calls"] is False
    assert sent[3]["tool_choice"] == "none"
    assert [t["function"]["name"] for t in sent[0]["tools"]] == ["get_weather", "get_time"]
    assert sent[0]["tools"][0]["function"]["parameters"] == WEATHER["input_schema"]
    assert sent[0]["tools"][0]["function"]["description"] == WEATHER["description"]


def test_tool_choice_naming_an_unlisted_tool_is_400(client, fake_upstream):
    before = request_count(fake_upstream)
    with pytest.raises(anthropic.BadRequestError) as ei:
        client.messages.create(model=MODEL, max_tokens=50, messages=user("x"), tools=[WEATHER],
                               tool_choice={"type": "tool", "name": "nope"})
    assert "tool_choice.name" in ei.value.body["error"]["message"]
    assert request_count(fake_upstream) == before


def test_tool_result_round_trip(client, fake_upstream):
    name = script(fake_upstream, [
        {"content": "Checking.", "tool_calls": [call("get_weather", {"city": "Paris"}),
                                                call("get_time", {"tz": "UTC"}),
                                                call("get_weather", {"city": "Atlantis"})]},
        {"content": "Sunny in Paris at noon; Atlantis is unknown."}])
    first = client.messages.create(model=MODEL, max_tokens=100, messages=user(name), tools=[WEATHER, TIME])
    uses = [b for b in first.content if b.type == "tool_use"]
    assert len(uses) == 3 and len({u.id for u in uses}) == 3
    results = [
        {"type": "tool_result", "tool_use_id": uses[0].id, "content": "sunny, 21C"},
        {"type": "tool_result", "tool_use_id": uses[1].id,
         "content": [{"type": "text", "text": "12:00"}, {"type": "text", "text": "UTC"}]},
        {"type": "tool_result", "tool_use_id": uses[2].id, "content": "no such city", "is_error": True},
    ]
    history = user(name) + [{"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
                            {"role": "user", "content": results}]
    second = client.messages.create(model=MODEL, max_tokens=100, messages=history, tools=[WEATHER, TIME])
    assert second.content[0].text == "Sunny in Paris at noon; Atlantis is unknown."
    assert second.stop_reason == "end_turn"

    sent = upstream_requests(fake_upstream, name)[-1]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "tool", "tool"]
    asst = sent[1]
    assert asst["content"] == "Checking."
    assert [c["id"] for c in asst["tool_calls"]] == [u.id for u in uses]
    assert [c["function"]["name"] for c in asst["tool_calls"]] == ["get_weather", "get_time", "get_weather"]
    assert [json.loads(c["function"]["arguments"]) for c in asst["tool_calls"]] == [u.input for u in uses]
    tools = sent[2:]
    assert [t["tool_call_id"] for t in tools] == [u.id for u in uses]
    assert tools[0]["content"] == "sunny, 21C"
    assert tools[1]["content"] == "12:00\nUTC"
    assert "no such city" in tools[2]["content"]


def test_tool_result_followed_by_user_text_keeps_order(client, fake_upstream):
    name = script(fake_upstream, [{"content": "fine"}])
    history = user(name) + [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_abc", "name": "get_time", "input": {"tz": "UTC"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_abc", "content": "noon"},
                                     {"type": "text", "text": "And tomorrow?"}]}]
    client.messages.create(model=MODEL, max_tokens=50, messages=history, tools=[TIME])
    sent = upstream_requests(fake_upstream, name)[-1]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "user"]
    assert sent[2] == {"role": "tool", "tool_call_id": "toolu_abc", "content": "noon"}
    assert sent[3]["content"] in ("And tomorrow?", [{"type": "text", "text": "And tomorrow?"}])


# --- thinking ------------------------------------------------------------------------------

def test_reasoning_becomes_a_thinking_block(client, fake_upstream):
    name = script(fake_upstream, [{"reasoning": "The user wants a greeting.", "content": "Hello!"}])
    msg = client.messages.create(model=MODEL, max_tokens=100, messages=user(name))
    assert [b.type for b in msg.content] == ["thinking", "text"]
    assert msg.content[0].thinking == "The user wants a greeting." and msg.content[1].text == "Hello!"

    events = list(client.messages.create(model=MODEL, max_tokens=100, messages=user(name), stream=True))
    thinking = "".join(e.delta.thinking for e in events if e.type == "content_block_delta" and e.delta.type == "thinking_delta")
    assert thinking == "The user wants a greeting."
    starts = [(e.index, e.content_block.type) for e in events if e.type == "content_block_start"]
    assert starts == [(0, "thinking"), (1, "text")]
    assert all(e.index == 0 for e in events if e.type == "content_block_delta" and e.delta.type == "thinking_delta")

    with client.messages.stream(model=MODEL, max_tokens=100, messages=user(name)) as s:
        final = s.get_final_message()
    assert [b.type for b in final.content] == ["thinking", "text"]
    assert final.content[0].thinking == "The user wants a greeting."


def test_thinking_enabled_reaches_the_template(client, fake_upstream):
    name = script(fake_upstream, [{"reasoning": "r", "content": "c"}])
    client.messages.create(model=MODEL, max_tokens=2048, messages=user(name),
                           thinking={"type": "enabled", "budget_tokens": 1024})
    client.messages.create(model=MODEL, max_tokens=2048, messages=user(name), thinking={"type": "disabled"})
    sent = upstream_requests(fake_upstream, name)
    assert sent[0]["chat_template_kwargs"] == {"enable_thinking": True}
    assert sent[0]["thinking_budget_tokens"] == 1024
    assert sent[1]["chat_template_kwargs"] == {"enable_thinking": False}
    assert "thinking_budget_tokens" not in sent[1]


@pytest.mark.parametrize("thinking,max_tokens", [({"type": "enabled", "budget_tokens": 512}, 2048),
                                                 ({"type": "enabled", "budget_tokens": 2048}, 2048),
                                                 ({"type": "sometimes"}, 2048)])
def test_bad_thinking_is_400(client, fake_upstream, thinking, max_tokens):
    before = request_count(fake_upstream)
    with pytest.raises(anthropic.BadRequestError) as ei:
        client.messages.create(model=MODEL, max_tokens=max_tokens, messages=user("x"), thinking=thinking)
    assert "thinking" in ei.value.body["error"]["message"]
    assert request_count(fake_upstream) == before


def test_thinking_passed_back_becomes_reasoning_content(client, fake_upstream):
    name = script(fake_upstream, [{"content": "second answer"}])
    history = user(name) + [
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "I pondered.", "signature": "sig"},
                                          {"type": "text", "text": "First answer."}]},
        {"role": "user", "content": "more please"}]
    msg = client.messages.create(model=MODEL, max_tokens=100, messages=history)
    assert msg.content[0].text == "second answer"
    sent = upstream_requests(fake_upstream, name)[0]["messages"]
    assert sent[1]["role"] == "assistant"
    assert sent[1]["reasoning_content"] == "I pondered." and sent[1]["content"] == "First answer."
    assert sent[2] == {"role": "user", "content": "more please"}


# --- stop_sequences ------------------------------------------------------------------------

@pytest.mark.parametrize("stream", [False, True])
def test_stop_sequence_cuts_the_text(client, fake_upstream, stream):
    name = script(fake_upstream, [{"content": "one two STOP three four", "piece": 4}])
    kw = dict(model=MODEL, max_tokens=100, messages=user(name), stop_sequences=["NEVER", "STOP"])
    if stream:
        with client.messages.stream(**kw) as s:
            text = "".join(s.text_stream)
            msg = s.get_final_message()
        assert text == "one two "
    else:
        msg = client.messages.create(**kw)
    assert msg.content[0].text == "one two "
    assert msg.stop_reason == "stop_sequence" and msg.stop_sequence == "STOP"
    sent = upstream_requests(fake_upstream, name)[0]
    assert "stop" not in sent


def test_stop_sequence_split_across_pieces(client, fake_upstream):
    # pieces of 3: "abc", "d<E", "ND>", "xyz": the sequence spans two upstream chunks
    name = script(fake_upstream, [{"content": "abcd<END>xyz", "piece": 3}])
    events = list(client.messages.create(model=MODEL, max_tokens=100, messages=user(name), stream=True,
                                         stop_sequences=["<END>"]))
    text = "".join(e.delta.text for e in events if e.type == "content_block_delta")
    assert text == "abcd"
    delta = [e for e in events if e.type == "message_delta"][0]
    assert delta.delta.stop_reason == "stop_sequence" and delta.delta.stop_sequence == "<END>"
    assert events[-1].type == "message_stop"


def test_no_stop_sequence_match_is_end_turn(client, fake_upstream):
    name = script(fake_upstream, [{"content": "nothing to cut"}])
    msg = client.messages.create(model=MODEL, max_tokens=100, messages=user(name), stop_sequences=["ZZZ"])
    assert msg.content[0].text == "nothing to cut" and msg.stop_reason == "end_turn" and msg.stop_sequence is None


# --- count_tokens --------------------------------------------------------------------------

def test_count_tokens(client, fake_upstream):
    marker = "count-" + uuid.uuid4().hex[:8]
    r = client.messages.count_tokens(model=MODEL, system="You are terse.", tools=[WEATHER],
                                     messages=[{"role": "user", "content": f"how many words {marker} are here"}])
    roots = [x for x in stats(fake_upstream)["root_requests"] if marker in json.dumps(x["body"])]
    assert [x["path"] for x in roots] == ["/apply-template", "/tokenize"]
    templ = roots[0]["body"]
    assert templ["messages"][0] == {"role": "system", "content": "You are terse."}
    assert templ["messages"][1]["role"] == "user"
    assert [t["function"]["name"] for t in templ["tools"]] == ["get_weather"]
    assert templ["tools"][0]["function"]["parameters"] == WEATHER["input_schema"]
    rendered = render_prompt(templ)
    assert roots[1]["body"]["content"] == rendered
    assert r.input_tokens == len(rendered.split()) and r.input_tokens > 10


def test_count_tokens_without_tools_and_needs_no_max_tokens(client, fake_upstream):
    marker = "plain-" + uuid.uuid4().hex[:8]
    r = client.messages.count_tokens(model=MODEL, messages=[{"role": "user", "content": f"a b c {marker}"}])
    roots = [x for x in stats(fake_upstream)["root_requests"] if marker in json.dumps(x["body"])]
    assert "tools" not in roots[0]["body"]
    assert r.input_tokens == len(render_prompt(roots[0]["body"]).split())
    assert not [x for x in stats(fake_upstream)["requests"] if marker in json.dumps(x)]  # nothing generated


# --- errors --------------------------------------------------------------------------------

def check_envelope(exc, status, etype):
    assert exc.status_code == status
    body = exc.body
    assert body["type"] == "error" and body["error"]["type"] == etype
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    rid = exc.response.headers["request-id"]
    assert rid.startswith("req_") and body["request_id"] == rid
    assert exc.request_id == rid  # the SDK reads the same header


def test_400_missing_max_tokens(client, fake_upstream):
    before = request_count(fake_upstream)
    with pytest.raises(anthropic.BadRequestError) as ei:
        client.post("/v1/messages", cast_to=object,
                    body={"model": MODEL, "messages": [{"role": "user", "content": "hi"}]})
    check_envelope(ei.value, 400, "invalid_request_error")
    assert "max_tokens" in ei.value.body["error"]["message"]
    assert request_count(fake_upstream) == before


@pytest.mark.parametrize("kw,word", [
    ({"messages": [{"role": "system", "content": "hi"}]}, "role"),
    ({"messages": []}, "messages"),
    ({"max_tokens": "ten"}, "max_tokens"),
    ({"max_tokens": 0}, "max_tokens"),
    ({"extra_body": {"temperature": 1.5}}, "temperature"),
    ({"messages": [{"role": "user", "content": [{"type": "text"}]}]}, "text"),
    ({"messages": [{"role": "user", "content": 5}]}, "content"),
    ({"stop_sequences": "STOP"}, "stop_sequences"),
    ({"tools": [{"name": "f"}]}, "input_schema"),
    ({"tool_choice": {"type": "sometimes"}}, "tool_choice"),
])
def test_400_bad_fields(client, fake_upstream, kw, word):
    before = request_count(fake_upstream)
    args = {"model": MODEL, "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}], **kw}
    with pytest.raises(anthropic.BadRequestError) as ei:
        client.messages.create(**args)
    check_envelope(ei.value, 400, "invalid_request_error")
    assert word in ei.value.body["error"]["message"]
    assert request_count(fake_upstream) == before


def test_400_invalid_json(warden):
    st, h, text, _ = post_raw(warden.port, b"{not json")
    assert st == 400
    body = json.loads(text)
    assert body["type"] == "error" and body["error"]["type"] == "invalid_request_error"
    assert body["request_id"] == h["request-id"]


def test_401_wrong_key_and_both_key_headers(fake_upstream, tmp_path):
    w = warden_on_fake(fake_upstream, "--api-key", "right-key-123", home=tmp_path)
    try:
        name = script(fake_upstream, [{"content": "authorised"}])
        with pytest.raises(anthropic.AuthenticationError) as ei:
            anthropic_client(w, api_key="wrong-key").messages.create(model=MODEL, max_tokens=10, messages=user(name))
        check_envelope(ei.value, 401, "authentication_error")
        assert not upstream_requests(fake_upstream, name)
        # x-api-key (the SDK's api_key) and Authorization: Bearer (its auth_token) both work
        ok = anthropic_client(w, api_key="right-key-123").messages.create(model=MODEL, max_tokens=10, messages=user(name))
        assert ok.content[0].text == "authorised"
        ok = anthropic_client(w, api_key=None, auth_token="right-key-123").messages.create(model=MODEL, max_tokens=10,
                                                                                     messages=user(name))
        assert ok.content[0].text == "authorised"
        with pytest.raises(anthropic.AuthenticationError):
            anthropic_client(w, api_key=None, auth_token="wrong").messages.count_tokens(model=MODEL, messages=user(name))
    finally:
        w.stop()


def test_403_permission_ceiling(fake_upstream, tmp_path):
    w = warden_on_fake(fake_upstream, "--max-permission", "ask", home=tmp_path)
    try:
        before = request_count(fake_upstream)
        for stream in (False, True):
            with pytest.raises(anthropic.PermissionDeniedError) as ei:
                anthropic_client(w).messages.create(model=MODEL, max_tokens=50, messages=user("x"), stream=stream,
                                              tools=[{"type": "python", "name": "python"}],
                                              extra_body={"permission_mode": "off"})
            check_envelope(ei.value, 403, "permission_error")
            assert "--max-permission" in ei.value.body["error"]["message"]
        assert request_count(fake_upstream) == before
    finally:
        w.stop()


def test_404_unknown_route_under_messages(client):
    with pytest.raises(anthropic.NotFoundError) as ei:
        client.post("/v1/messages/nope", cast_to=object, body={})
    check_envelope(ei.value, 404, "not_found_error")


def test_413_body_too_large(fake_upstream, tmp_path):
    w = warden_on_fake(fake_upstream, "--max-body", "4096", home=tmp_path)
    try:
        before = request_count(fake_upstream)
        with pytest.raises(anthropic.ContentTooLargeError) as ei:
            anthropic_client(w).messages.create(model=MODEL, max_tokens=10,
                                          messages=[{"role": "user", "content": "x" * 10000}])
        assert anthropic.RequestTooLargeError is anthropic.ContentTooLargeError
        check_envelope(ei.value, 413, "request_too_large")
        assert request_count(fake_upstream) == before
    finally:
        w.stop()


def raw_exchange(port, head, body=b""):
    """One hand-written HTTP/1.1 request (Connection: close); (status, headers, body bytes)."""
    import socket
    from conftest import recv_until_close
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(head + b"\r\n" + body)
    data = recv_until_close(s)
    s.close()
    head_text, _, rest = data.partition(b"\r\n\r\n")
    lines = head_text.decode().split("\r\n")
    hdrs = {k.strip().lower(): v.strip() for k, v in (l.split(":", 1) for l in lines[1:])}
    return int(lines[0].split()[1]), hdrs, rest


GOOD = json.dumps({"model": MODEL, "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}).encode()


@pytest.mark.parametrize("head,body,status", [
    (b"GET /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n", b"", 405),
    (b"POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nConnection: close\r\n"
     b"Content-Length: %d\r\n" % len(GOOD), GOOD, 415),
    (b"POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nConnection: close\r\n"
     b"Transfer-Encoding: chunked\r\n", b"%x\r\n%s\r\n0\r\n\r\n" % (len(GOOD), GOOD), 411),
    (b"POST /v1/messages HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/json\r\nConnection: close\r\n"
     b"Content-Length: %d\r\n" % len(GOOD), GOOD, 403),
])
def test_transport_errors_use_the_anthropic_envelope(warden, head, body, status):
    st, h, data = raw_exchange(warden.port, head, body)
    assert st == status, data
    env = json.loads(data)
    assert env["type"] == "error" and env["request_id"] == h["request-id"]
    assert env["error"]["type"] == ("permission_error" if status == 403 else "invalid_request_error")


@pytest.mark.parametrize("stream", [False, True])
def test_502_upstream_failure(client, stream):
    with pytest.raises(anthropic.InternalServerError) as ei:
        client.messages.create(model=MODEL, max_tokens=10, stream=stream,
                               messages=[{"role": "user", "content": "scenario:http500"}])
    check_envelope(ei.value, 502, "api_error")
    assert "upstream exploded" in ei.value.body["error"]["message"]


@pytest.mark.parametrize("stream", [False, True])
def test_503_upstream_loading_is_overloaded(client, stream):
    with pytest.raises(anthropic.ServiceUnavailableError) as ei:
        client.messages.create(model=MODEL, max_tokens=10, stream=stream,
                               messages=[{"role": "user", "content": "scenario:http503"}])
    assert isinstance(ei.value, anthropic.InternalServerError)
    check_envelope(ei.value, 503, "overloaded_error")
    assert "Loading model" in ei.value.body["error"]["message"]


def test_upstream_400_is_invalid_request(client):
    with pytest.raises(anthropic.BadRequestError) as ei:
        client.messages.create(model=MODEL, max_tokens=10, messages=[{"role": "user", "content": "scenario:http400"}])
    check_envelope(ei.value, 400, "invalid_request_error")
    assert "context size" in ei.value.body["error"]["message"]


def test_error_after_stream_started_sdk(fresh_warden):
    client = anthropic_client(fresh_warden)
    got = []
    with pytest.raises(anthropic.APIStatusError) as ei:
        for ev in client.messages.create(model=MODEL, max_tokens=10, stream=True,
                                         messages=[{"role": "user", "content": "scenario:error"}]):
            got.append(ev)
    assert [e.type for e in got][:3] == ["message_start", "content_block_start", "content_block_delta"]
    assert got[2].delta.text == "ok"
    assert ei.value.body["type"] == "error" and ei.value.body["error"]["type"] == "api_error"
    assert "slot crashed" in ei.value.body["error"]["message"]
    assert still_alive(fresh_warden), "warden died:\n" + fresh_warden.log()[-2000:]


def test_error_after_stream_started_raw(fresh_warden):
    st, h, text, complete = post_raw(fresh_warden.port, {"model": MODEL, "max_tokens": 10, "stream": True,
                                                         "messages": [{"role": "user", "content": "scenario:error"}]})
    assert st == 200 and h["request-id"].startswith("req_")
    alive = still_alive(fresh_warden)
    assert complete and alive, f"body cut short (complete={complete}), warden alive={alive}:\n{text[-600:]}\n" \
                               + fresh_warden.log()[-1500:]
    ev = sse_events(text)
    assert ev[-1][0] == "error"
    assert ev[-1][1] == {"type": "error", "error": {"type": "api_error", "message": ev[-1][1]["error"]["message"]}}
    assert "message_stop" not in [e for e, _ in ev]
    assert text.endswith("\n\n")


def test_upstream_cut_after_start_is_an_error_event(fresh_warden, fake_upstream):
    name = script(fake_upstream, [{"content": "Let me", "tool_calls": [call("get_weather", {"city": "Oslo"})], "cut": True}])
    st, _, text, complete = post_raw(fresh_warden.port, {"model": MODEL, "max_tokens": 10, "stream": True,
                                                         "messages": user(name), "tools": [WEATHER]})
    alive = still_alive(fresh_warden)
    assert st == 200 and complete and alive, f"complete={complete} alive={alive}\n{text[-600:]}"
    ev = sse_events(text)
    assert ev[-1][0] == "error" and ev[-1][1]["error"]["type"] == "api_error"
    assert "message_stop" not in [e for e, _ in ev]
    # the same break before any content went out is a real status
    name = script(fake_upstream, [{"tool_calls": [call("get_weather", {"city": "Oslo"})], "cut": True}])
    with pytest.raises(anthropic.APIStatusError):
        list(anthropic_client(fresh_warden).messages.create(model=MODEL, max_tokens=10, stream=True,
                                                      messages=user(name), tools=[WEATHER]))


def test_server_tool_loop_error_after_start(fresh_warden, fake_upstream):
    name = script(fake_upstream, [{"tool_calls": [call("python", {"code": "print(1)"})]},
                                  {"content": "partial", "cut": True}])
    st, _, text, complete = post_raw(fresh_warden.port, {"model": MODEL, "max_tokens": 100, "stream": True,
                                                         "messages": user(name), "tools": [PYTHON],
                                                         "permission_mode": "off"})
    alive = still_alive(fresh_warden)
    assert st == 200 and complete and alive, f"complete={complete} alive={alive}\n{text[-600:]}"
    ev = sse_events(text)
    assert [b["type"] for _, b in block_starts(ev)][:2] == ["server_tool_use", "python_tool_result"]
    assert ev[-1][0] == "error" and "message_stop" not in [e for e, _ in ev]


# --- server tools: the gate (no model work when refused) -----------------------------------


@pytest.mark.parametrize("tools,extra,words", [
    ([PYTHON], {}, ["'off'", "'full'"]),
    ([PYTHON], {"permission_mode": "auto"}, ["'off'", "'full'"]),
    ([PYTHON], {"permission_mode": "ask"}, ["'off'", "'full'"]),
    ([PYTHON], {"permission_mode": "off", "confirm_tool_calls": True},
     ["confirm_tool_calls is not supported for Anthropic Messages server tools"]),
    ([PYTHON], {"confirm_tool_calls": True},
     ["confirm_tool_calls is not supported for Anthropic Messages server tools"]),
    ([PYTHON], {"permission_mode": "off", "confirm_code_execution": True}, ["confirm_code_execution", "python"]),
    ([PYTHON, WEATHER], {"permission_mode": "off"}, ["mixes"]),
    ([{"type": "bash_20250124", "name": "bash"}], {"permission_mode": "off"}, ["bash_20250124", "not a tool warden can run"]),
])
@pytest.mark.parametrize("stream", [False, True])
def test_server_tool_gate_refuses(client, fake_upstream, tools, extra, words, stream):
    before = request_count(fake_upstream)
    with pytest.raises(anthropic.BadRequestError) as ei:
        client.messages.create(model=MODEL, max_tokens=50, messages=user("gate"), tools=tools, stream=stream,
                               extra_body=extra)
    check_envelope(ei.value, 400, "invalid_request_error")
    msg = ei.value.body["error"]["message"]
    for w in words:
        assert w in msg, msg
    assert request_count(fake_upstream) == before


def test_web_search_server_tool_is_wardens_web_search(client, fake_upstream):
    name = script(fake_upstream, [{"content": "no search needed"}])
    msg = client.messages.create(model=MODEL, max_tokens=50, messages=user(name),
                                 tools=[{"type": "web_search_20250305", "name": "web_search"}],
                                 extra_body={"permission_mode": "off"})
    assert msg.content[0].text == "no search needed"
    sent = upstream_requests(fake_upstream, name)
    assert [t["function"]["name"] for t in sent[0]["tools"]] == ["web_search"]


@pytest.mark.parametrize("extra", [{"bypass_permissions": True}, {"permission_mode": "off"},
                                   {"permission_mode": "full"}, {"confirm_tool_calls": False},
                                   {"bypass_permissions": True, "confirm_tool_calls": True}])
def test_server_tool_gate_passes(client, fake_upstream, extra):
    name = script(fake_upstream, [{"content": "no tool needed"}])
    msg = client.messages.create(model=MODEL, max_tokens=50, messages=user(name), tools=[PYTHON], extra_body=extra)
    assert msg.content[0].text == "no tool needed" and msg.stop_reason == "end_turn"
    sent = upstream_requests(fake_upstream, name)
    assert [t["function"]["name"] for t in sent[0]["tools"]] == ["python"]


# --- server tools: running -----------------------------------------------------------------

def python_script(fake):
    return script(fake, [{"tool_calls": [call("python", {"code": "print(6*7)"})]},
                         {"content": "The answer is 42."}])


def test_server_tool_stream(warden, fake_upstream):
    name = python_script(fake_upstream)
    st, _, text, complete = post_raw(warden.port, {"model": MODEL, "max_tokens": 100, "stream": True,
                                                   "messages": user(name), "tools": [PYTHON],
                                                   "permission_mode": "off"})
    assert st == 200 and complete, text
    ev = sse_events(text)
    names = [e for e, _ in ev]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    starts = block_starts(ev)
    assert [(i, b["type"]) for i, b in starts] == [(0, "server_tool_use"), (1, "python_tool_result"), (2, "text")]
    use = starts[0][1]
    assert re.fullmatch(r"srvtoolu_[A-Za-z0-9_-]+", use["id"]) and use["name"] == "python" and use["input"] == {}
    args = "".join(d["delta"]["partial_json"] for e, d in ev if e == "content_block_delta" and d["index"] == 0)
    assert json.loads(args) == {"code": "print(6*7)"}
    result = starts[1][1]
    assert result["tool_use_id"] == use["id"]
    assert result["content"][0]["type"] == "text" and "42" in result["content"][0]["text"]
    # result block: start, stop, then the non-standard tool_result frame, then the text block
    i_stop = names.index("content_block_stop", [k for k, (e, d) in enumerate(ev) if e == "content_block_start" and d["index"] == 1][0])
    assert ev[i_stop][1]["index"] == 1
    assert names[i_stop + 1] == "tool_result"
    tr = ev[i_stop + 1][1]
    assert tr["type"] == "tool_result" and tr["tool_use_id"] == use["id"] and "42" in tr["content"]
    text_out = "".join(d["delta"]["text"] for e, d in ev if e == "content_block_delta" and d["index"] == 2)
    assert text_out == "The answer is 42."
    md = ev[-2][1]
    assert md["delta"]["stop_reason"] == "end_turn"
    # the model's second turn saw the python result
    sent = upstream_requests(fake_upstream, name)
    assert len(sent) == 2 and sent[1]["messages"][-1]["role"] == "tool" and "42" in sent[1]["messages"][-1]["content"]


def test_server_tool_non_streaming(warden, fake_upstream):
    name = python_script(fake_upstream)
    st, _, text, _ = post_raw(warden.port, {"model": MODEL, "max_tokens": 100, "messages": user(name),
                                            "tools": [PYTHON], "permission_mode": "off"})
    assert st == 200, text
    msg = json.loads(text)
    types = [b["type"] for b in msg["content"]]
    assert types == ["server_tool_use", "python_tool_result", "text"]
    use, result, final = msg["content"]
    assert use["id"].startswith("srvtoolu_") and use["name"] == "python" and use["input"] == {"code": "print(6*7)"}
    assert result["tool_use_id"] == use["id"] and "42" in result["content"][0]["text"]
    assert final["text"] == "The answer is 42." and msg["stop_reason"] == "end_turn"


def test_server_tool_through_the_sdk(client, fake_upstream):
    """The SDK must survive the unknown block type and the unknown `tool_result` event."""
    name = python_script(fake_upstream)
    msg = client.messages.create(model=MODEL, max_tokens=100, messages=user(name), tools=[PYTHON],
                                 extra_body={"permission_mode": "off"})
    assert [b.type for b in msg.content] == ["server_tool_use", "python_tool_result", "text"]
    assert msg.content[2].text == "The answer is 42."
    name = python_script(fake_upstream)
    with client.messages.stream(model=MODEL, max_tokens=100, messages=user(name), tools=[PYTHON],
                                extra_body={"permission_mode": "off"}) as s:
        text = "".join(s.text_stream)
        final = s.get_final_message()
    assert text == "The answer is 42."
    assert [b.type for b in final.content] == ["server_tool_use", "python_tool_result", "text"]
    assert final.content[0].input == {"code": "print(6*7)"}


# --- golden transcripts --------------------------------------------------------------------

GOLDEN_CASES = {
    "anthropic_text": ([{"content": "Hello, world! This is warden."}], {}),
    "anthropic_tool": ([{"content": "Let me check.", "tool_calls": [call("get_weather", {"city": "Paris"})]}],
                       {"tools": [WEATHER]}),
    "anthropic_parallel_tools": ([{"tool_calls": [call("get_weather", {"city": "Paris"}),
                                                  call("get_time", {"tz": "Europe/Paris"})]}],
                                 {"tools": [WEATHER, TIME]}),
    "anthropic_thinking": ([{"reasoning": "The user says hi.", "content": "Hi there!"}],
                           {"thinking": {"type": "enabled", "budget_tokens": 1024}, "max_tokens": 2048}),
}


def check_golden(stem, text):
    path = GOLDEN / f"{stem}.sse"
    normalized = normalize_ids(text)
    if UPDATE_GOLDEN:
        path.write_text(normalized)
        return
    assert path.exists(), f"missing {path}; create it with WARDEN_UPDATE_GOLDEN=1"
    want = path.read_text()
    want_frames, got_frames = want.split("\n\n"), normalized.split("\n\n")
    for i, (a, b) in enumerate(zip(want_frames, got_frames)):
        assert b == a, f"frame {i} differs"
    assert normalized == want


@pytest.mark.parametrize("stem", sorted(GOLDEN_CASES))
def test_golden_transcript(warden, fake_upstream, stem):
    turns, extra = GOLDEN_CASES[stem]
    name = script(fake_upstream, turns)
    body = {"model": MODEL, "max_tokens": 100, "stream": True, "messages": user(name), **extra}
    st, h, text, complete = post_raw(warden.port, body)
    assert st == 200 and complete and h["content-type"].startswith("text/event-stream")
    sse_events(text)  # well-formed
    check_golden(stem, text)


def test_golden_error_after_start(fresh_warden):
    st, _, text, complete = post_raw(fresh_warden.port, {"model": MODEL, "max_tokens": 100, "stream": True,
                                                         "messages": [{"role": "user", "content": "scenario:error"}]})
    assert st == 200
    # never record a broken transcript as the golden one
    assert complete and text.rstrip().split("\n\n")[-1].startswith("event: error"), text[-500:]
    check_golden("anthropic_error_after_start", text)


# --- found by the adversarial run ----------------------------------------------------------

def test_silent_upstream_gets_message_start_and_pings(fake_upstream, tmp_path):
    """An upstream that has not answered yet (prompt processing) must not leave the client with
    nothing: the stream opens and pings; closing it aborts the upstream request."""
    w = warden_on_fake(fake_upstream, "--sse-ping-interval", "300", home=tmp_path)
    try:
        conn = http.client.HTTPConnection("127.0.0.1", w.port, timeout=20)
        conn.request("POST", "/v1/messages", body=json.dumps({"model": MODEL, "max_tokens": 5, "stream": True,
                                                              "messages": [{"role": "user", "content": "scenario:hang"}]}),
                     headers={"Content-Type": "application/json"})
        r = conn.getresponse()
        assert r.status == 200
        lines = []
        while sum(1 for l in lines if l == "event: ping") < 2:
            lines.append(r.readline().decode().rstrip("\n"))
        assert lines[0] == "event: message_start"
        conn.close()
        assert still_alive(w)
    finally:
        w.stop()


@pytest.mark.parametrize("args", ['[1,2]', '{"a":', '{"a":1} trailing', '{"a":"\\ud800"}', '       {"a":1}',
                                  '   \n\t  ', '{"a": 1}{"b": 2}', '{"a":' + '[' * 300 + ']' * 300 + '}'])
def test_malformed_tool_arguments_still_reassemble_to_an_object(client, fake_upstream, args):
    name = script(fake_upstream, [{"tool_calls": [call("get_weather", args)]}])
    with client.messages.stream(model=MODEL, max_tokens=50, messages=user(name), tools=[WEATHER]) as s:
        final = s.get_final_message()  # the SDK parses the reassembled partial_json
    streamed = final.content[0].input
    assert isinstance(streamed, dict)
    plain = client.messages.create(model=MODEL, max_tokens=50, messages=user(name), tools=[WEATHER])
    assert plain.content[0].input == streamed


def test_tool_result_must_answer_a_tool_use(client, fake_upstream):
    before = request_count(fake_upstream)
    with pytest.raises(anthropic.BadRequestError) as e:
        client.messages.create(model=MODEL, max_tokens=5, messages=[
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_nope", "content": "x"}]}])
    assert "answers no unanswered tool_use" in str(e.value)
    assert request_count(fake_upstream) == before


def test_doubled_v1_gets_a_hint(warden):
    st, _, text, _ = post_raw(warden.port, {"model": MODEL, "max_tokens": 5, "messages": []}, path="/v1/v1/messages")
    assert st == 404 and "Anthropic SDKs" in text


# --- the SDK's tool runner (beta), with its defaults ---------------------------------------------

def test_python_tool_runner_finishes_a_two_turn_tool_run(warden, fake_upstream):
    """The runner sends `thread: {"type":"create"}` (beta message-threads); warden answers 400
    thread_unsupported_request in error.details, the SDK goes on without threads and resends the
    whole history each turn, so turn 2 pairs its tool_result with turn 1's tool_use."""
    from anthropic import beta_tool

    ran = []

    @beta_tool
    def get_weather(city: str) -> str:
        """The weather in a city.

        Args:
            city: the city
        """
        ran.append(city)
        return f"sunny in {city}"

    name = script(fake_upstream, [
        {"content": "", "tool_calls": [{"name": "get_weather", "arguments": json.dumps({"city": "Paris"}), "id": "call_r1"}]},
        {"content": "It is sunny in Paris."}])
    c = anthropic_client(warden)
    runner = c.beta.messages.tool_runner(model="m", max_tokens=64, tools=[get_weather],
                                         messages=[{"role": "user", "content": f"scenario:script:{name}"}])
    final = runner.until_done()
    assert ran == ["Paris"]
    assert final.stop_reason == "end_turn" and final.content[0].text == "It is sunny in Paris."
    sent = upstream_requests(fake_upstream, name)
    assert len(sent) == 2
    roles = [m["role"] for m in sent[1]["messages"]]
    assert roles == ["user", "assistant", "tool"], roles
    assert sent[1]["messages"][2]["content"] == "sunny in Paris"


def test_thread_fields_get_the_codes_the_sdks_recover_from(warden):
    base = {"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]}
    st, _, body = request(warden.port, "POST", "/v1/messages", {**base, "thread": {"type": "create"}})
    err = json.loads(body)["error"]
    assert st == 400 and err["details"] == {"error_code": "thread_unsupported_request"}
    st, _, body = request(warden.port, "POST", "/v1/messages",
                          {**base, "thread": {"type": "continue", "previous_message_id": "msg_x"}})
    err = json.loads(body)["error"]
    assert st == 404 and err["type"] == "not_found_error" and err["details"] == {"error_code": "thread_not_found"}
