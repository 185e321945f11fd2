"""MCP servers through warden's tool loop (issue 26): the scripted server (tests/fake/mcp_server.py,
checked against the official SDK and a recording of the reference server by test_mcp_fake.py) over
stdio in the real jail and over Streamable HTTP, behind the same gate as the built-in tools; the
real reference servers from npm. The scripted upstream asks for the calls; what is checked: the
stream's frames, the server's own log of what reached it, the audit log.
"""
import json
import os
import pathlib
import socket
import subprocess
import sys
import threading
import time

import pytest

from conftest import on_fake, request
from test_permissions import audit, chat, confirm_with, sid
from test_tool_loop import Stream, call, script

FAKE_DIR = pathlib.Path(__file__).resolve().parent.parent / "fake"
NODE_MODULES = pathlib.Path(__file__).resolve().parent.parent / "node" / "node_modules"
WARDEN = on_fake("--sse-ping-interval", "300", "--approval-timeout", "20", env={"MCP_TEST_TOKEN": "s3cret-token"})


def add_server(w, entry, expect=201):
    st, _, body = request(w.port, "POST", "/api/mcp/servers", entry)
    assert st == expect, body
    return json.loads(body)


def server_status(w, sid_):
    st, _, body = request(w.port, "GET", f"/api/mcp/servers/{sid_}")
    assert st == 200, body
    return json.loads(body)


def wait_ready(w, server_id, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        s = server_status(w, server_id)
        if s["status"]["state"] == "ready":
            return s
        time.sleep(0.2)
    raise AssertionError(f"{server_id} never got ready: {s}")


def fake_entry(server_id, *flags, **fields):
    real_dir = str(FAKE_DIR.resolve())
    entry = {"id": server_id, "command": "/usr/bin/python3",
             "args": ["-I", "-S", real_dir + "/mcp_server.py", "--stdio", "--log", "/workspace/calls.jsonl", *flags],
             "read_only_paths": [real_dir]}
    entry.update(fields)
    return entry


def server_log(home, server_id):
    path = home / "workspaces" / ".mcp" / server_id / "calls.jsonl"
    if not path.exists():
        return []
    return [json.loads(l) for l in path.read_text().splitlines() if l.strip()]


def calls_in_log(home, server_id):
    return [e["params"]["name"] for e in server_log(home, server_id) if e.get("method") == "tools/call"]


def ends(stream):
    return [f for f in stream.rest() if isinstance(f, dict) and f.get("type") == "tool_end"]


@pytest.fixture(scope="module")
def fake(warden):
    add_server(warden, fake_entry("fake", "--markup"))
    return wait_ready(warden, "fake")


def test_tools_are_listed_with_names_and_markup_is_not_offered(warden, fake):
    tools = {t["tool"]: t for t in fake["tools"]}
    assert tools["echo"]["name"] == "fake__echo" and tools["echo"]["executable"]
    assert not tools["markup"]["executable"] and "markup" in tools["markup"]["excluded_reason"]
    assert "<|im_start|>" not in tools["markup"]["description"]
    assert fake["status"]["protocol_version"] == "2025-11-25"
    assert len(tools) >= 12  # every page of tools/list (3 a page)


def test_ask_waits_for_approval_and_the_call_is_audited_with_its_server(warden, fake_upstream, home, fake):
    s_id = sid("mcp-ask")
    name = script(fake_upstream, [{"tool_calls": [call("fake__echo", {"text": "hi"})]}, {"content": "ok"}])
    s = Stream(warden.port, chat(name, session_id=s_id, mcp_enabled=True, enable_tools=False, permission_mode="ask"))
    start = s.until_type("tool_start")
    assert start["tool_name"] == "fake__echo" and start["awaiting_confirmation"], start
    assert "echo" not in calls_in_log(home, "fake")  # nothing reached the server while it waits
    assert confirm_with(warden, start["approval_id"], "allow")[0] == 200
    end = s.until_type("tool_end")
    assert end["result"] == "echo: hi", end
    s.rest()
    assert calls_in_log(home, "fake").count("echo") >= 1
    rows = audit(warden, session_id=s_id)
    assert [r["tool"] for r in rows] == ["fake__echo"] and rows[0]["decided_by"] == "user", rows


def test_a_denied_call_never_reaches_the_server(warden, fake_upstream, home, fake):
    s_id = sid("mcp-deny")
    name = script(fake_upstream, [{"tool_calls": [call("fake__delete_file", {"path": "/important"})]}, {"content": "ok"}])
    s = Stream(warden.port, chat(name, session_id=s_id, mcp_enabled=True, permission_mode="ask"))
    start = s.until_type("tool_start")
    assert confirm_with(warden, start["approval_id"], "deny")[0] == 200
    end = s.until_type("tool_end")
    assert "declined" in end["result"], end
    s.rest()
    assert "delete_file" not in calls_in_log(home, "fake")
    rows = audit(warden, session_id=s_id)
    assert rows[0]["tool"] == "fake__delete_file" and rows[0]["decided_by"] == "user" and not rows[0]["allowed"]


def test_auto_asks_for_an_untrusted_read_only_tool_and_not_for_a_trusted_one(warden, fake_upstream, home, fake):
    add_server(warden, fake_entry("trusty", trusted=True))
    wait_ready(warden, "trusty")
    s_id = sid("mcp-auto")
    name = script(fake_upstream, [{"tool_calls": [call("trusty__echo", {"text": "a"})]},
                                  {"tool_calls": [call("fake__echo", {"text": "b"})]}, {"content": "ok"}])
    s = Stream(warden.port, chat(name, session_id=s_id, mcp_enabled=True))  # streaming, no mode: auto
    first = s.until_type("tool_start")
    assert first["tool_name"] == "trusty__echo" and not first["awaiting_confirmation"], first
    assert s.until_type("tool_end")["result"] == "echo: a"
    second = s.until_type("tool_start")
    assert second["tool_name"] == "fake__echo" and second["awaiting_confirmation"], second  # untrusted hint ignored
    assert confirm_with(warden, second["approval_id"], "allow")[0] == 200
    assert s.until_type("tool_end")["result"] == "echo: b"
    s.rest()
    rows = audit(warden, session_id=s_id)
    assert [(r["tool"], r["decided_by"]) for r in rows] == [("trusty__echo", "auto"), ("fake__echo", "user")]


def test_progress_is_streamed_as_tool_output(warden, fake_upstream, fake):
    name = script(fake_upstream, [{"tool_calls": [call("fake__slow", {"steps": 3, "delay_ms": 50})]}, {"content": "ok"}])
    s = Stream(warden.port, chat(name, session_id=sid("mcp-progress"), mcp_enabled=True, permission_mode="off"))
    frames = s.rest()
    outputs = "".join(f["text"] for f in frames if isinstance(f, dict) and f.get("type") == "tool_output")
    assert "step 1" in outputs and "step 3" in outputs, outputs
    assert [f["result"] for f in frames if isinstance(f, dict) and f.get("type") == "tool_end"] == ["done"]


def test_cancel_sends_notifications_cancelled(warden, fake_upstream, home, fake):
    s_id = sid("mcp-cancel")
    name = script(fake_upstream, [{"tool_calls": [call("fake__hang", {})]}, {"content": "ok"}])
    s = Stream(warden.port, chat(name, session_id=s_id, mcp_enabled=True, permission_mode="off"))
    s.until_type("tool_start")
    deadline = time.time() + 20
    while "hang" not in calls_in_log(home, "fake") and time.time() < deadline:
        time.sleep(0.1)
    st, _, body = request(warden.port, "POST", "/api/inference/cancel", {"session_id": s_id})
    assert st == 200, body
    s.rest()
    deadline = time.time() + 10
    while time.time() < deadline:
        if any(e.get("method") == "notifications/cancelled" for e in server_log(home, "fake")):
            break
        time.sleep(0.1)
    assert any(e.get("method") == "notifications/cancelled" for e in server_log(home, "fake"))


def test_a_crashed_server_is_reported_and_restarted(warden, fake_upstream, home):
    add_server(warden, fake_entry("crashy"))
    wait_ready(warden, "crashy")
    name = script(fake_upstream, [{"tool_calls": [call("crashy__crash", {})]},
                                  {"tool_calls": [call("crashy__echo", {"text": "again"})]}, {"content": "ok"}])
    s = Stream(warden.port, chat(name, session_id=sid("mcp-crash"), mcp_enabled=True, permission_mode="off"), timeout=60)
    results = [e["result"] for e in ends(s)]
    assert "exited" in results[0] and "status 3" in results[0], results
    assert results[1] == "echo: again", results
    assert server_status(warden, "crashy")["status"]["restarts"] == 1


def test_list_changed_brings_the_new_tool(warden, fake_upstream, fake):
    name = script(fake_upstream, [{"tool_calls": [call("fake__add_tool", {})]}, {"content": "ok"}])
    Stream(warden.port, chat(name, session_id=sid("mcp-changed"), mcp_enabled=True, permission_mode="off")).rest()
    deadline = time.time() + 20
    while time.time() < deadline:
        if any(t["tool"] == "late_tool" for t in server_status(warden, "fake")["tools"]):
            return
        time.sleep(0.2)
    raise AssertionError("late_tool never appeared")


def test_elicitation_answered_from_the_inbox_api(warden, fake_upstream, fake, home):
    s_id = sid("mcp-elicit")
    name = script(fake_upstream, [{"tool_calls": [call("fake__ask", {"question": "Who are you?"})]}, {"content": "ok"}])
    s = Stream(warden.port, chat(name, session_id=s_id, mcp_enabled=True, permission_mode="off"))
    q = s.until_type("elicitation_request")
    assert q["server"] == "fake" and q["message"] == "Who are you?" and q["mode"] == "form"
    assert q["requested_schema"]["required"] == ["name"]
    st, _, body = request(warden.port, "GET", "/api/inference/approvals")
    listed = [a for a in json.loads(body)["data"] if a["approval_id"] == q["approval_id"]]
    assert listed and listed[0]["kind"] == "elicitation", body
    bad = confirm_with(warden, q["approval_id"], "accept", content={"age": 3})
    assert bad[0] == 400 and "name" in json.dumps(bad[1]), bad  # the form's schema is checked
    assert confirm_with(warden, q["approval_id"], "allow")[0] == 400  # an elicitation is not a yes/no
    ok = confirm_with(warden, q["approval_id"], "accept", content={"name": "Ada", "age": 36})
    assert ok[0] == 200, ok
    end = s.until_type("tool_end")
    assert end["result"].startswith("action=accept") and '"Ada"' in end["result"], end
    s.rest()
    notes = audit(warden, session_id=s_id)[0]["notes"]
    assert "elicitation:accept" in notes, notes


def test_elicitation_declined_and_cancelled(warden, fake_upstream, fake):
    for decision in ("decline", "cancel"):
        name = script(fake_upstream, [{"tool_calls": [call("fake__ask", {"question": "?"})]}, {"content": "ok"}])
        s = Stream(warden.port, chat(name, session_id=sid("mcp-el2"), mcp_enabled=True, permission_mode="off"))
        q = s.until_type("elicitation_request")
        assert confirm_with(warden, q["approval_id"], decision)[0] == 200
        assert s.until_type("tool_end")["result"].startswith(f"action={decision}")
        s.rest()


def test_elicitation_with_nobody_to_ask_is_declined_and_audited(warden, fake_upstream, fake):
    s_id = sid("mcp-nobody")
    name = script(fake_upstream, [{"tool_calls": [call("fake__ask", {"question": "?"})]}, {"content": "ok"}])
    body = chat(name, session_id=s_id, mcp_enabled=True, permission_mode="off", stream=False)
    st, _, data = request(warden.port, "POST", "/v1/chat/completions", body)
    assert st == 200, data
    rows = audit(warden, session_id=s_id)
    assert "elicitation:nobody to ask (declined)" in rows[0]["notes"], rows


def test_a_jailed_server_cannot_read_the_home_or_reach_the_network(warden, fake_upstream, tmp_path, fake):
    secret_dir = tmp_path / "home"
    secret_dir.mkdir(mode=0o700)
    (secret_dir / "secret.txt").write_text("top secret")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    name = script(fake_upstream, [{"tool_calls": [call("fake__read_host_file", {"path": str(secret_dir / "secret.txt")}),
                                                  call("fake__read_host_file", {"path": "/root/.bashrc"}),
                                                  call("fake__connect", {"host": "127.0.0.1", "port": port}),
                                                  call("fake__whoami", {})]}, {"content": "ok"}])
    s = Stream(warden.port, chat(name, session_id=sid("mcp-jail"), mcp_enabled=True, permission_mode="off"))
    results = [e["result"] for e in ends(s)]
    listener.close()
    assert results[0].startswith("error:") and "top secret" not in results[0], results
    assert results[1].startswith("error:"), results
    assert results[2].startswith("error:"), results
    who = json.loads(results[3])
    assert who["uid"] == 65534 and who["cwd"] == "/workspace", who
    assert "MCP_TEST_TOKEN" not in who["env"], who  # warden's environment stays out


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root for a network namespace")
def test_network_true_reaches_a_host_in_a_namespace_the_test_creates(warden, fake_upstream):
    ns, veth, n = f"wmcp{os.getpid()}", f"wmv{os.getpid() % 100000}", os.getpid() % 200 + 20
    host = f"198.18.{n}.2"
    sh = lambda *a: subprocess.run(a, check=True, capture_output=True)
    sh("ip", "netns", "add", ns)
    try:
        sh("ip", "link", "add", veth + "a", "type", "veth", "peer", "name", veth + "b")
        sh("ip", "link", "set", veth + "b", "netns", ns)
        sh("ip", "addr", "add", f"198.18.{n}.1/24", "dev", veth + "a")
        sh("ip", "link", "set", veth + "a", "up")
        sh("ip", "netns", "exec", ns, "ip", "addr", "add", f"{host}/24", "dev", veth + "b")
        sh("ip", "netns", "exec", ns, "ip", "link", "set", veth + "b", "up")
        srv = subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, "-c",
                                f"import socket;s=socket.socket();s.bind(('{host}',7000));s.listen();print('ready',flush=True)\n"
                                "while True: s.accept()[0].close()"], stdout=subprocess.PIPE, text=True)
        assert srv.stdout.readline().strip() == "ready"
        add_server(warden, fake_entry("netty", network=True))
        wait_ready(warden, "netty")
        add_server(warden, fake_entry("closed"))
        wait_ready(warden, "closed")
        name = script(fake_upstream, [{"tool_calls": [call("netty__connect", {"host": host, "port": 7000}),
                                                      call("closed__connect", {"host": host, "port": 7000})]},
                                      {"content": "ok"}])
        s = Stream(warden.port, chat(name, session_id=sid("mcp-net"), mcp_enabled=True, permission_mode="off"))
        results = [e["result"] for e in ends(s)]
        srv.kill()
        assert results[0] == "connected", results
        assert results[1].startswith("error:"), results
    finally:
        subprocess.run(["ip", "link", "del", veth + "a"], capture_output=True)
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def test_streamable_http_with_a_bearer_token_from_the_environment(warden, fake_upstream, home, tmp_path):
    log = tmp_path / "http.jsonl"
    p = subprocess.Popen([sys.executable, str(FAKE_DIR / "mcp_server.py"), "--http", "0", "--require-bearer",
                          "s3cret-token", "--log", str(log)], stdout=subprocess.PIPE, text=True)
    try:
        port = int(p.stdout.readline().split()[1])
        url = f"http://127.0.0.1:{port}/mcp"
        refused = add_server(warden, {"id": "web", "url": url, "headers": {"Authorization": "Bearer s3cret-token"}}, 400)
        assert "env" in json.dumps(refused), refused  # a literal token is never stored
        add_server(warden, {"id": "web", "url": url, "bearer_token_env": "MCP_TEST_TOKEN"})
        wait_ready(warden, "web")
        listed = json.dumps(request(warden.port, "GET", "/api/mcp/servers")[2].decode())
        assert "s3cret-token" not in listed
        name = script(fake_upstream, [{"tool_calls": [call("web__slow", {"steps": 2, "delay_ms": 50})]},
                                      {"tool_calls": [call("web__ask", {"question": "Name?"})]}, {"content": "ok"}])
        s = Stream(warden.port, chat(name, session_id=sid("mcp-http"), mcp_enabled=True, permission_mode="off"))
        q = s.until_type("elicitation_request")
        assert confirm_with(warden, q["approval_id"], "accept", content={"name": "Bo"})[0] == 200
        frames = s.rest()
        outs = "".join(f["text"] for f in frames if isinstance(f, dict) and f.get("type") == "tool_output")
        results = [f["result"] for f in s.frames if isinstance(f, dict) and f.get("type") == "tool_end"]
        assert "step 2" in outs and results[0] == "done" and results[1].startswith("action=accept"), (outs, results)
        sessions = {e["http"]["session"] for e in map(json.loads, log.read_text().splitlines()) if e.get("http")}
        assert len(sessions - {None}) == 1  # one MCP session, kept
        st, _, body = request(warden.port, "POST", "/api/mcp/servers/test",
                              {"id": "nokey", "url": url, "bearer_token_env": "NOT_SET_ANYWHERE"})
        assert st == 502 and "NOT_SET_ANYWHERE" in body.decode(), body
    finally:
        p.kill()
        p.wait()


def test_mcp_tools_work_on_anthropic_messages_and_responses(warden, fake_upstream, fake):
    name = script(fake_upstream, [{"tool_calls": [call("fake__add", {"a": 2, "b": 3})]}, {"content": "five"}])
    st, _, body = request(warden.port, "POST", "/v1/messages",
                          {"model": "x", "max_tokens": 50, "mcp_enabled": True, "permission_mode": "off",
                           "messages": [{"role": "user", "content": f"scenario:script:{name}"}]})
    assert st == 200, body
    assert "5" in json.dumps(json.loads(body)["content"]), body
    name = script(fake_upstream, [{"tool_calls": [call("fake__add", {"a": 4, "b": 4})]}, {"content": "eight"}])
    st, _, body = request(warden.port, "POST", "/v1/responses",
                          {"model": "x", "mcp_enabled": True, "permission_mode": "off", "input": f"scenario:script:{name}"})
    assert st == 200, body
    assert "8" in json.dumps(json.loads(body)["output"]), body


def test_unknown_and_disabled_servers_and_rules_by_qualified_name(warden, fake_upstream, fake):
    st, _, body = request(warden.port, "POST", "/v1/chat/completions",
                          chat("x", enabled_tools=["nope__echo"], stream=True))
    assert st == 400 and "nope__echo" in body.decode(), body
    s_id = sid("mcp-rule")
    name = script(fake_upstream, [{"tool_calls": [call("fake__add", {"a": 1, "b": 1})]},
                                  {"tool_calls": [call("fake__add", {"a": 1, "b": 1})]}, {"content": "ok"}])
    s = Stream(warden.port, chat(name, session_id=s_id, enabled_tools=["fake__add"], permission_mode="ask"))
    start = s.until_type("tool_start")
    assert confirm_with(warden, start["approval_id"], "allow_session")[0] == 200
    s.until_type("tool_end")
    second = s.until_type("tool_start")
    assert not second["awaiting_confirmation"], second  # the remembered rule names fake__add
    s.rest()


# --- the reference servers from their npm packages ----------------------------------------------

def real_package(name):
    pkg = (NODE_MODULES / "@modelcontextprotocol" / name).resolve()
    if not (pkg / "dist" / "index.js").exists():
        raise AssertionError(f"{name} is not installed: run scripts/setup nodedeps")
    return pkg


def test_the_reference_everything_server_over_stdio_in_the_jail(warden, fake_upstream):
    pkg = real_package("server-everything")
    modules = str(pkg.parent.parent)  # node_modules: the package and its dependencies
    add_server(warden, {"id": "everything", "command": "/usr/bin/node", "args": [str(pkg / "dist" / "index.js"), "stdio"],
                        "read_only_paths": [modules]})
    s = wait_ready(warden, "everything", timeout=90)
    names = {t["tool"] for t in s["tools"]}
    assert {"echo", "get-sum"} <= names or {"echo", "add"} <= names, names
    assert s["status"]["server_info"]["name"], s["status"]
    name = script(fake_upstream, [{"tool_calls": [call("everything__echo", {"message": "from the jail"})]}, {"content": "ok"}])
    s = Stream(warden.port, chat(name, session_id=sid("mcp-everything"), mcp_enabled=True, permission_mode="off"), timeout=60)
    results = [e["result"] for e in ends(s)]
    assert "from the jail" in results[0], results


def test_the_reference_filesystem_server_sees_only_its_workspace(warden, fake_upstream, home):
    pkg = real_package("server-filesystem")
    modules = str(pkg.parent.parent)
    add_server(warden, {"id": "files", "command": "/usr/bin/node",
                        "args": [str(pkg / "dist" / "index.js"), "/workspace"], "read_only_paths": [modules]})
    wait_ready(warden, "files", timeout=90)
    ws = home / "workspaces" / ".mcp" / "files"
    (ws / "hello.txt").write_text("hello from the workspace")
    os.chown(ws / "hello.txt", 65534, 65534) if os.geteuid() == 0 else None
    name = script(fake_upstream, [{"tool_calls": [call("files__read_text_file", {"path": "/workspace/hello.txt"}),
                                                  call("files__read_text_file", {"path": "/etc/shadow"})]},
                                  {"content": "ok"}])
    s = Stream(warden.port, chat(name, session_id=sid("mcp-files"), mcp_enabled=True, permission_mode="off"), timeout=60)
    results = [e["result"] for e in ends(s)]
    assert "hello from the workspace" in results[0], results
    assert "root:" not in results[1], results


def test_the_reference_everything_server_over_streamable_http(warden, fake_upstream):
    pkg = real_package("server-everything")
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    p = subprocess.Popen(["node", str(pkg / "dist" / "index.js"), "streamableHttp"], env={**os.environ, "PORT": str(port)},
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), 1).close()
                break
            except OSError:
                time.sleep(0.2)
        add_server(warden, {"id": "evhttp", "url": f"http://127.0.0.1:{port}/mcp"})
        wait_ready(warden, "evhttp", timeout=60)
        name = script(fake_upstream, [{"tool_calls": [call("evhttp__echo", {"message": "over http"})]}, {"content": "ok"}])
        s = Stream(warden.port, chat(name, session_id=sid("mcp-evhttp"), mcp_enabled=True, permission_mode="off"), timeout=60)
        results = [e["result"] for e in ends(s)]
        assert "over http" in results[0], results
    finally:
        p.send_signal(2)
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            p.kill()


def test_resources_are_read_through_read_mcp_resource_and_prompts_are_listed(warden, fake_upstream, fake):
    add_server(warden, fake_entry("trustres", trusted=True)) if server_status_or_none(warden, "trustres") is None else None
    wait_ready(warden, "trustres")
    s_id = sid("mcp-res")
    name = script(fake_upstream, [{"tool_calls": [call("read_mcp_resource", {"server": "trustres", "uri": "memo://one"})]},
                                  {"tool_calls": [call("read_mcp_resource", {"server": "fake", "uri": "memo://two"})]},
                                  {"content": "ok"}])
    s = Stream(warden.port, chat(name, session_id=s_id, mcp_enabled=True))  # auto
    first = s.until_type("tool_start")
    assert not first["awaiting_confirmation"], first  # a trusted server's resource: always safe
    assert s.until_type("tool_end")["result"] == "first memo"
    second = s.until_type("tool_start")
    assert second["awaiting_confirmation"], second  # an untrusted server's: asks
    assert confirm_with(warden, second["approval_id"], "allow")[0] == 200
    assert s.until_type("tool_end")["result"] == "second memo"
    s.rest()
    st, _, body = request(warden.port, "GET", "/api/mcp/servers/fake/prompts")
    assert st == 200 and json.loads(body)["data"][0]["name"] == "greet", body


def server_status_or_none(w, server_id):
    st, _, body = request(w.port, "GET", f"/api/mcp/servers/{server_id}")
    return json.loads(body) if st == 200 else None


def test_a_cut_response_stream_is_resumed_with_last_event_id(warden, fake_upstream, tmp_path):
    log = tmp_path / "cut.jsonl"
    p = subprocess.Popen([sys.executable, str(FAKE_DIR / "mcp_server.py"), "--http", "0", "--cut-call-stream-after", "1",
                          "--log", str(log)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        port = int(p.stdout.readline().split()[1])
        add_server(warden, {"id": "cut", "url": f"http://127.0.0.1:{port}/mcp"})
        wait_ready(warden, "cut")
        name = script(fake_upstream, [{"tool_calls": [call("cut__slow", {"steps": 3, "delay_ms": 100})]}, {"content": "ok"}])
        s = Stream(warden.port, chat(name, session_id=sid("mcp-cut"), mcp_enabled=True, permission_mode="off"), timeout=60)
        frames = s.rest()
        outs = "".join(f["text"] for f in frames if isinstance(f, dict) and f.get("type") == "tool_output")
        results = [f["result"] for f in frames if isinstance(f, dict) and f.get("type") == "tool_end"]
        assert results == ["done"], (results, outs)
        assert "step 3" in outs, outs  # the events after the cut came through the resumed stream
    finally:
        p.kill()
        p.wait()


def test_elicitation_through_the_responses_api_and_the_timeout_declines(fake_upstream, home):
    from conftest import warden_on_fake
    w = warden_on_fake(fake_upstream, "--approval-timeout", "2", home=home / "short")
    try:
        add_server(w, fake_entry("fake"))
        wait_ready(w, "fake")
        name = script(fake_upstream, [{"tool_calls": [call("fake__ask", {"question": "Name?"})]}, {"content": "ok"}])
        conn = __import__("http.client").client.HTTPConnection("127.0.0.1", w.port, timeout=30)
        conn.request("POST", "/v1/responses", body=json.dumps({"model": "x", "stream": True, "mcp_enabled": True,
                                                               "permission_mode": "off", "input": f"scenario:script:{name}"}),
                     headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        item = None
        while item is None:
            line = resp.readline().decode()
            assert line, "the stream ended before the elicitation item"
            if line.startswith("data:"):
                ev = json.loads(line[5:])
                if ev.get("type") == "response.output_item.added" and ev["item"]["type"] == "mcp_elicitation_request":
                    item = ev["item"]
        assert item["server_label"] == "fake" and item["message"] == "Name?", item
        assert confirm_with(w, item["id"], "accept", content={"name": "Cy"})[0] == 200
        rest = resp.read().decode()
        assert "action=accept" in rest and "Cy" in rest, rest[-2000:]
        # nobody answers this one: after --approval-timeout (2 s) the server gets a decline
        s_id = sid("mcp-expire")
        name = script(fake_upstream, [{"tool_calls": [call("fake__ask", {"question": "?"})]}, {"content": "ok"}])
        s = Stream(w.port, chat(name, session_id=s_id, mcp_enabled=True, permission_mode="off"), timeout=60)
        end = s.until_type("tool_end")
        assert end["result"].startswith("action=decline"), end
        s.rest()
        assert "elicitation:expired (declined)" in audit(w, session_id=s_id)[0]["notes"]
    finally:
        w.stop()
