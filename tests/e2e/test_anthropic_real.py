"""End to end: warden's Anthropic Messages surface (/v1/messages, /v1/messages/count_tokens) on the
real default model (SmolLM2-135M-Instruct Q4_1 through the llama-server that set-up built), driven by the
official `anthropic` Python SDK. The model is a small base model: the checks are about the
plumbing (shapes, usage, stop reasons, counting), not the quality of its answers."""
import json
import urllib.request

import anthropic
import pytest

from conftest import anthropic_client, on_model

PROMPT = [{"role": "user", "content": "Write one short sentence about the sea."}]
# greedy sampling; the SDK (2.x) has no `temperature` argument any more, warden still reads the field
T0 = {"extra_body": {"temperature": 0}}
# temperature 0 on the default model answers this with "1, 2, 3, 4, 5, 6": a "4" is certain
COUNTING = {"system": "You are a helpful assistant.",
            "messages": [{"role": "user", "content": "Count from 1 to 10, separated by commas."}]}


WARDEN = on_model()  # the module's `warden` fixture (conftest.py): the real model, exit 0 checked


CLIENT = anthropic_client  # the module's `client` fixture (conftest.py)


def text_of(msg):
    return "".join(b.text for b in msg.content if b.type == "text")


def test_create_returns_text_and_usage(client, model_id):
    msg = client.messages.create(model=model_id, max_tokens=24, **T0, messages=PROMPT)
    assert msg.type == "message" and msg.role == "assistant"
    assert msg.id.startswith("msg_")
    assert msg.model == model_id
    assert [b.type for b in msg.content] == ["text"], msg.content
    assert msg.content[0].text.strip()
    assert msg.stop_reason in ("end_turn", "max_tokens")
    assert msg.stop_sequence is None
    assert msg.usage.input_tokens > 0
    assert 0 < msg.usage.output_tokens <= 24
    if msg.stop_reason == "max_tokens":
        assert msg.usage.output_tokens == 24


def test_stream_gives_text_and_a_final_message(client, model_id):
    deltas, events = [], []
    with client.messages.stream(model=model_id, max_tokens=24, **T0, messages=PROMPT) as stream:
        for ev in stream:
            events.append(ev.type)
            if ev.type == "text":
                deltas.append(ev.text)
        final = stream.get_final_message()
    assert events[0] == "message_start" and events[-1] == "message_stop", events
    assert len(deltas) > 1, deltas
    assert "".join(deltas).strip()
    assert text_of(final) == "".join(deltas)
    assert final.id.startswith("msg_")
    assert final.stop_reason in ("end_turn", "max_tokens")
    assert final.usage.input_tokens > 0
    assert final.usage.output_tokens > 0


def test_stream_and_create_agree_at_temperature_0(client, model_id):
    made = client.messages.create(model=model_id, max_tokens=16, **T0, messages=PROMPT)
    with client.messages.stream(model=model_id, max_tokens=16, **T0, messages=PROMPT) as stream:
        streamed = stream.get_final_message()
    assert text_of(streamed) == text_of(made)
    assert streamed.usage.input_tokens == made.usage.input_tokens


@pytest.mark.parametrize("body", [
    {"messages": PROMPT},
    {"system": "You are a helpful assistant. Answer in one sentence.",
     "messages": [{"role": "user", "content": "Hi there"},
                  {"role": "assistant", "content": "Hello! How can I help you today?"},
                  {"role": "user", "content": [{"type": "text", "text": "Tell me about the moon."}]}]},
    COUNTING,
], ids=["one-user-message", "system-and-three-turns", "counting"])
def test_count_tokens_equals_what_create_reports(warden, client, model_id, body):
    """count_tokens renders the conversation with llama-server's /apply-template and counts it
    with /tokenize: the number must be the prompt the model is then charged for."""
    counted = client.messages.count_tokens(model=model_id, **body)
    made = client.messages.create(model=model_id, max_tokens=1, **T0, **body)
    assert counted.input_tokens > 0
    assert counted.input_tokens == made.usage.input_tokens, (
        f"count_tokens says {counted.input_tokens}, messages.create's usage says {made.usage.input_tokens} "
        f"for {json.dumps(body)}; {llama_counts(warden, body)}")


def llama_counts(warden, body):
    """What llama-server itself says about the prompt (for the failure message)."""
    def post(path, obj):
        req = urllib.request.Request(warden.llama_url() + path, data=json.dumps(obj).encode(), headers={
            "Content-Type": "application/json", "Authorization": "Bearer " + warden.llama_key()})
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read())
    try:
        msgs = ([{"role": "system", "content": body["system"]}] if "system" in body else []) + [
            {"role": m["role"], "content": m["content"] if isinstance(m["content"], str)
             else "".join(b["text"] for b in m["content"])} for m in body["messages"]]
        prompt = post("/apply-template", {"messages": msgs})["prompt"]
        n = {s: post("/tokenize", {"content": prompt, "add_special": s, "parse_special": True})["tokens"]
             for s in (False, True)}
        return (f"llama-server: /apply-template gives {prompt!r}; /tokenize of it counts {len(n[False])} "
                f"with add_special false (first ids {n[False][:3]}), {len(n[True])} with add_special true "
                f"(first ids {n[True][:3]})")
    except Exception as e:  # noqa: BLE001 — only a diagnostic
        return f"(asking llama-server directly failed: {e})"


def test_stop_sequence_stops_before_it(client, model_id):
    msg = client.messages.create(model=model_id, max_tokens=16, **T0, stop_sequences=["4"], **COUNTING)
    text = text_of(msg)
    assert msg.stop_reason == "stop_sequence", (msg.stop_reason, text)
    assert msg.stop_sequence == "4"
    assert "4" not in text
    assert text.strip(), "the model's text before the stop sequence is kept"
    assert msg.usage.output_tokens > 0


def test_stop_sequence_streamed(client, model_id):
    with client.messages.stream(model=model_id, max_tokens=16, **T0, stop_sequences=["4"],
                                **COUNTING) as stream:
        streamed = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert final.stop_reason == "stop_sequence", (final.stop_reason, streamed)
    assert final.stop_sequence == "4"
    assert "4" not in streamed
    assert streamed.strip() and text_of(final) == streamed


def test_stop_sequence_keeps_input_usage(client, model_id):
    """The prompt was read whole even though the answer stopped early: input_tokens is still
    what the prompt costs (the same as without the stop sequence)."""
    plain = client.messages.create(model=model_id, max_tokens=16, **T0, **COUNTING)
    stopped = client.messages.create(model=model_id, max_tokens=16, **T0, stop_sequences=["4"], **COUNTING)
    assert stopped.stop_reason == "stop_sequence"
    assert stopped.usage.input_tokens == plain.usage.input_tokens > 0, (
        f"with stop_sequences the usage is {stopped.usage}, without it {plain.usage}")


def test_bad_body_is_a_bad_request_error(client, model_id):
    with pytest.raises(anthropic.BadRequestError) as e:
        client.messages.create(model=model_id, max_tokens=0, messages=PROMPT)
    err = e.value
    assert err.status_code == 400
    assert err.body["type"] == "error"
    assert err.body["error"]["type"] == "invalid_request_error"
    assert "max_tokens" in err.body["error"]["message"]
    assert err.request_id and err.request_id.startswith("req_")
    assert err.body["request_id"] == err.request_id

    with pytest.raises(anthropic.BadRequestError) as e:
        client.messages.count_tokens(model=model_id, messages=[{"role": "user", "content": [{"type": "nope"}]}])
    assert e.value.body["error"]["type"] == "invalid_request_error"


def test_image_for_a_model_without_vision_is_a_bad_request(client, model_id):
    """llama-server answers 500 for an image without an mmproj; retrying cannot help, so warden
    makes it the caller's 400 (the SDKs retry 5xx)."""
    png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
    with pytest.raises(anthropic.BadRequestError) as e:
        client.messages.create(model=model_id, max_tokens=8, messages=[{"role": "user", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}},
            {"type": "text", "text": "What is this?"}]}])
    assert e.value.status_code == 400
    assert "image" in str(e.value)
