"""Tool calls a model writes as text reach a client's own tools as structured calls (issue 24,
engine/healing.h), through the official SDKs on each surface, streamed and not, against the
scripted fake upstream (which streams the turn's text in small pieces, as a model does).
"""
import json

import pytest

from conftest import anthropic_client, on_fake, openai_client, script

WARDEN = on_fake("--sse-ping-interval", "600000")

TOOLS = ["get-weather", "search.web_query"]
TWO_CALLS = ('Let me check.\n<tool_call>\n{"name": "get-weather", "arguments": {"city": "東京", "note": "say \\"hi\\""}}\n'
             '</tool_call>\n<tool_call>\n{"name": "search.web_query", "arguments": {"q": "天気 \\"today\\"", '
             '"opts": {"n": 2}}}\n</tool_call>')
WANT = [("get-weather", {"city": "東京", "note": 'say "hi"'}),
        ("search.web_query", {"q": '天気 "today"', "opts": {"n": 2}})]
UNDECLARED = '<tool_call>{"name": "rm_everything", "arguments": {}}</tool_call>'


def openai_tools():
    return [{"type": "function", "function": {"name": n, "description": "d",
                                              "parameters": {"type": "object", "properties": {}}}} for n in TOOLS]


def anthropic_tools():
    return [{"name": n, "description": "d", "input_schema": {"type": "object", "properties": {}}} for n in TOOLS]


def responses_tools():
    return [{"type": "function", "name": n, "description": "d", "parameters": {"type": "object", "properties": {}}}
            for n in TOOLS]


def prompt(fake, content, piece=3):
    return "scenario:script:" + script(fake, [{"content": content, "piece": piece}])


# --- chat completions -------------------------------------------------------------------

def chat(w, fake, content, stream, piece=3, **extra):
    c = openai_client(w)
    kw = dict(model="m", messages=[{"role": "user", "content": prompt(fake, content, piece)}], tools=openai_tools(),
              **extra)
    if not stream:
        r = c.chat.completions.create(**kw)
        m = r.choices[0].message
        calls = [(t.id, t.function.name, t.function.arguments) for t in (m.tool_calls or [])]
        return m.content or "", calls, r.choices[0].finish_reason
    text, calls, finish = "", {}, None
    for ch in c.chat.completions.create(stream=True, **kw):
        if not ch.choices:
            continue
        d = ch.choices[0].delta
        text += d.content or ""
        for t in d.tool_calls or []:
            cur = calls.setdefault(t.index, ["", "", ""])
            cur[0] = t.id or cur[0]
            cur[1] += (t.function.name or "") if t.function else ""
            cur[2] += (t.function.arguments or "") if t.function else ""
        finish = ch.choices[0].finish_reason or finish
    return text, [tuple(v) for _, v in sorted(calls.items())], finish


def check_two_calls(text, calls, finish, tool_finish):
    assert "<tool_call>" not in text and "get-weather" not in text, text
    assert text.strip() == "Let me check."
    assert [(n, json.loads(a)) for _, n, a in calls] == WANT
    ids = [i for i, _, _ in calls]
    assert all(ids) and len(set(ids)) == 2, ids
    assert finish == tool_finish


@pytest.mark.parametrize("stream", [False, True])
def test_chat_two_hermes_calls_become_tool_calls(warden, fake_upstream, stream):
    check_two_calls(*chat(warden, fake_upstream, TWO_CALLS, stream), "tool_calls")


@pytest.mark.parametrize("stream", [False, True])
def test_chat_undeclared_name_and_opt_out_stay_text(warden, fake_upstream, stream):
    text, calls, finish = chat(warden, fake_upstream, UNDECLARED, stream)
    assert (text, calls, finish) == (UNDECLARED, [], "stop")
    text, calls, finish = chat(warden, fake_upstream, TWO_CALLS, stream, extra_body={"auto_heal_tool_calls": False})
    assert (text, calls, finish) == (TWO_CALLS, [], "stop")


def test_chat_call_split_at_every_position_heals_the_same(warden, fake_upstream):
    # piece=1: every byte boundary of the markup is a chunk boundary
    check_two_calls(*chat(warden, fake_upstream, TWO_CALLS, True, piece=1), "tool_calls")


def test_chat_without_tools_is_the_raw_passthrough(warden, fake_upstream):
    c = openai_client(warden)
    r = c.chat.completions.create(model="m", messages=[{"role": "user", "content": prompt(fake_upstream, TWO_CALLS)}])
    assert r.choices[0].message.content == TWO_CALLS
    assert r.id == "chatcmpl-fake"  # the upstream's own body, untouched


# --- anthropic messages ------------------------------------------------------------------

def messages(w, fake, content, stream, **extra):
    c = anthropic_client(w)
    kw = dict(model="m", max_tokens=200, messages=[{"role": "user", "content": prompt(fake, content)}],
              tools=anthropic_tools(), **extra)
    if stream:
        with c.messages.stream(**kw) as s:
            m = s.get_final_message()
    else:
        m = c.messages.create(**kw)
    text = "".join(b.text for b in m.content if b.type == "text")
    calls = [(b.id, b.name, json.dumps(b.input)) for b in m.content if b.type == "tool_use"]
    return text, calls, m.stop_reason, m


@pytest.mark.parametrize("stream", [False, True])
def test_messages_two_hermes_calls_become_tool_use(warden, fake_upstream, stream):
    text, calls, stop, m = messages(warden, fake_upstream, TWO_CALLS, stream)
    check_two_calls(text, calls, stop, "tool_use")
    assert [b.type for b in m.content] == ["text", "tool_use", "tool_use"]  # the text block is kept, first


@pytest.mark.parametrize("stream", [False, True])
def test_messages_undeclared_and_opt_out_stay_text(warden, fake_upstream, stream):
    text, calls, stop, _ = messages(warden, fake_upstream, UNDECLARED, stream)
    assert (text, calls, stop) == (UNDECLARED, [], "end_turn")
    text, calls, stop, _ = messages(warden, fake_upstream, TWO_CALLS, stream, extra_body={"auto_heal_tool_calls": False})
    assert (text, calls, stop) == (TWO_CALLS, [], "end_turn")


# --- responses ---------------------------------------------------------------------------

def responses(w, fake, content, stream, **extra):
    c = openai_client(w)
    kw = dict(model="m", input=prompt(fake, content), tools=responses_tools(), store=False, **extra)
    if stream:
        final = None
        for ev in c.responses.create(stream=True, **kw):
            if ev.type == "response.completed":
                final = ev.response
        r = final
    else:
        r = c.responses.create(**kw)
    text = "".join(p.text for o in r.output if o.type == "message" for p in o.content if p.type == "output_text")
    calls = [(o.call_id, o.name, o.arguments) for o in r.output if o.type == "function_call"]
    statuses = [o.status for o in r.output if o.type == "function_call"]
    return text, calls, statuses


@pytest.mark.parametrize("stream", [False, True])
def test_responses_two_hermes_calls_become_function_calls(warden, fake_upstream, stream):
    text, calls, statuses = responses(warden, fake_upstream, TWO_CALLS, stream)
    check_two_calls(text, calls, "done", "done")
    assert statuses == ["completed", "completed"]


@pytest.mark.parametrize("stream", [False, True])
def test_responses_undeclared_and_opt_out_stay_text(warden, fake_upstream, stream):
    assert responses(warden, fake_upstream, UNDECLARED, stream)[:2] == (UNDECLARED, [])
    got = responses(warden, fake_upstream, TWO_CALLS, stream, extra_body={"auto_heal_tool_calls": False})
    assert got[:2] == (TWO_CALLS, [])


# --- tool names ----------------------------------------------------------------------------

BAD_NAMES = ['say "hi"', "two\nlines", "x" * 129, "spa ce", "<tool_call>"]


@pytest.mark.parametrize("bad", BAD_NAMES)
def test_a_tool_name_the_model_could_not_call_is_a_400_on_each_surface(warden, bad):
    import anthropic
    import openai
    with pytest.raises(openai.BadRequestError) as e:
        openai_client(warden).chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}], tools=[
            {"type": "function", "function": {"name": bad, "parameters": {"type": "object"}}}])
    assert "tools[0].function.name" in str(e.value)
    with pytest.raises(anthropic.BadRequestError) as e:
        anthropic_client(warden).messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "hi"}],
                                                  tools=[{"name": bad, "input_schema": {"type": "object"}}])
    assert "tools[0].name" in str(e.value)
    with pytest.raises(openai.BadRequestError) as e:
        openai_client(warden).responses.create(model="m", input="hi", store=False, tools=[
            {"type": "function", "name": bad, "parameters": {"type": "object"}}])
    assert "tools[0].name" in str(e.value)


def test_a_namespaced_name_past_128_characters_is_a_400(warden):
    import openai
    with pytest.raises(openai.BadRequestError) as e:
        openai_client(warden).responses.create(model="m", input="hi", store=False, tools=[
            {"type": "namespace", "name": "n" * 120, "tools": [{"type": "function", "name": "f" * 120}]}])
    assert "characters long" in str(e.value)


def test_a_tool_declared_twice_is_a_400_and_odd_good_names_pass(warden, fake_upstream):
    import anthropic
    import openai
    twice = [{"type": "function", "function": {"name": "get-weather", "parameters": {"type": "object"}}}] * 2
    with pytest.raises(openai.BadRequestError) as e:
        openai_client(warden).chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}],
                                                      tools=twice)
    assert "declared twice" in str(e.value)
    with pytest.raises(anthropic.BadRequestError) as e:
        anthropic_client(warden).messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "hi"}],
                                                 tools=[{"name": "a", "input_schema": {"type": "object"}}] * 2)
    assert "declared twice" in str(e.value)
    good = ["get-weather", "search.web_query", "mcp:files/read", "A_1", "x" * 128]
    r = openai_client(warden).chat.completions.create(model="m", messages=[{"role": "user", "content": prompt(
        fake_upstream, "fine")}], tools=[{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
                                         for n in good])
    assert r.choices[0].message.content == "fine"


def test_a_forced_choice_without_tools_is_a_400_on_each_surface(warden, fake_upstream):
    import anthropic
    import openai
    msgs = [{"role": "user", "content": "hi"}]
    with pytest.raises(openai.BadRequestError) as e:
        openai_client(warden).chat.completions.create(model="m", messages=msgs, tool_choice="required")
    assert "'tool_choice' 'required' needs tools" in str(e.value)
    with pytest.raises(anthropic.BadRequestError) as e:
        anthropic_client(warden).messages.create(model="m", max_tokens=5, messages=msgs, tool_choice={"type": "any"})
    assert "needs tools" in str(e.value)
    with pytest.raises(openai.BadRequestError) as e:
        openai_client(warden).responses.create(model="m", input="hi", store=False, tool_choice="required")
    assert "needs tools" in str(e.value)
    # enable_tools that selects nothing offers nothing
    for body in ({"enable_tools": True, "enabled_tools": []},
                 {"tools": [{"type": "mcp", "server_label": "warden", "allowed_tools": []}]}):
        with pytest.raises(openai.BadRequestError) as e:
            openai_client(warden).responses.create(model="m", input="hi", tool_choice="required", extra_body=body)
        assert "needs tools" in str(e.value)
    with pytest.raises(anthropic.BadRequestError) as e:
        anthropic_client(warden).messages.create(model="m", max_tokens=5, messages=msgs, tool_choice={"type": "any"},
                                                 extra_body={"enable_tools": True, "enabled_tools": []})
    assert "needs tools" in str(e.value)
    # warden's own tools count: required with enable_tools is a forced first turn, not an error
    r = openai_client(warden).chat.completions.create(
        model="m", messages=[{"role": "user", "content": prompt(fake_upstream, "fine")}], tool_choice="required",
        extra_body={"enable_tools": True, "enabled_tools": ["python"], "permission_mode": "off"})
    assert r.choices[0].message.content.endswith("fine")


def test_messages_may_force_one_of_wardens_own_tools_as_chat_may(warden, fake_upstream):
    import anthropic
    from conftest import upstream_requests
    name = script(fake_upstream, [{"content": "fine"}])
    body = {"enable_tools": True, "enabled_tools": ["python"], "permission_mode": "off"}
    m = anthropic_client(warden).messages.create(
        model="m", max_tokens=20, messages=[{"role": "user", "content": f"scenario:script:{name}"}],
        tool_choice={"type": "tool", "name": "python"}, extra_body=body)
    assert "".join(b.text for b in m.content if b.type == "text").endswith("fine")
    sent = upstream_requests(fake_upstream, name)[0]
    assert sent["tool_choice"] == {"type": "function", "function": {"name": "python"}}, sent.get("tool_choice")
    with pytest.raises(anthropic.BadRequestError) as e:  # a tool that is not enabled is still a 400
        anthropic_client(warden).messages.create(
            model="m", max_tokens=20, messages=[{"role": "user", "content": "hi"}],
            tool_choice={"type": "tool", "name": "terminal"}, extra_body=body)
    assert "is not one of 'tools'" in str(e.value)
