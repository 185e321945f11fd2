"""One sample per tool-call text format (engine/tool_call_text.h, reference §2.8), healed on the
client-tool passthrough (chat, messages, responses; streamed in 3-byte pieces) and inside warden's
own tool loop, where the healed python call runs and its output reaches the model's next turn.
The unit tests (engine/tool_call_text_test.cpp) split each sample at every byte; these show the
same formats through the whole server, as a client sees them.
"""
import json
import uuid

import pytest

from conftest import anthropic_client, on_fake, openai_client, request, script, upstream_requests

WARDEN = on_fake("--sse-ping-interval", "600000")

S = '<|"|>'  # Gemma 4's string quote


def j(args):
    return json.dumps(args, ensure_ascii=False)


def first(args):
    """The one (key, value) of a sample's arguments, for the formats that spell each argument."""
    (k, v), = args.items()
    return k, v


# format family → text the model writes for a call of `n` with arguments `a` (one string argument)
FAMILIES = {
    "hermes": lambda n, a: f'I will call it.\n<tool_call>\n{{"name": "{n}", "arguments": {j(a)}}}\n</tool_call>',
    "qwen_xml": lambda n, a: "<function={}>\n<parameter={}>\n{}\n</parameter>\n</function>".format(n, *first(a)),
    "qwen_xml_name": lambda n, a: ('<tool_call>\n<function name="{}">\n<parameter name="{}">\n{}\n</parameter>\n'
                                   '</function>\n</tool_call>').format(n, *first(a)),
    "glm": lambda n, a: "<tool_call>{}\n<arg_key>{}</arg_key>\n<arg_value>{}</arg_value>\n</tool_call>".format(
        n, *first(a)),
    "seed_oss": lambda n, a: ("<seed:tool_call>\n<function={}>\n<parameter={}>{}</parameter>\n</function>\n"
                              "</seed:tool_call>").format(n, *first(a)),
    "minimax": lambda n, a: ('<minimax:tool_call>\n<invoke name="{}">\n<parameter name="{}">{}</parameter>\n'
                             '</invoke>\n</minimax:tool_call>').format(n, *first(a)),
    "llama3_json": lambda n, a: f'<|python_tag|>{{"name": "{n}", "parameters": {j(a)}}}',
    "llama3_call": lambda n, a: "<|python_tag|>{}.call({}={})".format(n, first(a)[0], json.dumps(first(a)[1])),
    "llama32_bare": lambda n, a: f'{{"name": "{n}", "parameters": {j(a)}}}',
    "mistral_array": lambda n, a: f'[TOOL_CALLS] [{{"name": "{n}", "arguments": {j(a)}}}]',
    "mistral_args": lambda n, a: f"[TOOL_CALLS]{n}[ARGS]{j(a)}",
    "mistral_call_id": lambda n, a: f"[THINK]plan[/THINK][TOOL_CALLS]{n}[CALL_ID]a1b2c3d4e[ARGS]{j(a)}",
    "mistral_bare": lambda n, a: f"Sure: {n}[ARGS]{j(a)}",
    "gemma4": lambda n, a: "<|tool_call>call:{}{{{}:{}{}{}}}<tool_call|>".format(n, first(a)[0], S, first(a)[1], S),
    "gemma4_bare": lambda n, a: "call:{}{{{}:{}{}{}}}".format(n, first(a)[0], S, first(a)[1], S),
    "deepseek_r1": lambda n, a: ("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>"
                                 f"{n}\n```json\n{j(a)}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"),
    "deepseek_v31": lambda n, a: (f"<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>{n}<｜tool▁sep｜>{j(a)}"
                                  "<｜tool▁call▁end｜><｜tool▁calls▁end｜>"),
    "kimi_k2": lambda n, a: (f"<|tool_calls_section_begin|><|tool_call_begin|>functions.{n}:0"
                             f"<|tool_call_argument_begin|>{j(a)}<|tool_call_end|><|tool_calls_section_end|>"),
    "granite": lambda n, a: f'<|tool_call|>[{{"name": "{n}", "arguments": {j(a)}}}]',
    "lfm2": lambda n, a: "<|tool_call_start|>[{}({}={})]<|tool_call_end|>".format(n, first(a)[0],
                                                                                  json.dumps(first(a)[1])),
    "phi4": lambda n, a: f'functools[{{"name": "{n}", "arguments": {j(a)}}}]',
    "apertus": lambda n, a: f"<|tools_prefix|>[{{\"{n}\": {j(a)}}}]<|tools_suffix|>",
}
# the text each format keeps (its prose and reasoning); everything else is call markup
KEPT = {"hermes": "I will call it.", "mistral_call_id": "[THINK]plan[/THINK]", "mistral_bare": "Sure:"}

TOOL = "get_weather"
ARGS = {"city": "São Paulo"}


def prompt(fake, content):
    return "scenario:script:" + script(fake, [{"content": content, "piece": 3}])


def test_the_table_names_every_family_the_server_heals():
    assert len(FAMILIES) >= 20  # 17 families (engine/tool_call_text.cpp), with the variants of four


# --- the passthrough: a client's own tools ------------------------------------------------

@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_passthrough_chat_streamed(warden, fake_upstream, family):
    c = openai_client(warden)
    tools = [{"type": "function", "function": {"name": TOOL, "parameters": {"type": "object"}}}]
    text, calls, finish = "", {}, None
    for ch in c.chat.completions.create(model="m", stream=True, tools=tools, messages=[
            {"role": "user", "content": prompt(fake_upstream, FAMILIES[family](TOOL, ARGS))}]):
        if not ch.choices:
            continue
        d = ch.choices[0].delta
        text += d.content or ""
        for t in d.tool_calls or []:
            cur = calls.setdefault(t.index, ["", ""])
            cur[0] += (t.function.name or "") if t.function else ""
            cur[1] += (t.function.arguments or "") if t.function else ""
        finish = ch.choices[0].finish_reason or finish
    assert [(n, json.loads(a)) for n, a in calls.values()] == [(TOOL, ARGS)], (family, text)
    assert text.strip() == KEPT.get(family, "") and finish == "tool_calls"


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_passthrough_messages(warden, fake_upstream, family):
    m = anthropic_client(warden).messages.create(
        model="m", max_tokens=100, tools=[{"name": TOOL, "input_schema": {"type": "object"}}],
        messages=[{"role": "user", "content": prompt(fake_upstream, FAMILIES[family](TOOL, ARGS))}])
    assert [(b.name, b.input) for b in m.content if b.type == "tool_use"] == [(TOOL, ARGS)], family
    assert "".join(b.text for b in m.content if b.type == "text").strip() == KEPT.get(family, "")
    assert m.stop_reason == "tool_use"


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_passthrough_responses_streamed(warden, fake_upstream, family):
    final = None
    for ev in openai_client(warden).responses.create(
            model="m", stream=True, store=False, input=prompt(fake_upstream, FAMILIES[family](TOOL, ARGS)),
            tools=[{"type": "function", "name": TOOL, "parameters": {"type": "object"}}]):
        if ev.type == "response.completed":
            final = ev.response
    calls = [(o.name, json.loads(o.arguments), o.status) for o in final.output if o.type == "function_call"]
    assert calls == [(TOOL, ARGS, "completed")], family


# --- warden's own loop: the healed call runs ----------------------------------------------

@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_in_the_loop_the_healed_python_call_runs(warden, fake_upstream, family):
    name = script(fake_upstream, [{"content": FAMILIES[family]("python", {"code": "print(6*7)"}), "piece": 3},
                                  {"content": "It printed 42."}])
    st, _, data = request(warden.port, "POST", "/v1/chat/completions", {
        "messages": [{"role": "user", "content": f"scenario:script:{name}"}], "enable_tools": True,
        "enabled_tools": ["python"], "confirm_tool_calls": False, "session_id": "fam-" + uuid.uuid4().hex[:6]})
    assert st == 200, data
    body = json.loads(data)
    assert body["choices"][0]["message"]["content"].endswith("It printed 42."), body
    reqs = upstream_requests(fake_upstream, name)
    assert len(reqs) == 2, family
    msgs = reqs[1]["messages"]
    call = msgs[-2]["tool_calls"][0]["function"]
    assert (call["name"], json.loads(call["arguments"])) == ("python", {"code": "print(6*7)"}), family
    assert msgs[-1]["role"] == "tool" and msgs[-1]["content"] == "42\n", family
    # the model's next turn sees its call as a structured call, and no markup in the text
    assert FAMILIES[family]("python", {"code": "print(6*7)"}) not in json.dumps(msgs[-2], ensure_ascii=False)
