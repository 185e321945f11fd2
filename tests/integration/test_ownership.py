"""Ownership with named API keys (issue 22, part 3), against the scripted fake upstream with the
real tools in the real sandbox.

One warden started with --api-keys-file: alice and bob are `user` keys, ops is an `admin` key. A
user key sees, answers and cancels only what it created (pending calls, remembered rules, audit
rows, stored responses, background runs, session workspaces); another key's id is answered exactly
like an unknown one (404); the admin sees and acts on everything. No key or an unknown key is 401
in the error envelope of the route's API; start-up refuses a keys file others may read and a
repeated name."""
import http.client
import json
import os
import secrets
import subprocess
import time

import openai
import pytest

from conftest import WARDEN_BIN, request, script, warden_on_fake, openai_client
from test_tool_loop import DECLINED, Stream, call

KEYS = {who: f"{who}-{secrets.token_hex(16)}" for who in ("alice", "bob", "ops")}
ROLES = {"alice": "user", "bob": "user", "ops": "admin"}
MODEL = "gpt-5"


def keys_text(keys=KEYS, roles=ROLES):
    lines = ["# name role key"] + [f"{who} {roles[who]} {key}" for who, key in keys.items()]
    return "\n".join(lines) + "\n"


def write_keys(path, text, mode=0o600):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.chmod(path, mode)  # whatever the umask
    return str(path)


@pytest.fixture(scope="module")
def owned(fake_upstream, tmp_path_factory):
    """The module's warden, with the three named keys."""
    d = tmp_path_factory.mktemp("owned")
    keys_file = write_keys(d / "keys", keys_text())
    w = warden_on_fake(fake_upstream, "--api-keys-file", keys_file, "--sse-ping-interval", "300", home=d / "home")
    yield w
    w.stop()


def auth(who):
    return {"Authorization": f"Bearer {KEYS[who]}"}


def api(w, who, method, path, body=None):
    """(status, parsed JSON body) of one request with `who`'s key."""
    st, _, data = request(w.port, method, path, body, headers=auth(who))
    return st, json.loads(data) if data else None


class KeyedStream(Stream):
    """A streaming chat request sent with `who`'s key, read frame by frame (test_tool_loop.Stream)."""

    def __init__(self, port, body, who, timeout=30):  # noqa: super().__init__ sends without a key
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        self.conn.request("POST", "/v1/chat/completions", body=json.dumps(body),
                          headers={"Content-Type": "application/json", **auth(who)})
        self.resp = self.conn.getresponse()
        self.status = self.resp.status
        self.frames = []
        self.done = False


def chat(name, **kw):
    body = {"messages": [{"role": "user", "content": f"scenario:script:{name}"}], "stream": True, "enable_tools": True}
    body.update(kw)
    return body


def terminal(fake, command, final="done"):
    return script(fake, [{"tool_calls": [call("terminal", {"command": command})]}, {"content": final}])


def inbox(w, who, query=""):
    st, body = api(w, who, "GET", "/api/inference/approvals" + query)
    assert st == 200, body
    return {a["approval_id"]: a for a in body["data"]}


def confirm(w, who, approval_id, decision):
    return api(w, who, "POST", "/api/inference/tool-confirm", {"approval_id": approval_id, "decision": decision})


def parked(w, fake, who, session, command="echo hi", **kw):
    """`who`'s streaming request whose terminal call waits for approval (mode ask): the stream and
    its approval id."""
    s = KeyedStream(w.port, chat(terminal(fake, command), session_id=session, permission_mode="ask", **kw), who)
    assert s.status == 200
    start = s.until_type("tool_start")
    assert start["awaiting_confirmation"] and start["approval_id"]
    return s, start["approval_id"]


# --- pending calls: list, answer, cancel --------------------------------------------------------

def test_another_users_pending_call_cannot_be_listed_answered_or_cancelled(owned, fake_upstream):
    s, aid = parked(owned, fake_upstream, "alice", "s1", cancel_id="alice-run-1")
    try:
        assert aid in inbox(owned, "alice") and inbox(owned, "alice")[aid]["owner"] == "alice"
        assert aid not in inbox(owned, "bob") and aid not in inbox(owned, "bob", "?session_id=s1")
        unknown = confirm(owned, "bob", "no-such-approval-id", "allow")
        assert unknown[0] == 404
        for decision in ("allow", "deny", "allow_session", "allow_always"):
            assert confirm(owned, "bob", aid, decision) == unknown, decision  # exactly as unknown
        for body in ({"session_id": "s1"}, {"cancel_id": "alice-run-1"}):
            assert api(owned, "bob", "POST", "/api/inference/cancel", body) == (200, {"cancelled": 0}), body
        assert api(owned, "bob", "GET", "/api/permissions/rules")[1]["data"] == []  # bob's answers made no rule
        # still waiting, and the admin sees it and answers it
        assert aid in inbox(owned, "alice")
        assert inbox(owned, "ops")[aid]["owner"] == "alice"
        assert confirm(owned, "ops", aid, "allow") == (200, {"resolved": True})
        assert s.until_type("tool_end")["result"] == "hi\n"
        s.rest()
    finally:
        s.close()
    rows = [r for r in api(owned, "alice", "GET", "/api/audit?session_id=s1")[1]["data"] if r["approval_id"] == aid]
    assert [(r["owner"], r["decided_by"], r["allowed"]) for r in rows] == [("alice", "user", True)]
    assert all(r["owner"] == "bob" for r in api(owned, "bob", "GET", "/api/audit")[1]["data"])
    assert aid not in {r["approval_id"] for r in api(owned, "bob", "GET", "/api/audit")[1]["data"]}
    assert aid in {r["approval_id"] for r in api(owned, "ops", "GET", "/api/audit?session_id=s1")[1]["data"]}
    # the terminal's `warden audit`: the owner filter, and the owner before the session
    cli = [WARDEN_BIN, "audit", "--home", str(owned.home), "--session", "s1"]
    mine = subprocess.run(cli + ["--owner", "alice", "--json"], capture_output=True, text=True, timeout=60)
    assert mine.returncode == 0, mine.stderr
    assert aid in {json.loads(line)["approval_id"] for line in mine.stdout.splitlines()}
    assert {json.loads(line)["owner"] for line in mine.stdout.splitlines()} == {"alice"}
    theirs = subprocess.run(cli + ["--owner", "bob", "--json"], capture_output=True, text=True, timeout=60)
    assert theirs.returncode == 0 and aid not in theirs.stdout, theirs.stdout
    text = subprocess.run(cli + ["--owner", "alice"], capture_output=True, text=True, timeout=60)
    assert text.returncode == 0 and "  alice/s1  terminal  ran" in text.stdout, text.stdout
    chain = subprocess.run([WARDEN_BIN, "audit", "verify", "--home", str(owned.home)], capture_output=True, text=True, timeout=60)
    assert chain.returncode == 0 and chain.stdout.startswith("ok: "), chain.stdout  # the chain covers owners too


def test_the_owner_and_the_admin_can_cancel(owned, fake_upstream):
    for canceller, body in (("alice", {"session_id": "s-cancel"}), ("ops", {"cancel_id": "alice-run-2"})):
        s, aid = parked(owned, fake_upstream, "alice", "s-cancel", cancel_id="alice-run-2")
        try:
            assert api(owned, canceller, "POST", "/api/inference/cancel", body) == (200, {"cancelled": 1})
            assert s.until_type("tool_end")["result"] == DECLINED
            s.rest()
        finally:
            s.close()


def test_the_inbox_stream_carries_only_the_callers_questions(owned, fake_upstream):
    conns = {}
    try:
        for who in ("bob", "ops"):
            c = http.client.HTTPConnection("127.0.0.1", owned.port, timeout=30)
            c.request("GET", "/api/inference/approvals/stream", headers=auth(who))
            r = c.getresponse()
            assert r.status == 200
            conns[who] = (c, r)
        s, aid = parked(owned, fake_upstream, "alice", "s-stream")
        # ops hears of alice's question; then bob's own question reaches bob's stream, and alice's
        # never came before it
        line = b""
        while aid.encode() not in line:
            line = conns["ops"][1].readline()
        s2, bid = parked(owned, fake_upstream, "bob", "s-stream")
        seen = b""
        while bid.encode() not in seen:
            seen += conns["bob"][1].readline()
        assert aid.encode() not in seen
        for stream, approval_id, who in ((s, aid, "alice"), (s2, bid, "bob")):
            assert confirm(owned, who, approval_id, "deny")[0] == 200
            stream.rest()
            stream.close()
    finally:
        for c, _ in conns.values():
            c.close()


# --- remembered rules ------------------------------------------------------------------------------

def test_rules_belong_to_their_owner(owned, fake_upstream):
    command = "echo owned-rule"
    s, aid = parked(owned, fake_upstream, "alice", "s-rules", command)
    st, body = confirm(owned, "alice", aid, "allow_session")
    assert st == 200 and body["rule"]["owner"] == "alice"
    rule_id = body["rule"]["id"]
    s.rest()
    s.close()
    assert [r["id"] for r in api(owned, "alice", "GET", "/api/permissions/rules")[1]["data"]] == [rule_id]
    assert rule_id not in [r["id"] for r in api(owned, "bob", "GET", "/api/permissions/rules")[1]["data"]]
    assert {r["id"]: r["owner"] for r in api(owned, "ops", "GET", "/api/permissions/rules")[1]["data"]}[rule_id] == "alice"
    # alice's rule does not cover bob's identical call in his own session of the same name
    s, bid = parked(owned, fake_upstream, "bob", "s-rules", command)
    assert confirm(owned, "bob", bid, "deny")[0] == 200
    s.rest()
    s.close()
    unknown = api(owned, "bob", "DELETE", "/api/permissions/rules/rule_nonexistent")
    assert unknown[0] == 404
    assert api(owned, "bob", "DELETE", f"/api/permissions/rules/{rule_id}") == unknown
    assert api(owned, "ops", "DELETE", f"/api/permissions/rules/{rule_id}") == (200, {"deleted": True, "id": rule_id})
    assert api(owned, "alice", "GET", "/api/permissions/rules")[1]["data"] == []


# --- sessions: the same session id, two owners, two workspaces ----------------------------------

def test_the_same_session_id_is_two_sessions_with_two_workspaces(owned, fake_upstream):
    write = "open('mine.txt', 'w').write('alice was here'); print('written')"
    look = "import os; print(os.path.exists('mine.txt'))"
    for who, code, expected in (("alice", write, "written\n"), ("bob", look, "False\n"), ("alice", look, "True\n")):
        name = script(fake_upstream, [{"tool_calls": [call("python", {"code": code})]}, {"content": "done"}])
        s = KeyedStream(owned.port, chat(name, session_id="shared", permission_mode="off"), who)
        assert s.until_type("tool_end")["result"] == expected, who
        s.rest()
        s.close()
    assert (owned.workspaces / ".owners" / "alice" / "shared" / "mine.txt").is_file()
    assert not (owned.workspaces / "shared").exists()  # the single user's place stays unused


# --- stored responses and background runs -----------------------------------------------------------

def client_of(w, who):
    return openai_client(w, api_key=KEYS[who])


def test_another_users_stored_response_is_not_found(owned, fake_upstream):
    name = script(fake_upstream, [{"content": "Alice's secret answer."}])
    r = client_of(owned, "alice").responses.create(model=MODEL, input=f"scenario:script:{name}")
    assert r.output_text == "Alice's secret answer."
    bob = client_of(owned, "bob")
    with pytest.raises(openai.NotFoundError):
        bob.responses.retrieve(r.id)
    with pytest.raises(openai.NotFoundError):
        bob.responses.input_items.list(r.id)
    with pytest.raises(openai.NotFoundError):
        bob.responses.create(model=MODEL, previous_response_id=r.id, input="what did you tell alice?")
    for method, path in (("DELETE", f"/v1/responses/{r.id}"), ("POST", f"/v1/responses/{r.id}/cancel"),
                         ("GET", f"/v1/responses/{r.id}?stream=true")):
        st, body = api(owned, "bob", method, path)
        assert st == 404 and body["error"]["code"] == "not_found", (method, path, body)
    assert client_of(owned, "ops").responses.retrieve(r.id).output_text == "Alice's secret answer."
    assert client_of(owned, "alice").responses.retrieve(r.id).output_text == "Alice's secret answer."


def wait_ask(client, rid):
    deadline = time.time() + 30
    while time.time() < deadline:
        ask = next((o for o in client.responses.retrieve(rid).output if o.type == "mcp_approval_request"), None)
        if ask is not None:
            return ask
        time.sleep(0.05)
    raise AssertionError("the background run never asked")


def test_another_users_background_run_cannot_be_answered_or_cancelled(owned, fake_upstream):
    alice = client_of(owned, "alice")
    code = "print('BG-' + 'RAN')"
    name = script(fake_upstream, [{"tool_calls": [{"name": "python", "arguments": json.dumps({"code": code}),
                                                   "id": "call_own"}], "finish": "tool_calls"},
                                  {"content": "never"}])
    r = alice.responses.create(model=MODEL, input=f"scenario:script:{name}", background=True,
                               extra_body={"enable_tools": True, "enabled_tools": ["python"], "permission_mode": "ask"})
    ask = wait_ask(alice, r.id)
    bob = client_of(owned, "bob")
    answer = [{"type": "mcp_approval_response", "approval_request_id": ask.id, "approve": True}]
    with pytest.raises(openai.NotFoundError):
        bob.responses.create(model=MODEL, previous_response_id=r.id, input=answer)
    with pytest.raises(openai.NotFoundError):
        bob.responses.cancel(r.id)
    assert api(owned, "bob", "POST", "/api/inference/cancel", {"cancel_id": r.id}) == (200, {"cancelled": 0})
    assert ask.id[len("mcpr_"):] not in inbox(owned, "bob")
    assert alice.responses.retrieve(r.id).status == "in_progress"  # untouched
    assert inbox(owned, "ops")[ask.id[len("mcpr_"):]]["owner"] == "alice"
    done = client_of(owned, "ops").responses.cancel(r.id)
    assert done.status == "cancelled"
    assert all("BG-RAN" not in (o.output or "") for o in done.output if o.type == "mcp_call")


def test_an_unchained_approval_answer_finds_only_the_callers_own_parked_turn(owned, fake_upstream):
    """An mcp_approval_response without previous_response_id is resolved by its approval_request_id
    (issue 24, the Agents SDK resends the history), but only among the caller's own responses:
    another key's id, or any other word of the parked turn, gets the same 400 as a made-up id, and
    the message names no response (from the breaker: this once let bob probe alice's turns)."""
    alice = client_of(owned, "alice")
    name = script(fake_upstream, [{"tool_calls": [{"name": "python", "arguments": json.dumps({"code": "print('ALICE')"}),
                                                   "id": "call_unch"}], "finish": "tool_calls"},
                                  {"content": "Alice done."}])
    r = alice.responses.create(model=MODEL, input=f"scenario:script:{name}",
                               extra_body={"enable_tools": True, "enabled_tools": ["python"], "permission_mode": "ask",
                                           "approval_format": "mcp", "session_id": "alice-private-sess"})
    ask = next(o for o in r.output if o.type == "mcp_approval_request")
    answers = {}
    for probe in (ask.id, "python", "call_unch", "ask", "alice-private-sess", "mcpr_made_up"):
        st, body = api(owned, "bob", "POST", "/v1/responses", {
            "model": MODEL, "input": [{"type": "mcp_approval_response", "approval_request_id": probe, "approve": True}]})
        answers[probe] = (st, body["error"]["message"])
        assert r.id not in body["error"]["message"], body
    assert len(set(answers.values())) == 1 and answers[ask.id][0] == 400, answers
    done = alice.responses.create(model=MODEL, input=[{"type": "mcp_approval_response", "approval_request_id": ask.id,
                                                       "approve": True}])
    assert done.output_text == "Alice done." and done.previous_response_id == r.id
    assert any("ALICE" in (o.output or "") for o in done.output if o.type == "mcp_call")


# --- who gets in ------------------------------------------------------------------------------------

@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer not-a-key-of-the-file-000"},
                                     {"x-api-key": "not-a-key-of-the-file-000"}])
def test_no_key_or_an_unknown_key_is_401_in_the_surfaces_envelope(owned, headers):
    body = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 5}
    for path in ("/v1/chat/completions", "/api/inference/tool-confirm", "/v1/responses"):
        st, _, data = request(owned.port, "POST", path, body, headers=headers)
        assert st == 401 and json.loads(data)["error"]["code"] == "invalid_api_key", (path, data)
    st, _, data = request(owned.port, "GET", "/api/audit", headers=headers)
    assert st == 401 and json.loads(data)["error"]["type"] == "authentication_error"
    st, _, data = request(owned.port, "POST", "/v1/messages", body, headers=headers)
    err = json.loads(data)
    assert st == 401 and err["type"] == "error" and err["error"]["type"] == "authentication_error", data


def test_each_named_key_gets_in_by_bearer_or_x_api_key(owned):
    for who in KEYS:
        for headers in (auth(who), {"x-api-key": KEYS[who]}):
            assert request(owned.port, "GET", "/v1/models", headers=headers)[0] == 200, (who, headers)


# --- the sandbox keeps users apart: a user key cannot leave it --------------------------------------------

@pytest.mark.parametrize("path,extra", [
    ("/v1/chat/completions", {"permission_mode": "full", "stream": True}),
    ("/v1/chat/completions", {"bypass_permissions": True, "stream": True}),
    ("/v1/messages", {"permission_mode": "full", "stream": True, "max_tokens": 5}),
    ("/v1/responses", {"permission_mode": "full"}),
])
def test_a_user_key_cannot_bypass_the_sandbox(owned, path, extra):
    body = {"model": MODEL, "enable_tools": True, **extra}
    if path == "/v1/responses":
        body["input"] = "hi"
    else:
        body["messages"] = [{"role": "user", "content": "hi"}]
    st, _, data = request(owned.port, "POST", path, body, headers=auth("alice"))
    err = json.loads(data)["error"]
    assert st == 403 and "a 'user' API key may not" in err["message"], (path, data)
    if path != "/v1/messages":  # the OpenAI envelope names the field and the code
        assert err["param"] == "bypass_permissions" and err["code"] == "permission_mode_not_allowed", data


def test_an_admin_key_may_bypass_up_to_the_ceiling(owned, fake_upstream):
    s = KeyedStream(owned.port, chat(terminal(fake_upstream, "echo outside"), session_id="ops-full",
                                     permission_mode="full"), "ops")
    try:
        assert s.status == 200
        assert s.until_type("tool_end")["result"] == "outside\n"
        s.rest()
    finally:
        s.close()


# --- start-up ------------------------------------------------------------------------------------------

def serve_refused(fake, tmp_path, *args):
    """warden serve with ARGS must refuse to start: its stderr."""
    env = {**os.environ, "WARDEN_HOME": str(tmp_path / "home")}
    env.pop("WARDEN_API_KEY", None)
    r = subprocess.run([WARDEN_BIN, "serve", "--port", "0", "--upstream", fake.url, *args], env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "listening" not in r.stdout
    return r.stderr


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604])
def test_start_up_refuses_a_keys_file_others_may_read(fake_upstream, tmp_path, mode):
    err = serve_refused(fake_upstream, tmp_path, "--api-keys-file", write_keys(tmp_path / "keys", keys_text(), mode))
    assert "may be read or written by other users" in err and "chmod 600" in err, err
    assert all(key not in err for key in KEYS.values())


def test_start_up_refuses_a_repeated_name_and_names_the_line(fake_upstream, tmp_path):
    text = keys_text() + f"alice admin other-{secrets.token_hex(16)}\n"
    err = serve_refused(fake_upstream, tmp_path, "--api-keys-file", write_keys(tmp_path / "keys", text))
    assert "line 5: the name 'alice' is used twice" in err, err


@pytest.mark.parametrize("line,says", [("carol root 0123456789abcdef0123", "must be 'user' or 'admin'"),
                                       ("carol user short", "must be 16 to 512"),
                                       ("carol.x user 0123456789abcdef0123", "the name must be"),
                                       ("carol user", "expected three fields")])
def test_start_up_names_each_bad_entry(fake_upstream, tmp_path, line, says):
    err = serve_refused(fake_upstream, tmp_path, "--api-keys-file", write_keys(tmp_path / "keys", line + "\n"))
    assert "line 1" in err and says in err, err


def test_api_key_and_a_keys_file_are_exclusive(fake_upstream, tmp_path):
    err = serve_refused(fake_upstream, tmp_path, "--api-keys-file", write_keys(tmp_path / "keys", keys_text()),
                        "--api-key", "single-user-key-0000")
    assert "exclusive" in err, err
