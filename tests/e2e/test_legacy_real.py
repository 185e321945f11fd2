"""End to end: POST /v1/completions and POST /v1/embeddings on the real default model (SmolLM2-135M-Instruct
Q4_K_M through the llama-server that set-up built), driven by the official `openai` Python SDK.

Embeddings come from a second llama-server child started with --embeddings on the first request;
its vectors must be the model's embedding size, which this test reads from the GGUF itself."""
import math
import os
import pathlib
import re
import struct
import time

import openai
import pytest

from conftest import pid_alive, on_model, warden_on_model

GGUF_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
GGUF_STRING, GGUF_ARRAY = 8, 9


def default_model_path():
    home = os.environ.get("WARDEN_HOME") or os.path.expanduser("~/.cache/warden")
    return pathlib.Path(home) / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"


def gguf_metadata(path, wanted):
    """The GGUF header's key/value pairs named in `wanted` (a function of the keys read so far),
    read until all are found. Format: ggml docs/gguf.md (little-endian)."""
    found = {}
    with open(path, "rb") as f:
        def read(fmt):
            return struct.unpack(fmt, f.read(struct.calcsize(fmt)))[0]

        def read_str():
            return f.read(read("<Q")).decode("utf-8", "replace")

        def read_value(kind):
            if kind == GGUF_STRING:
                return read_str()
            if kind == GGUF_ARRAY:
                elem, count = read("<I"), read("<Q")
                return [read_value(elem) for _ in range(count)]
            return read(GGUF_SCALARS[kind])

        assert f.read(4) == b"GGUF"
        read("<I")  # version
        read("<Q")  # tensor count
        for _ in range(read("<Q")):
            key = read_str()
            found[key] = read_value(read("<I"))
            if all(k in found for k in wanted(found)):
                break
    return found


def embedding_length(path):
    meta = gguf_metadata(path, lambda m: ["general.architecture"] +
                         ([m["general.architecture"] + ".embedding_length"] if "general.architecture" in m else []))
    return meta[meta["general.architecture"] + ".embedding_length"]


@pytest.fixture(scope="module")
def n_embd():
    return embedding_length(default_model_path())


WARDEN = on_model()  # the module's `warden` fixture (conftest.py): the real model, exit 0 checked




def test_gguf_reader_finds_the_default_models_size(n_embd):
    assert n_embd == 576  # SmolLM2-135M: a cross-check of the reader, not what the tests rely on


def test_completion_returns_text(client, model_id):
    r = client.completions.create(model=model_id, prompt="The sea is", max_tokens=12, temperature=0)
    assert r.object == "text_completion"
    assert r.model == model_id
    assert isinstance(r.choices[0].text, str) and r.choices[0].text.strip()
    assert r.choices[0].finish_reason in ("stop", "length")
    assert r.usage.completion_tokens > 0


def test_streamed_completion_returns_text(client, model_id):
    text, finish, n = "", None, 0
    for chunk in client.completions.create(model=model_id, prompt="Once upon a time", max_tokens=12,
                                           temperature=0, stream=True):
        n += 1
        assert chunk.object == "text_completion"
        if chunk.choices:
            text += chunk.choices[0].text
            finish = chunk.choices[0].finish_reason or finish
    assert n > 3 and text.strip()
    assert finish in ("stop", "length")


def test_completion_bad_prompt_is_400(client, model_id):
    with pytest.raises(openai.BadRequestError) as e:
        client.completions.create(model=model_id, prompt=[])
    assert e.value.param == "prompt"


def test_embeddings_child_starts_on_first_use_and_has_the_models_size(warden, client, model_id, n_embd):
    assert "llama-server for embeddings" not in warden.log()
    t0 = time.time()
    r = client.embeddings.create(model=model_id, input=["The sea is blue.", "Taxes are due in April."],
                                 encoding_format="float")
    print(f"first embeddings request (child start included): {time.time() - t0:.1f} s")
    assert re.search(r"starting llama-server for embeddings \(pid \d+\)", warden.log())
    assert r.model == model_id
    assert [d.index for d in r.data] == [0, 1]
    a, b = r.data[0].embedding, r.data[1].embedding
    assert len(a) == len(b) == n_embd
    assert a != b
    assert math.isclose(math.sqrt(sum(x * x for x in a)), 1.0, rel_tol=1e-3)  # llama-server normalizes
    assert r.usage.prompt_tokens > 0


def test_embeddings_sdk_default_base64_matches_floats(client, model_id, n_embd):
    text = "A lighthouse on a rocky shore."
    floats = client.embeddings.create(model=model_id, input=text, encoding_format="float").data[0].embedding
    decoded = list(client.embeddings.create(model=model_id, input=text).data[0].embedding)  # SDK: base64
    assert len(decoded) == n_embd
    for x, y in zip(floats, decoded):
        assert abs(x - y) <= 1e-6 + 1e-6 * abs(x)  # float32 rounding only


def test_embeddings_dimensions(client, model_id, n_embd):
    r = client.embeddings.create(model=model_id, input="x", dimensions=n_embd, encoding_format="float")
    assert len(r.data[0].embedding) == n_embd
    with pytest.raises(openai.BadRequestError) as e:
        client.embeddings.create(model=model_id, input="x", dimensions=n_embd // 2)
    assert e.value.param == "dimensions"


def test_embeddings_input_longer_than_the_batch_is_400(client, model_id):
    with pytest.raises(openai.BadRequestError) as e:
        client.embeddings.create(model=model_id, input="word " * 1500)
    assert e.value.param == "input"
    assert "too large" in e.value.body["message"]


def test_chat_still_works_next_to_the_embeddings_child(client, model_id):
    r = client.chat.completions.create(model=model_id, max_tokens=8, temperature=0,
                                       messages=[{"role": "user", "content": "Say hello"}])
    assert r.choices[0].message.content is not None


def test_both_children_end_with_warden(n_embd):
    w = warden_on_model()
    try:
        c = openai.OpenAI(base_url=w.base + "/v1", api_key="unused", max_retries=0, timeout=300)
        assert len(c.embeddings.create(model="m", input="hi", encoding_format="float").data[0].embedding) == n_embd
        pids = [w.llama_pid(), int(re.search(r"starting llama-server for embeddings \(pid (\d+)\)", w.log()).group(1))]
        assert all(pid_alive(p) for p in pids)
    finally:
        assert w.stop() == 0
    deadline = time.time() + 10
    while time.time() < deadline and any(pid_alive(p) for p in pids):
        time.sleep(0.1)
    assert not any(pid_alive(p) for p in pids)
