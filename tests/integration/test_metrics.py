"""GET /metrics (issue 28 §4, first part): the Prometheus text format, read by the official
prometheus_client parser, with the request counters and duration histograms moving as a scripted
run says, the live gauges, ids folded out of the route label, and the API key guarding it."""
import json
import time

import pytest
from prometheus_client.parser import text_string_to_metric_families

from conftest import on_fake, request, warden_on_fake

WARDEN = on_fake(timeout=30, check_exit=True)
CHAT = {"model": "anything", "messages": [{"role": "user", "content": "hi"}]}


def scrape(port, headers=None):
    st, hdrs, body = request(port, "GET", "/metrics", headers=headers)
    assert st == 200, body
    assert hdrs["content-type"].startswith("text/plain; version=0.0.4")
    return {f.name: f for f in text_string_to_metric_families(body.decode())}


def value(families, name, sample, **labels):
    for s in families[name].samples:
        if s.name == sample and all(s.labels.get(k) == v for k, v in labels.items()):
            return s.value
    return 0.0


def test_counters_and_histograms_move_with_a_scripted_run(warden):
    before = scrape(warden.port)
    route = "/v1/chat/completions"
    n200 = value(before, "warden_http_requests", "warden_http_requests_total", route=route, status="200") if \
        "warden_http_requests" in before else 0.0
    for stream in (False, True, False):
        st, _, _ = request(warden.port, "POST", "/v1/chat/completions", dict(CHAT, stream=stream))
        assert st == 200
    st, _, _ = request(warden.port, "POST", "/v1/chat/completions", {"model": "x", "messages": []})
    assert st == 400
    st, _, _ = request(warden.port, "GET", "/v1/responses/resp_0123456789abcdef")
    assert st == 404
    st, _, _ = request(warden.port, "GET", "/no/such/route/at/all")
    assert st == 404
    # A request is counted when its handler returns, which can be just after its client has read
    # the answer: scrape until the last of them is in.
    deadline = time.time() + 10
    while True:
        after = scrape(warden.port)
        counted = (value(after, "warden_http_requests", "warden_http_requests_total", route="other", status="404") >= 2
                   and value(after, "warden_http_requests", "warden_http_requests_total", route=route, status="400") >= 1
                   and value(after, "warden_http_requests", "warden_http_requests_total", route=route, method="POST",
                             status="200") >= n200 + 3)
        if counted or time.time() > deadline:
            break
        time.sleep(0.05)
    req = after["warden_http_requests"]
    assert req.type == "counter"
    assert value(after, "warden_http_requests", "warden_http_requests_total", route=route, method="POST",
                 status="200") == n200 + 3
    assert value(after, "warden_http_requests", "warden_http_requests_total", route=route, status="400") >= 1
    assert value(after, "warden_http_requests", "warden_http_requests_total", route="other", status="404") >= 2
    labels = {s.labels["route"] for s in req.samples}
    assert not any("0123456789" in r or "no/such" in r for r in labels), labels  # ids never become labels
    dur = after["warden_http_request_duration_seconds"]
    assert dur.type == "histogram"
    count = value(after, "warden_http_request_duration_seconds", "warden_http_request_duration_seconds_count", route=route)
    inf = value(after, "warden_http_request_duration_seconds", "warden_http_request_duration_seconds_bucket", route=route,
                le="+Inf")
    assert count == inf >= 4
    # the live gauges: nothing waits now; the upstream is up; this scrape is the one handler running
    assert value(after, "warden_approvals_pending", "warden_approvals_pending") == 0
    assert value(after, "warden_engine_up", "warden_engine_up", engine="chat") == 1
    assert value(after, "warden_active_handlers", "warden_active_handlers") >= 1


def test_the_api_key_guards_the_metrics(fake_upstream, tmp_path):
    keys = tmp_path / "keys"
    keys.write_text("sk-metrics-test-key-0123456789\n")
    w = warden_on_fake(fake_upstream, "--api-key-file", str(keys), timeout=30)
    try:
        st, _, body = request(w.port, "GET", "/metrics")
        assert st == 401, body
        assert "error" in json.loads(body)
        fams = scrape(w.port, {"Authorization": "Bearer sk-metrics-test-key-0123456789"})
        assert "warden_engine_up" in fams
    finally:
        w.stop()


def test_a_metrics_key_is_the_one_key_of_the_metrics(fake_upstream, tmp_path):
    keys = tmp_path / "keys"
    keys.write_text("sk-api-key-for-models-0123456789\n")
    w = warden_on_fake(fake_upstream, "--api-key-file", str(keys), "--metrics-key", "mk-scraper-0123456789", timeout=30)
    try:
        assert request(w.port, "GET", "/metrics")[0] == 401
        st, _, body = request(w.port, "GET", "/metrics", headers={"Authorization": "Bearer sk-api-key-for-models-0123456789"})
        assert st == 401 and "--metrics-key" in json.loads(body)["error"]["message"]
        assert "warden_engine_up" in scrape(w.port, {"Authorization": "Bearer mk-scraper-0123456789"})
        # the scraper's key calls nothing else
        st, _, _ = request(w.port, "POST", "/v1/chat/completions", CHAT,
                           headers={"Authorization": "Bearer mk-scraper-0123456789"})
        assert st == 401
        assert "mk-scraper" not in " ".join(open(f"/proc/{w.p.pid}/cmdline").read().split("\0"))
    finally:
        w.stop()


def test_first_token_tokens_tool_calls_approvals_and_the_sandbox_are_measured(warden, fake_upstream):
    from conftest import script
    from test_tool_loop import Stream, call, confirm

    before = scrape(warden.port)
    ttft0 = value(before, "warden_time_to_first_token_seconds", "warden_time_to_first_token_seconds_count") \
        if "warden_time_to_first_token_seconds" in before else 0
    tokens0 = value(before, "warden_tokens", "warden_tokens_total", kind="completion") if "warden_tokens" in before else 0
    for stream in (True, False):
        st, _, _ = request(warden.port, "POST", "/v1/chat/completions",
                           dict(CHAT, stream=stream, stream_options={"include_usage": True}) if stream else CHAT)
        assert st == 200
    # a tool call a person allows (python in the jail), then one a person denies
    name = script(fake_upstream, [{"tool_calls": [call("python", {"code": "print(6*7)"})]},
                                  {"tool_calls": [call("python", {"code": "print(1)"})]}, {"content": "done"}])
    s = Stream(warden.port, {"messages": [{"role": "user", "content": f"scenario:script:{name}"}], "stream": True,
                             "enable_tools": True, "enabled_tools": ["python"], "confirm_code_execution": True,
                             "session_id": "metrics-1"}, timeout=60)
    for decision in ("allow", "deny"):
        start = s.until_type("tool_start")
        assert start["awaiting_confirmation"], start
        time.sleep(0.2)  # an approval that takes a moment
        assert confirm(warden, start["approval_id"], decision)[0] == 200
        s.until_type("tool_end")
    s.rest()
    deadline = time.time() + 10
    while True:
        after = scrape(warden.port)
        calls = {tuple(sorted(x.labels.items())): x.value for x in after["warden_tool_calls"].samples} \
            if "warden_tool_calls" in after else {}
        if len(calls) >= 2 or time.time() > deadline:
            break
        time.sleep(0.1)
    assert after["warden_time_to_first_token_seconds"].type == "histogram"
    assert value(after, "warden_time_to_first_token_seconds", "warden_time_to_first_token_seconds_count") >= ttft0 + 3
    assert value(after, "warden_tokens", "warden_tokens_total", kind="completion") > tokens0
    assert value(after, "warden_tokens", "warden_tokens_total", kind="prompt") > 0
    ran = value(after, "warden_tool_calls", "warden_tool_calls_total", tool="python", decision="allowed", by="user", exit="0")
    refused = value(after, "warden_tool_calls", "warden_tool_calls_total", tool="python", decision="refused", by="user",
                    exit="none")
    assert ran >= 1 and refused >= 1, calls
    lat = value(after, "warden_approval_latency_seconds", "warden_approval_latency_seconds_count", answer="allowed")
    assert lat >= 1
    assert value(after, "warden_approval_latency_seconds", "warden_approval_latency_seconds_sum", answer="refused") >= 0.2
    starts = sum(value(after, "warden_sandbox_start_seconds", "warden_sandbox_start_seconds_count", warm=w)
                 for w in ("true", "false"))
    assert starts >= 1
