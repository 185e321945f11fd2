"""End to end on the real default model (SmolLM2-135M, whose template renders no tools, so
llama-server alone ignores `required` and `json_object`): warden forces them itself
(engine/forced_tool_call.h), through the official SDKs on each surface."""
import json

import pytest

from conftest import anthropic_client, on_model, openai_client

WARDEN = on_model()

FUNCS = [("get_weather", {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
         ("add", {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                  "required": ["a", "b"]})]
ASK = "What is the weather in Paris?"
ALICE = 'Give the name and age of Alice, who is 30, as a JSON object with keys "name" and "age".'


def declared(name, args):
    schema = dict(FUNCS)[name]
    assert set(schema["required"]) <= set(args), (name, args)
    return True


@pytest.mark.parametrize("stream", [False, True])
def test_chat_required_yields_a_structured_call(warden, stream):
    c = openai_client(warden)
    kw = dict(model="m", max_tokens=96, temperature=0, seed=3, messages=[{"role": "user", "content": ASK}],
              tools=[{"type": "function", "function": {"name": n, "parameters": p}} for n, p in FUNCS],
              tool_choice="required")
    if not stream:
        r = c.chat.completions.create(**kw)
        calls = [(t.function.name, t.function.arguments, t.id) for t in r.choices[0].message.tool_calls]
        finish = r.choices[0].finish_reason
    else:
        acc, finish = {}, None
        for ch in c.chat.completions.create(stream=True, **kw):
            if not ch.choices:
                continue
            for t in ch.choices[0].delta.tool_calls or []:
                cur = acc.setdefault(t.index, ["", "", ""])
                cur[0] += t.function.name or ""
                cur[1] += t.function.arguments or ""
                cur[2] = t.id or cur[2]
            finish = ch.choices[0].finish_reason or finish
        calls = [tuple(v) for _, v in sorted(acc.items())]
    assert finish == "tool_calls"
    assert len(calls) == 1, calls
    name, args, call_id = calls[0]
    assert name in dict(FUNCS) and declared(name, json.loads(args))
    assert call_id.startswith("call_")


@pytest.mark.parametrize("stream", [False, True])
def test_messages_any_yields_a_tool_use_block(warden, stream):
    c = anthropic_client(warden)
    kw = dict(model="m", max_tokens=96, messages=[{"role": "user", "content": ASK}],
              tools=[{"name": n, "input_schema": p} for n, p in FUNCS], tool_choice={"type": "any"})
    if stream:
        with c.messages.stream(**kw) as s:
            m = s.get_final_message()
    else:
        m = c.messages.create(**kw)
    assert m.stop_reason == "tool_use"
    uses = [b for b in m.content if b.type == "tool_use"]
    assert len(uses) == 1 and uses[0].name in dict(FUNCS) and declared(uses[0].name, uses[0].input)


@pytest.mark.parametrize("stream", [False, True])
def test_responses_required_yields_a_function_call_item(warden, stream):
    c = openai_client(warden)
    kw = dict(model="m", max_output_tokens=96, temperature=0, input=ASK, tool_choice="required",
              tools=[{"type": "function", "name": n, "parameters": p} for n, p in FUNCS])
    if stream:
        with c.responses.stream(**kw) as s:
            r = s.get_final_response()
    else:
        r = c.responses.create(**kw)
    calls = [o for o in r.output if o.type == "function_call"]
    assert len(calls) == 1 and calls[0].status == "completed", r.output
    assert calls[0].name in dict(FUNCS) and declared(calls[0].name, json.loads(calls[0].arguments))


def test_chat_json_object_parses_ten_times_of_ten(warden):
    c = openai_client(warden)
    for seed in range(10):
        # the model's default sampling; without warden's schema it answers in ``` fences
        r = c.chat.completions.create(model="m", max_tokens=300, seed=seed, messages=[{"role": "user", "content": ALICE}],
                                      response_format={"type": "json_object"})
        assert r.choices[0].finish_reason == "stop", (seed, r.choices[0].message.content)
        assert isinstance(json.loads(r.choices[0].message.content), dict), seed


def test_messages_output_config_format_returns_the_schema(warden):
    c = anthropic_client(warden)
    schema = {"type": "object", "properties": {"colour": {"type": "string", "enum": ["red", "green", "blue"]}},
              "required": ["colour"], "additionalProperties": False}
    for field in ({"output_config": {"format": {"type": "json_schema", "schema": schema}}},
                  {"output_format": {"type": "json_schema", "schema": schema}}):
        m = c.messages.create(model="m", max_tokens=64, messages=[{"role": "user", "content": "Pick a colour."}],
                              extra_body=field)
        obj = json.loads(m.content[0].text)
        assert obj["colour"] in ("red", "green", "blue"), (field, obj)


def test_responses_json_object_parses(warden):
    c = openai_client(warden)
    r = c.responses.create(model="m", max_output_tokens=300, input=ALICE,
                           text={"format": {"type": "json_object"}})
    assert isinstance(json.loads(r.output_text), dict), r.output_text
