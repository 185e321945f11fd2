"""The scripted MCP server (tests/fake/mcp_server.py), which stands in for real MCP servers in the
tests of warden's MCP client, checked against the official MCP Python SDK (the `mcp` package of
tests/requirements.txt) over stdio and Streamable HTTP, against the recording of the reference
server @modelcontextprotocol/server-everything (tests/fake/recordings/mcp-everything.json, made
by tests/fake/record_mcp_everything.py), and on the HTTP details the SDK does not exercise.
The same SDK flow also runs against the real server-everything (tests/node, `scripts/setup
nodedeps`). No warden here: these tests keep the fake honest.

The fake runs as `/usr/bin/python3 -I -S`, as in a jail that holds the host's python3 and nothing
else: no site-packages, so a third-party import would fail."""
import json
import os
import pathlib
import signal
import socket
import subprocess
import sys
import tempfile
import time

import anyio
import pytest

from conftest import ROOT, Proc, node_with_sdk, request

sys.path.insert(0, str(ROOT / "tests" / "fake"))
from record_mcp_everything import EVERYTHING, Exchange, all_tools  # noqa: E402

import mcp.types as types  # noqa: E402
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

FAKE = str(ROOT / "tests" / "fake" / "mcp_server.py")
PYTHON = ["/usr/bin/python3", "-I", "-S"]  # the jail's interpreter, without site-packages
RECORDING = ROOT / "tests" / "fake" / "recordings" / "mcp-everything.json"
TOOLS = ["echo", "add", "delete_file", "slow", "hang", "crash", "ask", "ask_url", "add_tool",
         "read_host_file", "connect", "whoami"]
TIMEOUT = 120  # seconds for one whole SDK flow; generous for a busy 2-core machine
ACCEPT = {"Accept": "application/json, text/event-stream"}
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "raw", "version": "0"}}}


def run(fn, *args):
    async def main():
        with anyio.fail_after(TIMEOUT):
            return await fn(*args)
    return anyio.run(main)


def fake_http(*args):
    p = Proc([*PYTHON, FAKE, "--http", "0", *args])
    p.port = int(p.wait_for(r"PORT (\d+)", timeout=60).group(1))
    p.url = f"http://127.0.0.1:{p.port}/mcp"
    return p


@pytest.fixture()
def log(tmp_path):
    return tmp_path / "received.jsonl"


def received(log):
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def wait_for(pred, what, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(0.1)
    raise AssertionError(f"no {what} within {timeout}s")


class Client:
    """An SDK ClientSession on the fake over `transport` ("stdio" or "http"), with the
    callbacks a test needs; the notifications it got are in .notifications."""

    def __init__(self, transport, log=None, elicit=None, extra=()):
        self.transport, self.log, self.elicit, self.extra = transport, log, elicit, extra
        self.notifications = []
        self.elicitations = []
        self.list_changed = None

    async def on_message(self, message):
        if isinstance(message, Exception):
            return
        self.notifications.append(message)
        if isinstance(message, types.ToolListChangedNotification):
            self.list_changed.set()

    async def on_elicit(self, context, params):
        self.elicitations.append(params)
        return self.elicit(params)

    async def flow(self, body):
        self.list_changed = anyio.Event()
        args = [*self.extra] + (["--log", str(self.log)] if self.log else [])
        kw = dict(message_handler=self.on_message, read_timeout_seconds=60,
                  client_info=types.Implementation(name="sdk-check", version="1.0"))
        if self.elicit is not None:
            kw["elicitation_callback"] = self.on_elicit
        if self.transport == "stdio":
            with tempfile.TemporaryFile("w+") as errlog:
                params = StdioServerParameters(command=PYTHON[0], args=[*PYTHON[1:], FAKE, "--stdio", *args])
                async with stdio_client(params, errlog=errlog) as (r, w), ClientSession(r, w, **kw) as s:
                    return await body(s)
        server = fake_http(*args)
        try:
            async with streamable_http_client(server.url) as (r, w), ClientSession(r, w, **kw) as s:
                return await body(s)
        finally:
            server.stop()


async def list_all(session):
    """Every tool, following nextCursor (the SDK does not page by itself); and the page sizes."""
    page = await session.list_tools()
    tools, sizes = list(page.tools), [len(page.tools)]
    while page.next_cursor:
        page = await session.list_tools(params=types.PaginatedRequestParams(cursor=page.next_cursor))
        tools += page.tools
        sizes.append(len(page.tools))
    return tools, sizes


def text(result):
    assert len(result.content) == 1 and result.content[0].type == "text", result
    return result.content[0].text


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_the_sdk_initializes_lists_every_page_and_calls(transport, log):
    async def body(s):
        init = await s.initialize()
        assert init.protocol_version == "2025-11-25"
        assert init.server_info.name == "warden-fake-mcp"
        assert init.capabilities.tools.list_changed is True
        await s.send_ping()
        tools, sizes = await list_all(s)
        assert [t.name for t in tools] == TOOLS
        assert sizes == [3, 3, 3, 3]
        by = {t.name: t for t in tools}
        assert by["echo"].annotations.read_only_hint is True and by["echo"].annotations.open_world_hint is False
        assert by["add"].annotations.read_only_hint is True and by["add"].annotations.open_world_hint is False
        assert by["delete_file"].annotations.destructive_hint is True
        assert by["echo"].input_schema["required"] == ["text"]
        r = await s.call_tool("echo", {"text": "hi there"})
        assert (text(r), r.is_error) == ("echo: hi there", False)
        assert text(await s.call_tool("add", {"a": 2, "b": 40})) == "42"
        assert text(await s.call_tool("delete_file", {"path": "/tmp/x"})) == "deleted /tmp/x"
        r = await s.call_tool("no_such_tool", {})
        assert r.is_error is True and "unknown tool" in text(r)
        r = await s.call_tool("add", {"a": "two", "b": 1})
        assert r.is_error is True and "invalid arguments" in text(r)
        who = json.loads(text(await s.call_tool("whoami", {})))
        assert who["uid"] == os.getuid() and "PATH" in who["env"]
        r = await s.call_tool("read_host_file", {"path": FAKE})
        assert "scripted MCP server" in text(r)
        assert text(await s.call_tool("read_host_file", {"path": "/nonexistent/x"})).startswith("error: ")
        return True

    assert run(Client(transport, log).flow, body)
    calls = [m for m in received(log) if m["method"] == "tools/call"]
    assert calls[0]["params"] == {"name": "echo", "arguments": {"text": "hi there"}}
    methods = [m["method"] for m in received(log)]
    assert methods[:2] == ["initialize", "notifications/initialized"]


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_progress_reaches_the_sdk_callback(transport):
    async def body(s):
        await s.initialize()
        seen = []

        async def progress(p, total, message):
            seen.append((p, total, message))

        r = await s.call_tool("slow", {"steps": 3, "delay_ms": 50}, progress_callback=progress)
        assert text(r) == "done"
        return seen

    assert run(Client(transport).flow, body) == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_elicitation_through_the_sdk_callback(transport):
    def answer(params):
        if params.mode == "url":
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async def body(s):
        await s.initialize()
        r1 = await s.call_tool("ask", {"question": "Who are you?"})
        r2 = await s.call_tool("ask_url", {})
        return text(r1), text(r2)

    c = Client(transport, elicit=answer)
    assert run(c.flow, body) == ('action=accept content={"name": "Ada"}', "action=decline content=null")
    form, url = c.elicitations
    assert form.message == "Who are you?"
    assert form.requested_schema["required"] == ["name"]
    assert form.requested_schema["properties"]["color"]["enum"] == ["red", "green"]
    assert (url.mode, url.url) == ("url", "https://example.com/authorize?x=1") and url.elicitation_id


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_client_without_elicitation_gets_an_error_result(transport):
    async def body(s):
        await s.initialize()
        return await s.call_tool("ask", {"question": "?"}), await s.call_tool("ask_url", {})

    form, url = run(Client(transport).flow, body)
    assert form.is_error and text(form) == "client cannot elicit"
    assert url.is_error and text(url) == "client cannot elicit by URL"


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_add_tool_sends_list_changed_and_the_next_listing_has_it(transport):
    c = Client(transport)

    async def body(s):
        await s.initialize()
        assert "late_tool" not in [t.name for t in (await list_all(s))[0]]
        assert text(await s.call_tool("add_tool", {})) == "added late_tool"
        with anyio.fail_after(60):  # over HTTP it comes on the GET stream
            await c.list_changed.wait()
        tools, _ = await list_all(s)
        return [t.name for t in tools], text(await s.call_tool("late_tool", {}))

    names, late = run(c.flow, body)
    assert names == TOOLS + ["late_tool"] and late == "late"


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_resources_and_prompts(transport):
    async def body(s):
        await s.initialize()
        res = await s.list_resources()
        memo = await s.read_resource("memo://one")
        prompts = await s.list_prompts()
        prompt = await s.get_prompt("greet", {"name": "Ada"})
        with pytest.raises(MCPError) as missing:
            await s.read_resource("memo://three")
        return res, memo, prompts, prompt, missing.value

    res, memo, prompts, prompt, missing = run(Client(transport).flow, body)
    assert [str(r.uri) for r in res.resources] == ["memo://one", "memo://two"]
    assert memo.contents[0].text == "first memo"
    assert [(p.name, [a.name for a in p.arguments]) for p in prompts.prompts] == [("greet", ["name"])]
    assert prompt.messages[0].content.text == "Hello, Ada!"
    assert missing.error.code == -32002


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_an_abandoned_call_is_cancelled_and_gets_no_result(transport, log):
    async def body(s):
        await s.initialize()
        with pytest.raises(MCPError):
            await s.call_tool("hang", {}, read_timeout_seconds=1)
        return text(await s.call_tool("echo", {"text": "still here"}))

    assert run(Client(transport, log).flow, body) == "echo: still here"
    msgs = received(log)
    hang = next(m for m in msgs if m["method"] == "tools/call" and m["params"]["name"] == "hang")
    cancels = [m for m in msgs if m["method"] == "notifications/cancelled"]
    assert [c["params"]["requestId"] for c in cancels] == [hang["id"]]


def test_the_markup_tool_with_markup():
    async def body(s):
        await s.initialize()
        return (await list_all(s))[0]

    tools = run(Client("stdio", extra=["--markup"]).flow, body)
    markup = tools[-1]
    assert markup.name == "markup"
    assert "<|im_start|>system" in markup.description and "</tool_call>" in markup.description


# ---- the real reference server --------------------------------------------------------------

def test_the_same_sdk_flow_against_the_real_server_everything():
    node = node_with_sdk("@modelcontextprotocol/server-everything")

    async def body():
        params = StdioServerParameters(command=node, args=[str(EVERYTHING), "stdio"])
        with tempfile.TemporaryFile("w+") as errlog:
            async with stdio_client(params, errlog=errlog) as (r, w), ClientSession(r, w, read_timeout_seconds=60) as s:
                init = await s.initialize()
                tools, _ = await list_all(s)
                r = await s.call_tool("echo", {"message": "hello"})
                return init, [t.name for t in tools], r

    init, names, r = run(body)
    assert init.protocol_version == "2025-11-25" and init.server_info.name == "mcp-servers/everything"
    assert "echo" in names and "get-sum" in names
    assert text(r) == "Echo: hello"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_sdk_flow_against_server_everything_over_streamable_http():
    """`PORT=<port> node .../server-everything/dist/index.js streamableHttp` serves
    http://127.0.0.1:<port>/mcp (it listens on every interface; PORT defaults to 3001)."""
    node = node_with_sdk("@modelcontextprotocol/server-everything")
    port = free_port()
    p = Proc([node, str(EVERYTHING), "streamableHttp"], env={**os.environ, "PORT": str(port)})
    try:
        p.wait_for(rf"listening on port {port}", where="err", timeout=60)

        async def body():
            async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (r, w), \
                    ClientSession(r, w, read_timeout_seconds=60) as s:
                init = await s.initialize()
                seen = []

                async def progress(p, total, message):
                    seen.append((p, total))

                r = await s.call_tool("trigger-long-running-operation", {"duration": 0.2, "steps": 2},
                                      progress_callback=progress)
                return init, text(await s.call_tool("echo", {"message": "over http"})), seen, r

        init, echoed, seen, r = run(body)
    finally:
        p.stop(signal.SIGINT)
    assert init.server_info.name == "mcp-servers/everything"
    assert echoed == "Echo: over http"
    assert seen == [(1, 2), (2, 2)] and "completed" in r.content[0].text


def test_server_filesystem_starts_with_a_directory(tmp_path):
    node = node_with_sdk("@modelcontextprotocol/server-filesystem")
    (tmp_path / "a.txt").write_text("hello from a file")
    script = ROOT / "tests" / "node" / "node_modules" / "@modelcontextprotocol" / "server-filesystem" / "dist" / "index.js"

    async def body():
        params = StdioServerParameters(command=node, args=[str(script), str(tmp_path)])
        with tempfile.TemporaryFile("w+") as errlog:
            async with stdio_client(params, errlog=errlog) as (r, w), ClientSession(r, w, read_timeout_seconds=60) as s:
                await s.initialize()
                tools, _ = await list_all(s)
                r = await s.call_tool("read_text_file", {"path": str(tmp_path / "a.txt")})
                outside = await s.call_tool("read_text_file", {"path": "/etc/hostname"})
                return [t.name for t in tools], r, outside

    names, r, outside = run(body)
    assert "read_text_file" in names and "write_file" in names
    assert text(r) == "hello from a file"
    assert outside.is_error


# ---- shapes: the fake against the recording of server-everything -----------------------------

def shape(v):
    """The JSON type structure of `v`: dicts key by key, lists as the merge of their items."""
    if isinstance(v, dict):
        return {k: shape(x) for k, x in v.items()}
    if isinstance(v, list):
        merged = None
        for x in v:
            merged = merge(merged, shape(x))
        return [merged] if merged is not None else []
    return {bool: "boolean", int: "number", float: "number", str: "string", type(None): "null"}[type(v)]


def merge(a, b):
    """The shape of both: a key of either (optional keys included), types joined with "|"."""
    if a is None or b is None:
        return b if a is None else a
    if isinstance(a, dict) and isinstance(b, dict):
        return {k: merge(a.get(k), b.get(k)) for k in {**a, **b}}
    if isinstance(a, list) and isinstance(b, list):
        return [merge(a[0] if a else None, b[0] if b else None)] if a or b else []
    return a if a == b else f"{a}|{b}"


def differences(rec, fake, path="", missing_ok=(), opaque=()):
    """Where `fake`'s shape breaks `rec`'s: a key of the recording the fake lacks (unless its path
    is in missing_ok) or of another type. Paths in `opaque` are not looked into (their content
    is the tool's own: schema properties, say)."""
    out = []
    if path in opaque:
        return out if type(rec) is type(fake) else [f"{path}: {rec} vs {fake}"]
    if isinstance(rec, dict):
        if not isinstance(fake, dict):
            return [f"{path}: object in the recording, {fake} in the fake"]
        for k, v in rec.items():
            p = f"{path}.{k}" if path else k
            if k not in fake:
                if p not in missing_ok:
                    out.append(f"{p}: missing in the fake")
            else:
                out += differences(v, fake[k], p, missing_ok, opaque)
        return out
    if isinstance(rec, list):
        if not isinstance(fake, list):
            return [f"{path}: array in the recording, {fake} in the fake"]
        if rec and fake:
            out += differences(rec[0], fake[0], path + "[]", missing_ok, opaque)
        return out
    return [] if rec == fake else [f"{path}: {rec} in the recording, {fake} in the fake"]


def fake_messages():
    """The fake's answers to the flow the recording holds, raw off the wire."""
    ex = Exchange([*PYTHON, FAKE, "--stdio"])
    try:
        caps = {"elicitation": {"form": {}, "url": {}}}
        init, _ = ex.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": caps,
                                            "clientInfo": {"name": "shape-check", "version": "1"}})
        ex.notify("notifications/initialized")
        first, _ = all_tools(ex)
        echo, _ = ex.request("tools/call", {"name": "echo", "arguments": {"text": "hello"}})
        slow, progress = ex.request("tools/call", {"name": "slow", "arguments": {"steps": 2, "delay_ms": 10},
                                                   "_meta": {"progressToken": "progress-1"}})
        seen = []

        def decline(m):
            seen.append(m)
            return {"action": "decline"}

        ex.request("tools/call", {"name": "ask", "arguments": {"question": "?"}}, on_request=decline)
        ex.request("tools/call", {"name": "ask_url", "arguments": {}}, on_request=decline)
        unknown, _ = ex.request("tools/call", {"name": "no-such-tool", "arguments": {}})
        ping, _ = ex.request("ping")
    finally:
        assert ex.close() == 0
    return {"initialize": init, "tools_list_first_page": first, "tools_call_echo": echo,
            "progress_notifications": progress, "tools_call_long_running": slow,
            "elicitation_create_form": seen[0], "elicitation_create_url": seen[1],
            "tools_call_unknown_tool": unknown, "ping": ping}


# what server-everything has that the fake leaves out, each a capability or field the fake does
# not offer (warden's client must cope with both)
MISSING_OK = {
    "initialize": {"result.capabilities.prompts.listChanged", "result.capabilities.resources.subscribe",
                   "result.capabilities.resources.listChanged", "result.capabilities.logging",
                   "result.capabilities.tasks", "result.capabilities.completions"},
    "tools_list_first_page": {"result.tools[].title", "result.tools[].outputSchema", "result.tools[].execution",
                              "result.tools[].inputSchema.$schema", "result.tools[].annotations.idempotentHint"},
}
OPAQUE = {"result.tools[].inputSchema.properties", "params.requestedSchema.properties",
          "result.tools[].outputSchema"}


def test_the_recording_is_of_the_pinned_server_everything():
    rec = json.loads(RECORDING.read_text())
    pinned = json.loads((ROOT / "tests" / "node" / "package.json").read_text())["dependencies"]
    assert rec["server"] == "@modelcontextprotocol/server-everything@" + pinned["@modelcontextprotocol/server-everything"], \
        "re-record: python3 tests/fake/record_mcp_everything.py"


@pytest.mark.parametrize("name", ["initialize", "tools_list_first_page", "tools_call_echo", "progress_notifications",
                                  "tools_call_long_running", "elicitation_create_form", "elicitation_create_url",
                                  "tools_call_unknown_tool", "ping"])
def test_the_fake_has_the_shapes_of_server_everything(name, fake_shapes):
    rec = json.loads(RECORDING.read_text())["messages"][name]
    assert rec is not None, f"the recording has no {name}"
    diffs = differences(shape(rec), fake_shapes[name], missing_ok=MISSING_OK.get(name, ()), opaque=OPAQUE)
    assert not diffs, f"{name}:\n" + "\n".join(diffs)


@pytest.fixture(scope="module")
def fake_shapes():
    return {k: shape(v) for k, v in fake_messages().items()}


# ---- HTTP details the SDK does not exercise (raw requests) ------------------------------------

@pytest.fixture(scope="module")
def http_fake(tmp_path_factory):
    log = tmp_path_factory.mktemp("mcp-http") / "received.jsonl"
    p = fake_http("--log", str(log))
    p.log_file = log
    yield p
    p.stop()


def new_session(port, headers=None):
    st, h, body = request(port, "POST", "/mcp", INIT, {**ACCEPT, **(headers or {})})
    assert st == 200 and h["content-type"].startswith("application/json"), (st, body)
    sid = h["mcp-session-id"]
    hd = {**ACCEPT, **(headers or {}), "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
    st, _, _ = request(port, "POST", "/mcp", {"jsonrpc": "2.0", "method": "notifications/initialized"}, hd)
    assert st == 202
    return hd


def sse_events(raw):
    """(id, parsed data) of each event of an SSE body, comments left out."""
    out = []
    for block in raw.decode().replace("\r\n", "\n").split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.split("\n") if line and not line.startswith(":"))
        if "data" in fields:
            out.append((fields.get("id"), json.loads(fields["data"])))
    return out


def test_http_sessions_are_required_and_deleted(http_fake):
    port = http_fake.port
    hd = new_session(port)
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    st, _, body = request(port, "POST", "/mcp", ping, hd)
    assert st == 200 and json.loads(body) == {"jsonrpc": "2.0", "id": 2, "result": {}}
    st, _, _ = request(port, "POST", "/mcp", ping, ACCEPT)
    assert st == 400  # no Mcp-Session-Id
    st, _, _ = request(port, "POST", "/mcp", ping, {**hd, "Mcp-Session-Id": "nope"})
    assert st == 404
    st, _, _ = request(port, "DELETE", "/mcp", None, hd)
    assert st == 200
    st, _, _ = request(port, "POST", "/mcp", ping, hd)
    assert st == 404  # deleted
    st, _, body = request(port, "POST", "/mcp", b"{not json", hd)
    assert st == 400 and json.loads(body)["error"]["code"] == -32700
    st, _, _ = request(port, "POST", "/mcp", INIT, {"Accept": "application/json"})
    assert st == 406
    hd = new_session(port)
    st, _, body = request(port, "POST", "/mcp", {"jsonrpc": "2.0", "id": 3, "method": "no/such"}, hd)
    assert json.loads(body)["error"]["code"] == -32601


def test_http_tool_calls_stream_and_the_get_stream_replays(http_fake):
    port = http_fake.port
    hd = new_session(port)
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "slow", "arguments": {"steps": 2, "delay_ms": 10}, "_meta": {"progressToken": 5}}}
    st, h, body = request(port, "POST", "/mcp", call, hd)
    assert st == 200 and h["content-type"] == "text/event-stream"
    events = sse_events(body)
    assert [m.get("method") for _, m in events] == ["notifications/progress"] * 2 + [None]
    assert events[-1][1]["result"]["content"][0]["text"] == "done"
    assert all(eid for eid, _ in events)
    # a replay of that stream after its first event
    st, _, body = request(port, "GET", "/mcp", None, {**hd, "Accept": "text/event-stream",
                                                       "Last-Event-ID": events[0][0]})
    assert st == 200 and sse_events(body) == events[1:]
    # ... and after its last: nothing more will come, so 404 (a client stops resuming)
    st, _, _ = request(port, "GET", "/mcp", None, {**hd, "Accept": "text/event-stream", "Last-Event-ID": events[-1][0]})
    assert st == 404
    # add_tool: list_changed waits for a GET stream; read it, then replay it from its own id
    st, _, body = request(port, "POST", "/mcp", {"jsonrpc": "2.0", "id": 8, "method": "tools/call",
                                                 "params": {"name": "add_tool", "arguments": {}}}, hd)
    assert sse_events(body)[-1][1]["result"]["content"][0]["text"] == "added late_tool"
    with socket.create_connection(("127.0.0.1", port), timeout=60) as s:
        s.sendall(f"GET /mcp HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nMcp-Session-Id: "
                  f"{hd['Mcp-Session-Id']}\r\n\r\n".encode())
        got = b""
        while b"list_changed" not in got:
            got += s.recv(65536)
    assert got.startswith(b"HTTP/1.1 200")
    first_get_id = [line for line in got.decode().split("\r\n") if line.startswith("id: ")][0][4:]
    # notifications and responses from the client: 202
    st, _, _ = request(port, "POST", "/mcp", {"jsonrpc": "2.0", "id": 99, "result": {}}, hd)
    assert st == 202
    # unknown Last-Event-ID
    st, _, _ = request(port, "GET", "/mcp", None, {**hd, "Accept": "text/event-stream", "Last-Event-ID": "77-0"})
    assert st == 404
    assert first_get_id.startswith("0-")


def test_http_bearer_is_required_when_asked(log):
    p = fake_http("--require-bearer", "s3cret", "--log", str(log))
    try:
        st, h, _ = request(p.port, "POST", "/mcp", INIT, ACCEPT)
        assert st == 401 and h["www-authenticate"].startswith("Bearer")
        new_session(p.port, {"Authorization": "Bearer s3cret"})
    finally:
        p.stop()
    assert [m["method"] for m in received(log)] == ["initialize", "initialize", "notifications/initialized"]


def test_http_sdk_with_bearer():
    import httpx2
    p = fake_http("--require-bearer", "s3cret")

    async def body():
        async with httpx2.AsyncClient(headers={"Authorization": "Bearer s3cret"}, timeout=60) as hc, \
                streamable_http_client(p.url, http_client=hc) as (r, w), ClientSession(r, w, read_timeout_seconds=60) as s:
            await s.initialize()
            return text(await s.call_tool("echo", {"text": "authorized"}))

    try:
        assert run(body) == "echo: authorized"
    finally:
        p.stop()


# ---- crashes ------------------------------------------------------------------------------

def test_crash_and_crash_after_exit_with_status_3():
    ex = Exchange([*PYTHON, FAKE, "--stdio"])
    ex.request("initialize", INIT["params"])
    ex.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "crash", "arguments": {}}})
    assert ex.p.wait(60) == 3
    ex = Exchange([*PYTHON, FAKE, "--stdio", "--crash-after", "2"])
    ex.request("initialize", INIT["params"])
    assert ex.request("tools/call", {"name": "echo", "arguments": {"text": "1"}})[0]["result"]["isError"] is False
    r, _ = ex.request("tools/call", {"name": "echo", "arguments": {"text": "2"}})
    assert r["result"]["content"][0]["text"] == "echo: 2"  # answered, then gone
    assert ex.p.wait(60) == 3


def test_http_crash_after_answers_then_exits():
    p = fake_http("--crash-after", "1")
    hd = new_session(p.port)
    st, _, body = request(p.port, "POST", "/mcp", {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                                   "params": {"name": "echo", "arguments": {"text": "x"}}}, hd)
    assert st == 200 and sse_events(body)[-1][1]["result"]["content"][0]["text"] == "echo: x"
    assert p.p.wait(60) == 3


def test_stdio_malformed_json_and_unknown_methods():
    ex = Exchange([*PYTHON, FAKE, "--stdio"])
    ex.p.stdin.write(b"{oops\n")
    ex.p.stdin.flush()
    assert ex.recv()["error"]["code"] == -32700
    ex.request("initialize", INIT["params"])
    assert ex.request("resources/templates/list")[0]["error"]["code"] == -32601
    assert ex.request("initialize", {**INIT["params"], "protocolVersion": "2025-06-18"})[0]["result"][
        "protocolVersion"] == "2025-06-18"
    assert ex.request("initialize", {**INIT["params"], "protocolVersion": "1999-01-01"})[0]["result"][
        "protocolVersion"] == "2025-11-25"
    r, _ = ex.request("tools/list", {"cursor": "garbage!"})
    assert r["error"]["code"] == -32602
    assert ex.close() == 0


def test_the_fake_imports_only_the_standard_library():
    out = subprocess.run([*PYTHON, FAKE, "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "--require-bearer" in out.stdout
    src = pathlib.Path(FAKE).read_text()
    imports = {line.split()[1].split(".")[0] for line in src.splitlines() if line.startswith(("import ", "from "))}
    assert imports <= set(sys.stdlib_module_names), imports - set(sys.stdlib_module_names)
