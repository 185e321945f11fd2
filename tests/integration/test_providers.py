"""External providers (issue 28 §3; api/control/provider_routes.h, api/wire/provider_fields.h): the
/api/providers registry and the seed's rules for a request routed to a provider, on each surface,
with the scripted fake upstream standing in for the hosted provider (it records each request's
model and Authorization header).

Shown: a saved provider's key is sealed (never in a response or in warden.db in clear) or read
from an environment variable; a request naming the provider reaches it with the external model
and the key; confirm_code_execution is ignored there (the same request for the local model is
refused); confirm_tool_calls with tools is refused with 400 param confirm_tool_calls "only
supported for local streaming tools"; n > 1 is refused; hosted tools pass through as sent;
run_tools_locally runs warden's own loop and gate against the provider; unknown, disabled or
keyless providers get clear errors; only an admin may change the registry."""
import json
import os
import sqlite3
import uuid

import pytest

from conftest import on_fake, request, script, warden_on_fake
from test_tool_loop import DECLINED, Stream, call, confirm

KEY = "sk-provider-test-" + "9" * 24
WARDEN = on_fake(timeout=60, check_exit=True, env={"TEST_PROVIDER_API_KEY": "sk-from-env-0123456789", "SECRET_SETTING": "not-a-key"})


def stats(fake):
    return json.loads(request(fake.port, "GET", "/stats")[2])


def last_request(fake):
    s = stats(fake)
    return s["requests"][-1], s["auth"][-1]


@pytest.fixture(scope="module")
def provider(warden, fake_upstream):
    """A saved provider pointing at the fake, with a sealed key."""
    pid = "fake-" + uuid.uuid4().hex[:6]
    st, _, body = request(warden.port, "POST", "/api/providers",
                          {"id": pid, "name": "The fake", "provider_type": "openai", "base_url": fake_upstream.url + "/",
                           "api_key": KEY, "models": ["remote-model"]})
    assert st == 201, body
    p = json.loads(body)
    assert p["api_key_set"] is True and KEY not in body.decode() and p["base_url"] == fake_upstream.url
    return pid


def test_the_registry_keeps_keys_sealed_and_checks_what_it_is_given(warden, provider):
    st, _, body = request(warden.port, "GET", "/api/providers")
    assert st == 200 and KEY not in body.decode()
    assert provider in [p["id"] for p in json.loads(body)["data"]]
    db = sqlite3.connect(str(warden.home / "warden.db"))
    rows = db.execute("SELECT config FROM providers").fetchall()
    db.close()
    assert rows and all(KEY not in r[0] for r in rows) and any('"api_key_sealed":"v1:' in r[0] for r in rows)
    bad = [({"provider_type": "openia", "base_url": "https://x/v1"}, "provider_type"),
           ({"provider_type": "openai", "base_url": "ftp://x/v1"}, "base_url"),
           ({"provider_type": "openai", "base_url": "https://user:pw@x/v1"}, "base_url"),
           ({"provider_type": "openai", "base_url": "https://x/v1", "api_key": "a", "api_key_env": "B"}, "api_key"),
           ({"provider_type": "openai", "base_url": "https://x/v1", "api_key_env": "1BAD"}, "api_key_env"),
           ({"provider_type": "openai", "base_url": "https://x/v1", "id": "bad id"}, "id"),
           ({"id": provider, "provider_type": "openai", "base_url": "https://x/v1"}, "id")]
    for b, param in bad:
        st, _, body = request(warden.port, "POST", "/api/providers", b)
        assert st == 400 and json.loads(body)["error"]["param"] == param, (b, body)
    st, _, body = request(warden.port, "GET", "/api/providers/nope")
    assert st == 404 and json.loads(body)["error"]["code"] == "provider_not_found"


def test_a_request_reaches_the_provider_with_its_model_and_key_on_every_surface(warden, fake_upstream, provider):
    st, _, body = request(warden.port, "POST", "/v1/chat/completions",
                          {"provider_id": provider, "external_model": "remote-model", "model": "ignored",
                           "messages": [{"role": "user", "content": "hi"}]})
    assert st == 200, body
    sent, auth = last_request(fake_upstream)
    assert sent["model"] == "remote-model" and auth == "Bearer " + KEY
    assert "provider_id" not in sent and "external_model" not in sent
    st, _, body = request(warden.port, "POST", "/v1/chat/completions",
                          {"provider_type": "openai", "model": "remote-model", "stream": True,
                           "messages": [{"role": "user", "content": "hi"}]})
    assert st == 200 and body.rstrip().endswith(b"data: [DONE]"), body[-200:]
    assert last_request(fake_upstream)[0]["model"] == "remote-model"
    st, _, body = request(warden.port, "POST", "/v1/messages",
                          {"provider_id": provider, "model": "remote-model", "max_tokens": 40,
                           "messages": [{"role": "user", "content": "hi"}]})
    assert st == 200 and json.loads(body)["type"] == "message", body
    assert last_request(fake_upstream) == (last_request(fake_upstream)[0], "Bearer " + KEY)
    assert last_request(fake_upstream)[0]["model"] == "remote-model"
    st, _, body = request(warden.port, "POST", "/v1/responses",
                          {"provider_id": provider, "model": "remote-model", "input": "hi", "store": False})
    assert st == 200 and json.loads(body)["status"] in ("completed", "incomplete"), body
    assert last_request(fake_upstream)[0]["model"] == "remote-model"


def test_confirm_code_execution_is_ignored_for_provider_tools(warden, fake_upstream, provider):
    """The seed's test: a non-streaming request asking for confirm_code_execution with tools is
    refused for the local model (nothing could ask a person), and goes through for a provider,
    whose hosted code runs in its own sandbox."""
    body = {"model": "remote-model", "messages": [{"role": "user", "content": "run"}], "enable_tools": True,
            "confirm_code_execution": True}
    st, _, raw = request(warden.port, "POST", "/v1/chat/completions", body)
    assert st == 400 and json.loads(raw)["error"]["param"] == "confirm_code_execution", raw
    st, _, raw = request(warden.port, "POST", "/v1/chat/completions", dict(body, provider_id=provider))
    assert st == 200, raw
    st, _, raw = request(warden.port, "POST", "/v1/messages",
                         {"provider_id": provider, "model": "remote-model", "max_tokens": 40, "enable_tools": True,
                          "confirm_code_execution": True, "messages": [{"role": "user", "content": "run"}]})
    assert st == 200, raw
    st, _, raw = request(warden.port, "POST", "/v1/responses",
                         {"provider_id": provider, "model": "remote-model", "input": "run", "store": False,
                          "enable_tools": True, "confirm_code_execution": True})
    assert st == 200, raw


TOOLS = [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object", "properties": {}}}}]


@pytest.mark.parametrize("surface", ["chat", "messages", "responses"])
def test_confirm_tool_calls_with_tools_is_refused_for_a_provider(warden, provider, surface):
    if surface == "chat":
        path, body = "/v1/chat/completions", {"model": "m", "messages": [{"role": "user", "content": "x"}],
                                              "tools": TOOLS, "stream": True}
    elif surface == "messages":
        path, body = "/v1/messages", {"model": "m", "max_tokens": 30, "messages": [{"role": "user", "content": "x"}],
                                      "tools": [{"name": "lookup", "input_schema": {"type": "object"}}], "stream": True}
    else:
        path, body = "/v1/responses", {"model": "m", "input": "x", "stream": True,
                                       "tools": [{"type": "function", "name": "lookup", "parameters": {"type": "object"}}]}
    st, _, raw = request(warden.port, "POST", path, dict(body, provider_id=provider, confirm_tool_calls=True))
    assert st == 400, raw
    err = json.loads(raw)["error"]
    assert "only supported for local streaming tools" in err["message"], err
    if surface != "messages":  # Anthropic's envelope has no param
        assert err["param"] == "confirm_tool_calls", err
    st, _, raw = request(warden.port, "POST", path, dict(body, provider_id=provider, confirm_tool_calls=True,
                                                         tools=[]) if surface != "messages" else
                         dict(body, provider_id=provider, confirm_tool_calls=True, tools=[]))
    assert st == 200, raw  # no tools: nothing to confirm


def test_n_above_one_and_bad_provider_fields_are_refused(warden, provider):
    msgs = [{"role": "user", "content": "x"}]
    cases = [({"provider_id": provider, "model": "m", "messages": msgs, "n": 2}, 400, "n"),
             ({"provider_id": "no-such", "model": "m", "messages": msgs}, 404, "provider_id"),
             ({"provider_type": "mistral", "model": "m", "messages": msgs}, 404, "provider_type"),
             ({"provider_type": "nonsense", "model": "m", "messages": msgs}, 400, "provider_type"),
             ({"external_model": "x", "model": "m", "messages": msgs}, 400, "external_model"),
             ({"provider_id": 7, "model": "m", "messages": msgs}, 400, "provider_id")]
    for body, status, param in cases:
        st, _, raw = request(warden.port, "POST", "/v1/chat/completions", body)
        assert st == status and json.loads(raw)["error"]["param"] == param, (body, raw)


def test_hosted_tools_pass_through_as_sent(warden, fake_upstream, provider):
    hosted = [{"type": "function", "function": {"name": "provider_search", "parameters": {"type": "object"}}}]
    st, _, raw = request(warden.port, "POST", "/v1/chat/completions",
                         {"provider_id": provider, "model": "remote-model", "tools": hosted,
                          "messages": [{"role": "user", "content": "x"}]})
    assert st == 200, raw
    assert last_request(fake_upstream)[0]["tools"] == hosted


def test_run_tools_locally_runs_wardens_loop_and_gate_against_the_provider(warden, fake_upstream, provider):
    name = script(fake_upstream, [{"tool_calls": [call("python", {"code": "print(1)"})]}, {"content": "done here"}])
    s = Stream(warden.port, {"provider_id": provider, "external_model": "remote-model", "run_tools_locally": True,
                             "stream": True, "enable_tools": True, "enabled_tools": ["python"],
                             "confirm_code_execution": True, "session_id": "prov-local",
                             "messages": [{"role": "user", "content": f"scenario:script:{name}"}]}, timeout=60)
    start = s.until_type("tool_start")
    assert start["awaiting_confirmation"], start  # warden's gate asks, as for the local model
    st, _ = confirm(warden, start["approval_id"], "deny")
    assert st == 200
    assert s.until_type("tool_end")["result"] == DECLINED
    s.rest()
    reqs = [r for r in stats(fake_upstream)["requests"]
            if any(m.get("content") == f"scenario:script:{name}" for m in r.get("messages", []))]
    assert len(reqs) == 2 and all(r["model"] == "remote-model" for r in reqs)
    assert any(m.get("role") == "tool" and DECLINED in str(m.get("content")) for m in reqs[1]["messages"])


def test_a_key_from_the_environment_and_a_disabled_provider(warden, fake_upstream):
    pid = "env-" + uuid.uuid4().hex[:6]
    st, _, body = request(warden.port, "POST", "/api/providers",
                          {"id": pid, "provider_type": "vllm", "base_url": fake_upstream.url,
                           "api_key_env": "TEST_PROVIDER_API_KEY"})
    assert st == 201 and json.loads(body)["api_key_env"] == "TEST_PROVIDER_API_KEY", body
    chat = {"provider_id": pid, "model": "remote-model", "messages": [{"role": "user", "content": "x"}]}
    st, _, raw = request(warden.port, "POST", "/v1/chat/completions", chat)
    assert st == 200, raw
    assert last_request(fake_upstream)[1] == "Bearer sk-from-env-0123456789"
    st, _, raw = request(warden.port, "PUT", f"/api/providers/{pid}", {"api_key_env": "NOT_SET_ANYWHERE_KEY"})
    assert st == 200, raw
    st, _, raw = request(warden.port, "POST", "/v1/chat/completions", chat)
    assert st == 400 and json.loads(raw)["error"]["code"] == "provider_key_missing", raw
    st, _, raw = request(warden.port, "PUT", f"/api/providers/{pid}", {"enabled": False})
    assert st == 200 and json.loads(raw)["enabled"] is False
    st, _, raw = request(warden.port, "POST", "/v1/chat/completions", chat)
    assert st == 400 and json.loads(raw)["error"]["code"] == "provider_disabled", raw
    st, _, raw = request(warden.port, "DELETE", f"/api/providers/{pid}")
    assert st == 200 and json.loads(raw) == {"id": pid, "deleted": True}
    st, _, raw = request(warden.port, "POST", "/v1/chat/completions", chat)
    assert st == 404


def test_only_an_admin_changes_the_registry(fake_upstream, tmp_path):
    keys = tmp_path / "keys"
    keys.write_text("ann user sk-ann-0123456789abcdef00\nops admin sk-ops-0123456789abcdef00\n")
    os.chmod(keys, 0o600)
    w = warden_on_fake(fake_upstream, "--api-keys-file", str(keys), timeout=60)
    try:
        ann = {"Authorization": "Bearer sk-ann-0123456789abcdef00"}
        ops = {"Authorization": "Bearer sk-ops-0123456789abcdef00"}
        p = {"id": "shared", "provider_type": "openai", "base_url": fake_upstream.url, "api_key": KEY}
        st, _, raw = request(w.port, "POST", "/api/providers", p, headers=ann)
        assert st == 403 and json.loads(raw)["error"]["code"] == "admin_only"
        st, _, raw = request(w.port, "POST", "/api/providers", p, headers=ops)
        assert st == 201, raw
        st, _, raw = request(w.port, "GET", "/api/providers", headers=ann)
        assert st == 200 and [x["id"] for x in json.loads(raw)["data"]] == ["shared"]
        st, _, raw = request(w.port, "POST", "/v1/chat/completions",
                             {"provider_id": "shared", "model": "remote-model",
                              "messages": [{"role": "user", "content": "x"}]}, headers=ann)
        assert st == 200, raw
        st, _, _ = request(w.port, "DELETE", "/api/providers/shared", headers=ann)
        assert st == 403
    finally:
        w.stop()


def test_odd_types_in_the_registry_are_400_not_500(warden):
    for body in ({"provider_type": "openai", "base_url": None}, {"provider_type": "openai", "base_url": 5},
                 {"provider_type": None, "base_url": "https://x/v1"}, {"id": 9, "provider_type": "openai",
                                                                       "base_url": "https://x/v1"},
                 {"provider_type": "openai", "base_url": "https://x/v1", "models": "m"},
                 {"provider_type": "openai", "base_url": "https://x/v1", "enabled": "yes"},
                 {"provider_type": "openai", "base_url": "https://x/v1", "api_key": 12}, [1, 2], "text"):
        st, _, raw = request(warden.port, "POST", "/api/providers", body)
        assert st == 400, (body, raw)


def test_keys_go_only_where_they_were_given_and_never_come_back(warden, fake_upstream):
    """api_key_env names only a key's variable (not PATH, HOME or warden's own settings); moving a
    provider with a key to another URL needs the key again; "api_key": "" drops it; and a
    provider that echoes the key in its refusal does not hand it to the client or the monitor."""
    for name in ("PATH", "SECRET_SETTING", "WARDEN_API_KEY", "HOME"):
        st, _, raw = request(warden.port, "POST", "/api/providers",
                             {"provider_type": "openai", "base_url": fake_upstream.url, "api_key_env": name})
        assert st == 400 and json.loads(raw)["error"]["param"] == "api_key_env", (name, raw)
    pid = "move-" + uuid.uuid4().hex[:6]
    st, _, raw = request(warden.port, "POST", "/api/providers",
                         {"id": pid, "provider_type": "openai", "base_url": fake_upstream.url, "api_key": KEY})
    assert st == 201, raw
    st, _, raw = request(warden.port, "PUT", f"/api/providers/{pid}", {"base_url": "http://127.0.0.1:9/v1"})
    assert st == 400 and json.loads(raw)["error"]["param"] == "api_key", raw
    st, _, raw = request(warden.port, "PUT", f"/api/providers/{pid}", {"name": "n" * 201})
    assert st == 400 and json.loads(raw)["error"]["param"] == "name", raw
    # the provider refuses the key and quotes it back
    request(warden.port, "DELETE", "/api/inference/monitor")
    st, _, raw = request(warden.port, "POST", "/v1/chat/completions",
                         {"provider_id": pid, "model": "remote-model",
                          "messages": [{"role": "user", "content": "scenario:http401_echo"}]})
    # the server's key refused is the server's problem (502), not the caller's request
    assert st == 502 and KEY not in raw.decode() and "[REDACTED]" in raw.decode(), raw
    st, _, mon = request(warden.port, "GET", "/api/inference/monitor")
    assert KEY not in mon.decode()
    st, _, raw = request(warden.port, "PUT", f"/api/providers/{pid}", {"api_key": ""})
    assert st == 200 and json.loads(raw)["api_key_set"] is False, raw
    st, _, raw = request(warden.port, "PUT", f"/api/providers/{pid}", {"base_url": fake_upstream.url + "/x"})
    assert st == 200, raw  # no key to carry elsewhere
