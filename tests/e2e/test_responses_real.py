"""End to end: warden's Responses surface (POST /v1/responses, retrieve, input_items) on the real
default model (SmolLM2-135M-Instruct Q4_1 through the llama-server that set-up built), driven by the
official `openai` Python SDK. The model is a small base model: the checks are about the plumbing
(shapes, usage, statuses, streaming order, stored state), not the quality of its answers.

The default model almost never stops on its own, so a plain-text answer within a small
max_output_tokens ends "incomplete". Where a test needs the model to stop ("completed"), it asks
for text.format json_schema with a one-field enum: llama-server's grammar then leaves only the end
of the generation once the object is closed, which takes about 17 tokens."""
import json
import urllib.request

from conftest import on_model

PROMPT = "Write one short sentence about the sea."
YES_NO = {"format": {"type": "json_schema", "name": "answer", "strict": True, "schema": {
    "type": "object", "properties": {"answer": {"type": "string", "enum": ["yes", "no"]}},
    "required": ["answer"], "additionalProperties": False}}}
T0 = {"temperature": 0}


WARDEN = on_model()  # the module's `warden` fixture (conftest.py): the real model, exit 0 checked




def llama(warden, path, body):
    """A POST straight to warden's llama-server (with the key the test helper gave it)."""
    req = urllib.request.Request(warden.llama_url() + path, data=json.dumps(body).encode(),
                                 headers={"Authorization": "Bearer " + warden.llama_key(),
                                          "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def prompt_tokens(warden, messages):
    """How many tokens llama-server counts for these chat messages (its template, then tokenize)."""
    text = llama(warden, "/apply-template", {"messages": messages})["prompt"]
    return len(llama(warden, "/tokenize", {"content": text, "add_special": True})["tokens"])


def check_usage(r):
    assert r.usage.input_tokens > 0 and r.usage.output_tokens > 0, r.usage
    assert r.usage.total_tokens == r.usage.input_tokens + r.usage.output_tokens


def check_status(r):
    """completed, or incomplete because of max_output_tokens (the only two ways a plain answer ends)."""
    if r.status == "completed":
        assert r.incomplete_details is None
    else:
        assert r.status == "incomplete", r.status
        assert r.incomplete_details.reason == "max_output_tokens"


def test_plain_text(client, model_id):
    r = client.responses.create(model=model_id, input=PROMPT, max_output_tokens=24, **T0)
    assert r.id.startswith("resp_") and r.object == "response"
    assert r.model == model_id
    check_status(r)
    assert [o.type for o in r.output] == ["message"]
    assert r.output[0].role == "assistant" and r.output[0].content[0].type == "output_text"
    assert isinstance(r.output_text, str) and r.output_text.strip()
    check_usage(r)
    assert r.usage.output_tokens <= 24
    assert r.max_output_tokens == 24


def test_completed_when_the_model_stops(client, model_id):
    r = client.responses.create(model=model_id, input="Is the sea wet? Answer yes or no.", max_output_tokens=48,
                                text=YES_NO, **T0)
    assert r.status == "completed", (r.status, r.incomplete_details, r.output_text)
    assert r.incomplete_details is None
    assert json.loads(r.output_text)["answer"] in ("yes", "no")
    check_usage(r)
    assert r.usage.output_tokens < 48


def test_streamed_deltas_make_the_final_text(client, model_id):
    events = list(client.responses.create(model=model_id, input=PROMPT, max_output_tokens=16, stream=True, **T0))
    types = [e.type for e in events]
    seq = [e.sequence_number for e in events]
    assert all(a < b for a, b in zip(seq, seq[1:])), seq
    assert seq[0] == 0
    assert types[:2] == ["response.created", "response.in_progress"], types
    assert types[-1] in ("response.completed", "response.incomplete"), types
    deltas = [e.delta for e in events if e.type == "response.output_text.delta"]
    assert len(deltas) > 1
    final = events[-1].response
    check_status(final)
    text = "".join(c.text for o in final.output if o.type == "message" for c in o.content if c.type == "output_text")
    assert "".join(deltas) == text and text.strip()
    assert [e.text for e in events if e.type == "response.output_text.done"] == [text]
    check_usage(final)
    assert final.usage.output_tokens <= 16
    # the stored copy is the same answer
    assert client.responses.retrieve(final.id).output_text == text


def test_streamed_with_the_sdk_helper_completes(client, model_id):
    with client.responses.stream(model=model_id, input="Is the sky blue? Answer yes or no.", max_output_tokens=48,
                                 text=YES_NO, **T0) as s:
        events = list(s)
        final = s.get_final_response()
    seq = [e.sequence_number for e in events]
    assert all(a < b for a, b in zip(seq, seq[1:])), seq
    assert events[-1].type == "response.completed"
    assert final.status == "completed"
    assert "".join(e.delta for e in events if e.type == "response.output_text.delta") == final.output_text
    assert json.loads(final.output_text)["answer"] in ("yes", "no")


def test_previous_response_id_chain(warden, client, model_id):
    first_q, second_q = "Is the sea wet? Answer yes or no.", "And is the sky green?"
    r1 = client.responses.create(model=model_id, input=first_q, max_output_tokens=48, text=YES_NO, **T0)
    assert r1.status == "completed", (r1.status, r1.output_text)
    r2 = client.responses.create(model=model_id, input=second_q, previous_response_id=r1.id,
                                 max_output_tokens=48, text=YES_NO, **T0)
    assert r2.status == "completed", (r2.status, r2.output_text)
    assert r2.previous_response_id == r1.id
    assert json.loads(r2.output_text)["answer"] in ("yes", "no")
    # the second call's prompt was the first question, the first answer and the second question:
    # llama-server counted exactly that many tokens
    assert r1.usage.input_tokens == prompt_tokens(warden, [{"role": "user", "content": first_q}])
    assert r2.usage.input_tokens == prompt_tokens(warden, [
        {"role": "user", "content": first_q},
        {"role": "assistant", "content": r1.output_text},
        {"role": "user", "content": second_q}])
    # both are stored as answered
    got1, got2 = client.responses.retrieve(r1.id), client.responses.retrieve(r2.id)
    assert (got1.status, got1.output_text) == ("completed", r1.output_text)
    assert (got2.status, got2.output_text, got2.previous_response_id) == ("completed", r2.output_text, r1.id)
    items = client.responses.input_items.list(r2.id)
    assert [i.content[0].text for i in items.data] == [second_q]


def test_small_max_output_tokens_is_incomplete(client, model_id):
    r = client.responses.create(model=model_id, input=PROMPT, max_output_tokens=4, **T0)
    assert r.status == "incomplete"
    assert r.incomplete_details is not None and r.incomplete_details.reason == "max_output_tokens"
    assert r.usage.output_tokens == 4
    assert r.max_output_tokens == 4
    assert r.output_text  # what was made before the cut is kept
    got = client.responses.retrieve(r.id)
    assert got.status == "incomplete" and got.incomplete_details.reason == "max_output_tokens"
