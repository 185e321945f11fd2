"""POST /v1/completions (legacy text completions) and POST /v1/embeddings, driven by the official
`openai` Python SDK (and raw HTTP where the exact bytes matter) against warden in front of the
scripted fake upstream (tests/fake/fake_upstream.py: the scenario is chosen by a prompt or input
"scenario:<name>"; the fake records what warden sent it in GET /stats "legacy_requests").

Also warden's own llama-server path with the fake standing in for llama-server
(tests/fake/fake_llama_server.py): /v1/embeddings starts a second child with --embeddings on the
first request and stops it with warden."""
import base64
import http.client
import json
import re
import socket
import struct
import sys
import time

import openai
import pytest

from conftest import ROOT, Proc, pid_alive, request, sse_frames, Warden, on_fake, warden_on_fake, warden_on_url
from fake.fake_upstream import COMPLETION_TEXT, EMBED_DIM, fake_embedding

PING_MS = "300"  # the stall scenario is silent for 1.2 s: several pings


# --- fixtures and helpers -------------------------------------------------------------------

WARDEN = on_fake("--sse-ping-interval", PING_MS)  # the module's `warden` fixture (conftest.py)




def legacy_requests(fake):
    st, _, body = request(fake.port, "GET", "/stats")
    assert st == 200
    return json.loads(body)["legacy_requests"]


def sent_upstream(fake, before):
    """What warden sent the fake since `before` (a legacy_requests() length)."""
    return legacy_requests(fake)[before:]


def error_of(status_body):
    st, _, body = status_body
    return st, json.loads(body)["error"]


def post(w, path, body):
    return request(w.port, "POST", path, body)


# --- /v1/completions ------------------------------------------------------------------------

def test_completion_non_streaming_is_the_upstreams_answer(client, fake_upstream):
    before = len(legacy_requests(fake_upstream))
    r = client.completions.create(model="whatever-the-client-says", prompt="Once", max_tokens=9, temperature=0)
    assert r.object == "text_completion"
    assert r.choices[0].text == COMPLETION_TEXT
    assert r.choices[0].finish_reason == "length"
    assert r.usage.total_tokens == 11
    [sent] = sent_upstream(fake_upstream, before)
    assert sent["path"] == "/v1/completions"
    assert sent["body"]["model"] == "fake-model"  # the served id, not the client's
    assert sent["body"]["stream"] is False
    assert sent["body"]["prompt"] == "Once" and sent["body"]["max_tokens"] == 9


def test_completion_streaming_forwards_every_chunk(client, fake_upstream):
    before = len(legacy_requests(fake_upstream))
    text, finish, n = "", None, 0
    for chunk in client.completions.create(model="m", prompt="Once", max_tokens=9, stream=True):
        n += 1
        assert chunk.object == "text_completion"
        text += chunk.choices[0].text
        finish = chunk.choices[0].finish_reason or finish
    assert text == COMPLETION_TEXT
    assert finish == "length"
    assert n == len(range(0, len(COMPLETION_TEXT), 4)) + 1
    [sent] = sent_upstream(fake_upstream, before)
    assert sent["body"]["stream"] is True and sent["body"]["model"] == "fake-model"


def test_completion_stream_raw_frames_end_with_done(warden):
    st, hdrs, body = post(warden, "/v1/completions", {"prompt": "x", "stream": True})
    assert st == 200 and hdrs["content-type"].startswith("text/event-stream")
    frames = sse_frames(body)
    assert frames[-1] == ("data", "[DONE]")
    chunks = [json.loads(d) for k, d in frames[:-1] if k == "data"]
    assert "".join(c["choices"][0]["text"] for c in chunks) == COMPLETION_TEXT


def test_completion_prompt_shapes(client, fake_upstream):
    r = client.completions.create(model="m", prompt=["a", "b"], max_tokens=3)
    assert [c.index for c in r.choices] == [0, 1]
    for prompt in ([1, 2, 3], [[1, 2], [3]], ""):
        before = len(legacy_requests(fake_upstream))
        client.completions.create(model="m", prompt=prompt, max_tokens=3)
        assert sent_upstream(fake_upstream, before)[0]["body"]["prompt"] == prompt


@pytest.mark.parametrize("body,param", [
    ({"model": "m"}, "prompt"),
    ({"prompt": 5}, "prompt"),
    ({"prompt": []}, "prompt"),
    ({"prompt": [1, "a"]}, "prompt"),
    ({"prompt": [[1], []]}, "prompt"),
    ({"prompt": "x", "max_tokens": -1}, "max_tokens"),
    ({"prompt": "x", "stream": "yes"}, "stream"),
    ({"prompt": "x", "stream": True, "n": 2}, "n"),
])
def test_completion_bad_request_is_400_with_param_before_the_upstream(warden, fake_upstream, body, param):
    before = len(legacy_requests(fake_upstream))
    st, err = error_of(post(warden, "/v1/completions", body))
    assert st == 400
    assert err["type"] == "invalid_request_error" and err["param"] == param, err
    assert sent_upstream(fake_upstream, before) == []


def test_completion_bad_request_through_the_sdk(client):
    with pytest.raises(openai.BadRequestError) as e:
        client.completions.create(model="m", prompt=[])
    assert e.value.status_code == 400 and e.value.param == "prompt"


def test_completion_not_json_is_400(warden):
    st, err = error_of(request(warden.port, "POST", "/v1/completions", b"{nope"))
    assert st == 400 and err["type"] == "invalid_request_error"


@pytest.mark.parametrize("scenario,status,exc", [
    ("http400", 400, openai.BadRequestError),
    ("http500", 502, openai.InternalServerError),
    ("http503", 503, openai.InternalServerError),
])
@pytest.mark.parametrize("stream", [False, True])
def test_completion_upstream_errors_get_a_real_status(client, scenario, status, exc, stream):
    with pytest.raises(exc) as e:
        r = client.completions.create(model="m", prompt="scenario:" + scenario, stream=stream)
        if stream:
            list(r)
    assert e.value.status_code == status
    assert e.value.body["message"]


def test_completion_stream_broken_after_start_is_in_band(warden):
    st, _, body = post(warden, "/v1/completions", {"prompt": "scenario:crash", "stream": True})
    assert st == 200
    frames = sse_frames(body)
    assert frames[-1] == ("data", "[DONE]")
    err = json.loads(frames[-2][1])["error"]
    assert err["type"] == "api_error" and "mid-stream" in err["message"]
    assert json.loads(frames[0][1])["choices"][0]["text"] == COMPLETION_TEXT[:4]


def test_completion_stream_pings_while_the_upstream_is_silent(warden):
    st, _, body = post(warden, "/v1/completions", {"prompt": "scenario:stall", "stream": True})
    assert st == 200
    frames = sse_frames(body)
    assert ("comment", "ping") in frames
    assert frames[-1] == ("data", "[DONE]")
    texts = [json.loads(d)["choices"][0]["text"] for k, d in frames if k == "data" and d != "[DONE]"]
    assert "".join(texts) == COMPLETION_TEXT


def test_completion_client_disconnect_aborts_the_upstream(warden, fake_upstream):
    st, _, stats = request(fake_upstream.port, "GET", "/stats")
    before = json.loads(stats)["disconnects"]
    body = json.dumps({"prompt": "scenario:endless", "stream": True}).encode()
    conn = http.client.HTTPConnection("127.0.0.1", warden.port, timeout=10)
    conn.request("POST", "/v1/completions", body=body, headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    assert r.status == 200
    assert b"data:" in r.read1(4096)
    conn.sock.shutdown(socket.SHUT_RDWR)
    conn.close()
    deadline = time.time() + 5
    while time.time() < deadline:
        _, _, stats = request(fake_upstream.port, "GET", "/stats")
        if json.loads(stats)["disconnects"] > before:
            break
        time.sleep(0.1)
    assert json.loads(stats)["disconnects"] > before


# --- /v1/embeddings -------------------------------------------------------------------------

def test_embeddings_float(client, fake_upstream):
    before = len(legacy_requests(fake_upstream))
    inputs = ["hello world", "good bye"]
    r = client.embeddings.create(model="anything", input=inputs, encoding_format="float")
    assert r.object == "list" and r.model == "fake-model"
    assert [d.index for d in r.data] == [0, 1]
    for d, text in zip(r.data, inputs):
        assert d.object == "embedding"
        assert d.embedding == fake_embedding(text)
        assert len(d.embedding) == EMBED_DIM
    assert r.usage.prompt_tokens == 4 and r.usage.total_tokens == 4
    [sent] = sent_upstream(fake_upstream, before)
    assert sent["path"] == "/v1/embeddings"
    assert sent["body"] == {"model": "fake-model", "input": inputs, "encoding_format": "float"}


def test_embeddings_sdk_default_is_base64_decoded_by_the_sdk(client, fake_upstream):
    """Without encoding_format the SDK asks for base64 and decodes it; warden asks the upstream
    for floats and encodes them itself."""
    before = len(legacy_requests(fake_upstream))
    r = client.embeddings.create(model="m", input="hello")
    assert list(r.data[0].embedding) == fake_embedding("hello")  # values k/128: exact in float32
    [sent] = sent_upstream(fake_upstream, before)
    assert sent["body"]["encoding_format"] == "float"


def test_embeddings_base64_is_little_endian_float32(warden):
    st, _, body = post(warden, "/v1/embeddings", {"input": ["a", "b c"], "encoding_format": "base64"})
    assert st == 200
    data = json.loads(body)["data"]
    for d, text in zip(data, ["a", "b c"]):
        assert isinstance(d["embedding"], str)
        raw = base64.b64decode(d["embedding"], validate=True)
        assert list(struct.unpack("<%df" % EMBED_DIM, raw)) == fake_embedding(text)


def test_embeddings_token_inputs(client):
    r = client.embeddings.create(model="m", input=[[1, 2], [3]], encoding_format="float")
    assert [d.embedding for d in r.data] == [fake_embedding([1, 2]), fake_embedding([3])]
    r = client.embeddings.create(model="m", input=[5, 6, 7], encoding_format="float")
    assert [d.embedding for d in r.data] == [fake_embedding([5, 6, 7])]


def test_embeddings_in_input_order_whatever_the_upstreams_order(client):
    inputs = ["scenario:reversed", "x", "y"]
    r = client.embeddings.create(model="m", input=inputs, encoding_format="float")
    assert [d.embedding for d in r.data] == [fake_embedding(t) for t in inputs]
    assert [d.index for d in r.data] == [0, 1, 2]


def test_embeddings_dimensions_only_the_models_own(client, fake_upstream):
    r = client.embeddings.create(model="m", input="x", dimensions=EMBED_DIM, encoding_format="float")
    assert len(r.data[0].embedding) == EMBED_DIM
    before = len(legacy_requests(fake_upstream))
    with pytest.raises(openai.BadRequestError) as e:
        client.embeddings.create(model="m", input="x", dimensions=4)
    assert e.value.param == "dimensions"
    assert str(EMBED_DIM) in e.value.body["message"]
    assert "dimensions" not in sent_upstream(fake_upstream, before)[0]["body"]


@pytest.mark.parametrize("body,param", [
    ({"model": "m"}, "input"),
    ({"input": ""}, "input"),
    ({"input": []}, "input"),
    ({"input": ["a", 1]}, "input"),
    ({"input": [1.5]}, "input"),
    ({"input": {"text": "a"}}, "input"),
    ({"input": "a", "encoding_format": "int8"}, "encoding_format"),
    ({"input": "a", "dimensions": 0}, "dimensions"),
])
def test_embeddings_bad_request_is_400_with_param_before_the_upstream(warden, fake_upstream, body, param):
    before = len(legacy_requests(fake_upstream))
    st, err = error_of(post(warden, "/v1/embeddings", body))
    assert st == 400
    assert err["type"] == "invalid_request_error" and err["param"] == param, err
    assert sent_upstream(fake_upstream, before) == []


@pytest.mark.parametrize("scenario,status", [("http400", 400), ("http500", 502), ("http503", 503), ("short", 502)])
def test_embeddings_upstream_errors(warden, scenario, status):
    st, err = error_of(post(warden, "/v1/embeddings", {"input": ["scenario:" + scenario, "x"]}))
    assert st == status, err
    assert err["message"] and set(err) == {"message", "type", "param", "code"}


def test_the_routes_have_the_servers_doors(fake_upstream, tmp_path):
    """The key, Content-Type and Host checks of every route apply to these two as well."""
    w = warden_on_fake(fake_upstream, "--api-key", "sekrit", home=tmp_path)
    try:
        for path, body in (("/v1/completions", {"prompt": "x"}), ("/v1/embeddings", {"input": "x"})):
            st, err = error_of(post(w, path, body))
            assert st == 401 and err["type"] == "authentication_error"
            st, _, _ = request(w.port, "POST", path, body, headers={"Authorization": "Bearer sekrit"})
            assert st == 200
            st, _, _ = request(w.port, "POST", path, json.dumps(body).encode(),
                               headers={"Authorization": "Bearer sekrit", "Content-Type": "text/plain"})
            assert st == 415
            st, _, _ = request(w.port, "POST", path, body,
                               headers={"Authorization": "Bearer sekrit", "Host": "evil.example"})
            assert st == 403
    finally:
        w.stop()


# --- the upstream is down -------------------------------------------------------------------

def test_upstream_down_is_503_in_the_envelope(tmp_path):
    fake = Proc([sys.executable, str(ROOT / "tests" / "fake" / "fake_upstream.py"), "0"])
    port = int(fake.wait_for(r"PORT (\d+)", timeout=20).group(1))
    w = warden_on_url(f"http://127.0.0.1:{port}/v1", home=tmp_path)
    try:
        st, _, _ = post(w, "/v1/completions", {"prompt": "x"})
        assert st == 200
        fake.stop()
        for path, body in (("/v1/completions", {"prompt": "x"}),
                           ("/v1/completions", {"prompt": "x", "stream": True}),
                           ("/v1/embeddings", {"input": "x"})):
            st, err = error_of(post(w, path, body))
            assert st == 503, (path, err)
            assert err["type"] == "api_error" and err["message"]
        c = openai.OpenAI(base_url=w.base + "/v1", api_key="unused", max_retries=0, timeout=30)
        with pytest.raises(openai.InternalServerError) as e:
            c.embeddings.create(model="m", input="x")
        assert e.value.status_code == 503
    finally:
        fake.stop()
        w.stop()


# --- warden's own llama-server: the embeddings child ------------------------------------------

def cmdline(pid):
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        return f.read().split(b"\0")


def test_own_llama_server_starts_an_embeddings_child_on_first_use(tmp_path):
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF" + b"\0" * 60)
    w = Warden("--llama-server", str(ROOT / "tests" / "fake" / "fake_llama_server.py"), "--model", str(model),
               env_extra={"WARDEN_HOME": str(tmp_path)}, timeout=60)
    try:
        main_pid = w.llama_pid()
        assert "for embeddings" not in w.log()  # nothing started before it is needed
        st, _, body = post(w, "/v1/completions", {"prompt": "x"})
        assert st == 200 and json.loads(body)["choices"][0]["text"] == COMPLETION_TEXT
        assert "for embeddings" not in w.log()

        c = openai.OpenAI(base_url=w.base + "/v1", api_key="unused", max_retries=0, timeout=60)
        r = c.embeddings.create(model="m", input=["one", "two"])
        assert [list(d.embedding) for d in r.data] == [fake_embedding("one"), fake_embedding("two")]
        assert r.model == "model"  # the served id (from the file name), not the fake's own name
        log = w.log()
        pids = [int(p) for p in re.findall(r"starting llama-server for embeddings \(pid (\d+)\)", log)]
        assert len(pids) == 1 and pids[0] != main_pid, log
        url = re.search(r"llama-server for embeddings ready at (http://127\.0\.0\.1:\d+)", log).group(1)
        assert url != w.llama_url()
        argv = cmdline(pids[0])
        assert b"--embeddings" in argv and argv[argv.index(b"--pooling") + 1] == b"mean"
        assert b"--embeddings" not in cmdline(main_pid)
        # the child has its own key requirement, like the first one
        st, _, _ = request(int(url.rsplit(":", 1)[1]), "GET", "/v1/models")
        assert st == 401
        # a second request reuses the child
        c.embeddings.create(model="m", input="three")
        assert len(re.findall(r"starting llama-server for embeddings", w.log())) == 1
    finally:
        assert w.stop() == 0
    deadline = time.time() + 10
    while time.time() < deadline and (pid_alive(main_pid) or pid_alive(pids[0])):
        time.sleep(0.1)
    assert not pid_alive(main_pid) and not pid_alive(pids[0])
