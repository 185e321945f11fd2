"""A pool of engines (issue 28 §2; engine/engine_pool.h) made of scripted fake upstreams, each its
own process: `--upstream` given twice, and an --upstreams-file. Shown: concurrent requests spread
over the engines (least outstanding), a session_id and a previous_response_id chain stay on one
engine, an engine answering 500 before its first byte is failed over (the client sees 200) and
ejected, then re-admitted once it answers again; a dead engine (its process gone) costs no request;
a 4xx is the request's own answer and is not retried; requests route by model; the counters on
/metrics move as that says. tests/e2e/test_pool_real.py does the same with real llama-servers."""
import concurrent.futures
import json
import os
import sys
import time

import pytest
from prometheus_client.parser import text_string_to_metric_families

from conftest import ROOT, WARDEN_BIN, Proc, request, warden_on_url


def start_fake():
    p = Proc([sys.executable, str(ROOT / "tests" / "fake" / "fake_upstream.py"), "0"])
    p.port = int(p.wait_for(r"PORT (\d+)", timeout=20).group(1))
    p.url = f"http://127.0.0.1:{p.port}/v1"
    return p


def chat_count(fake):
    _, _, body = request(fake.port, "GET", "/stats")
    return len(json.loads(body)["requests"])


def mode(fake, scenario):
    st, _, _ = request(fake.port, "POST", "/mode", {"chat": scenario})
    assert st == 200


def reset(*fakes):
    for f in fakes:
        mode(f, None)
        request(f.port, "POST", "/reset", {})


def engine_counts(port):
    """{(engine, outcome): value} of warden_engine_requests_total."""
    st, _, body = request(port, "GET", "/metrics")
    assert st == 200
    out = {}
    for fam in text_string_to_metric_families(body.decode()):
        if fam.name == "warden_engine_requests":
            for s in fam.samples:
                if s.name == "warden_engine_requests_total":
                    out[(s.labels["engine"], s.labels["outcome"])] = s.value
    return out


def chat(port, text="hi", stream=True, **extra):
    body = {"model": "fake-model", "messages": [{"role": "user", "content": text}], "stream": stream, **extra}
    st, _, data = request(port, "POST", "/v1/chat/completions", body)
    return st, data


def refused_start(home, *args):
    """`warden serve ARGS` that must refuse to start: exit 2; its stderr."""
    p = Proc([WARDEN_BIN, "serve", "--port", "0", *args], env=dict(os.environ, WARDEN_HOME=str(home)))
    assert p.p.wait(timeout=30) == 2, args
    time.sleep(0.3)  # the pump threads collect the last lines
    return p.log()


@pytest.fixture(scope="module")
def fakes():
    a, b = start_fake(), start_fake()
    yield a, b
    for f in (a, b):
        f.stop()


@pytest.fixture(scope="module")
def pool(fakes, tmp_path_factory):
    a, b = fakes
    w = warden_on_url(a.url, "--upstream", b.url, "--upstream-slots", "8", timeout=60)
    yield w
    w.stop()


def test_concurrent_requests_spread_over_the_engines(pool, fakes):
    a, b = fakes
    reset(a, b)
    with concurrent.futures.ThreadPoolExecutor(8) as ex:
        results = list(ex.map(lambda i: chat(pool.port, "scenario:stall"), range(8)))
    assert [st for st, _ in results] == [200] * 8
    assert all(d.rstrip().endswith(b"data: [DONE]") for _, d in results)
    na, nb = chat_count(a), chat_count(b)
    assert na + nb == 8 and abs(na - nb) <= 2, (na, nb)
    counts = engine_counts(pool.port)
    assert counts[("chat", "answered")] >= na and counts[("chat-2", "answered")] >= nb, counts


def test_a_session_and_a_response_chain_stay_on_one_engine(pool, fakes):
    a, b = fakes
    for session in ("alpha", "beta", "gamma"):
        reset(a, b)
        for _ in range(4):
            st, _ = chat(pool.port, session_id=session)
            assert st == 200
        assert sorted((chat_count(a), chat_count(b))) == [0, 4], session
    # Without a session, sequential requests alternate (ties go round robin).
    reset(a, b)
    for _ in range(4):
        assert chat(pool.port)[0] == 200
    assert (chat_count(a), chat_count(b)) == (2, 2)
    # A Responses chain: each previous_response_id goes where that response was made.
    reset(a, b)
    prev = None
    for i in range(4):
        body = {"model": "fake-model", "input": f"turn {i}", "store": True}
        if prev:
            body["previous_response_id"] = prev
        st, _, data = request(pool.port, "POST", "/v1/responses", body)
        assert st == 200, data
        prev = json.loads(data)["id"]
    assert sorted((chat_count(a), chat_count(b))) == [0, 4]


def test_a_500_before_the_first_byte_fails_over_then_the_engine_is_readmitted(pool, fakes):
    a, b = fakes
    reset(a, b)
    before = engine_counts(pool.port)
    mode(a, "http500")
    for i in range(6):
        st, data = chat(pool.port, stream=i % 2 == 0)
        assert st == 200, data  # the client never sees the 500
    after = engine_counts(pool.port)
    assert after[("chat", "failed_over")] - before[("chat", "failed_over")] >= 1
    assert after[("chat-2", "answered")] - before[("chat-2", "answered")] == 6
    # Healthy again: after its ejection time it takes requests again.
    mode(a, None)
    request(a.port, "POST", "/reset", {})
    deadline = time.time() + 40
    while time.time() < deadline and chat_count(a) == 0:
        assert chat(pool.port)[0] == 200
        time.sleep(0.2)
    assert chat_count(a) >= 1, "the engine was not re-admitted"
    assert engine_counts(pool.port)[("chat", "answered")] > after[("chat", "answered")]


@pytest.mark.parametrize("scenario,alone", [("http401_echo", 502), ("http429", 429)])
def test_an_engine_refusing_warden_s_key_or_rate_limiting_is_failed_over(pool, fakes, scenario, alone):
    """A 401 (the engine refuses the key warden sends: a wrong key_env) is the engine's fault, not
    the request's: failed over and ejected, like a 500; so is a 429. When every engine answers so,
    the client gets 502 / 429 (not a 400 blaming its request) and nobody is ejected."""
    a, b = fakes
    reset(a, b)
    before = engine_counts(pool.port)
    mode(a, scenario)
    try:
        for i in range(4):
            st, data = chat(pool.port, stream=i % 2 == 0)
            assert st == 200, data
        after = engine_counts(pool.port)
        assert after[("chat", "failed_over")] - before.get(("chat", "failed_over"), 0) >= 1, after
        assert after[("chat-2", "answered")] - before.get(("chat-2", "answered"), 0) == 4, after
        mode(b, scenario)
        st, data = chat(pool.port, stream=False)
        assert st == alone, data
        assert "model server" in json.loads(data)["error"]["message"], data
    finally:
        reset(a, b)
    deadline = time.time() + 40  # re-admitted after its ejection
    while time.time() < deadline and chat_count(a) == 0:
        assert chat(pool.port)[0] == 200
        time.sleep(0.2)
    assert chat_count(a) >= 1, "the engine was not re-admitted"


def test_a_4xx_is_the_requests_own_answer_and_is_not_retried(pool, fakes):
    a, b = fakes
    reset(a, b)
    st, data = chat(pool.port, "scenario:http400", stream=False)
    assert st == 400, data
    assert chat_count(a) + chat_count(b) == 1


def test_a_dead_engine_costs_no_request(fakes, tmp_path):
    a, _ = fakes
    c = start_fake()
    w = warden_on_url(a.url, "--upstream", c.url, timeout=60)
    try:
        reset(a)
        c.stop(sig=9)  # its process is gone: connections are refused
        for i in range(6):
            st, data = chat(w.port, stream=i % 2 == 0)
            assert st == 200, data
        assert chat_count(a) == 6
        assert engine_counts(w.port)[("chat-2", "failed_over")] >= 1
    finally:
        w.stop()


def test_an_upstreams_file_routes_by_model(fakes, tmp_path):
    a, b = fakes
    f = tmp_path / "engines.txt"
    f.write_text(f"# two models\n{a.url} model=alpha slots=2\n{b.url} model=beta slots=2\n")
    w = warden_on_url(a.url, "--upstreams-file", str(f), timeout=60)
    try:
        reset(a, b)
        for _ in range(3):
            st, _, data = request(w.port, "POST", "/v1/chat/completions",
                                  {"model": "beta", "messages": [{"role": "user", "content": "hi"}]})
            assert st == 200, data
        assert chat_count(b) == 3 and chat_count(a) == 0
        assert json.loads(request(b.port, "GET", "/stats")[2])["requests"][-1]["model"] == "beta"
        st, _, data = request(w.port, "POST", "/v1/messages",
                              {"model": "alpha", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]})
        assert st == 200, data
        assert chat_count(a) >= 1  # --upstream a (first listed model) and the file's alpha line
        listed = {m["id"] for m in json.loads(request(w.port, "GET", "/v1/models")[2])["data"]}
        assert {"alpha", "beta", "fake-model"} <= listed, listed
        # the queue in front of the pool: its slots are the engines' together (8 unknown → none)
        assert b"warden_engine_slots" not in request(w.port, "GET", "/metrics")[2]
    finally:
        w.stop()


def test_a_bad_upstreams_file_is_refused_naming_the_line(fakes, tmp_path):
    a, _ = fakes
    f = tmp_path / "engines.txt"
    f.write_text(f"{a.url} slots=many\n")
    assert "--upstreams-file line 1: slots must be 1 to 4096" in refused_start(tmp_path, "--upstream", a.url,
                                                                                "--upstreams-file", str(f))


def test_a_500_on_every_engine_is_the_requests_own_and_ejects_nobody(pool, fakes):
    a, b = fakes
    reset(a, b)
    before = engine_counts(pool.port)
    st, data = chat(pool.port, "scenario:http500", stream=False)
    assert st == 502, data
    after = engine_counts(pool.port)
    assert chat_count(a) + chat_count(b) == 2  # tried on both, at most max_attempts
    for e in ("chat", "chat-2"):
        assert after[(e, "failed")] - before[(e, "failed")] == 1, after
        assert after[(e, "failed_over")] == before[(e, "failed_over")]
    st, _, body = request(pool.port, "GET", "/metrics")
    assert 'warden_engine_up{engine="chat"} 1' in body.decode() and 'warden_engine_up{engine="chat-2"} 1' in body.decode()
    reset(a, b)
    assert chat(pool.port)[0] == 200


def test_a_hung_engine_is_failed_over_after_the_head_timeout(fakes):
    a, b = fakes
    # The keep-alive stays at its 15 s default: the timeout is checked on its own (it waited for
    # the next keep-alive before, 15 s for a 1 s timeout: a newcomer run).
    w = warden_on_url(a.url, "--upstream", b.url, "--engine-head-timeout", "1", timeout=60)
    try:
        reset(a, b)
        mode(a, "hang")  # accepts and never answers
        t0 = time.time()
        for _ in range(3):
            st, data = chat(w.port)
            assert st == 200 and data.rstrip().endswith(b"data: [DONE]"), data[-300:]
        assert time.time() - t0 < 12, "the 1 s head timeout waited for a 15 s keep-alive"
        counts = engine_counts(w.port)
        assert counts[("chat", "failed_over")] >= 1, counts
        assert counts[("chat-2", "answered")] >= 3, counts
    finally:
        mode(a, None)
        w.stop()


def test_bad_engine_lists_are_refused_before_serving(fakes, tmp_path):
    a, _ = fakes
    cases = [("# comments only\n", "names none"),
             (f"http://user:pw@127.0.0.1:{a.port}/v1\n", "user:password@"),
             (f"{a.url} key_env=WARDEN_API_KEY\n", "WARDEN_"),
             (f"{a.url}?x=1\n", "?query")]
    for text, want in cases:
        f = tmp_path / "engines.txt"
        f.write_text(text)
        log = refused_start(tmp_path, "--upstreams-file", str(f))
        assert want in log and "user:pw" not in log, (text, log)
    log = refused_start(tmp_path, "--upstream", a.url, "--upstream", "http://u:secretpw@h/v1")
    assert "user:password@" in log and "secretpw" not in log
