#!/usr/bin/env python3
"""Records what the reference MCP server @modelcontextprotocol/server-everything (pinned in
tests/node/package.json, installed by `scripts/setup nodedeps`) says over stdio, as the raw
JSON-RPC messages on the wire, into tests/fake/recordings/mcp-everything.json.

tests/integration/test_mcp_fake.py compares the shapes (keys and JSON types) of the scripted
server tests/fake/mcp_server.py with this recording, so the fake stays a faithful stand-in.

The flow: initialize (2025-11-25, elicitation form and url declared), notifications/initialized,
tools/list (every page), tools/call echo, tools/call trigger-long-running-operation with a
progressToken, trigger-elicitation-request and trigger-url-elicitation (each elicitation/create
declined), an unknown tool, ping. Standard library only; the test imports `Exchange` and `flow`.

Usage: record_mcp_everything.py [OUT]    (default: tests/fake/recordings/mcp-everything.json)
"""
import json
import pathlib
import queue
import shutil
import subprocess
import sys
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
PACKAGE = "@modelcontextprotocol/server-everything"
EVERYTHING = ROOT / "tests" / "node" / "node_modules" / PACKAGE / "dist" / "index.js"
OUT = ROOT / "tests" / "fake" / "recordings" / "mcp-everything.json"
CLIENT_INFO = {"name": "warden-recorder", "version": "1.0.0"}


class Exchange:
    """Newline-delimited JSON-RPC with a child over its stdin/stdout; every message kept."""

    def __init__(self, argv, stderr=subprocess.DEVNULL, timeout=60):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr)
        self.q = queue.Queue()
        self.timeout = timeout
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.p.stdout:
            if line.strip():
                self.q.put(json.loads(line))
        self.q.put(None)

    def send(self, msg):
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()

    def recv(self, timeout=None):
        msg = self.q.get(timeout=timeout or self.timeout)
        if msg is None:
            raise EOFError(f"the server closed stdout (exit status {self.p.wait()})")
        return msg

    def request(self, method, params=None, on_request=None):
        """Sends a request; returns (its response, the messages that came before it).
        `on_request(msg)` answers the server's own requests (the result dict, or None for a
        -32601 error)."""
        self.next_id += 1
        rid = self.next_id
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        before = []
        deadline = time.monotonic() + self.timeout
        while True:
            m = self.recv(max(0.1, deadline - time.monotonic()))
            if m.get("id") == rid and "method" not in m:
                return m, before
            before.append(m)
            if "method" in m and "id" in m:  # a request of the server's
                result = on_request(m) if on_request else None
                if result is None:
                    self.send({"jsonrpc": "2.0", "id": m["id"],
                               "error": {"code": -32601, "message": "Method not found"}})
                else:
                    self.send({"jsonrpc": "2.0", "id": m["id"], "result": result})

    def notify(self, method, params=None):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    def drain(self, seconds):
        """The messages that arrive within `seconds`."""
        out, deadline = [], time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                out.append(self.recv(left))
            except queue.Empty:
                break
        return out

    def close(self):
        try:
            self.p.stdin.close()
        except OSError:
            pass
        try:
            return self.p.wait(10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            return self.p.wait()


def all_tools(ex):
    """tools/list, every page: (the first page's response, every tool)."""
    first, _ = ex.request("tools/list")
    tools, page = list(first["result"]["tools"]), first
    while page["result"].get("nextCursor"):
        page, _ = ex.request("tools/list", {"cursor": page["result"]["nextCursor"]})
        tools += page["result"]["tools"]
    return first, tools


def flow(ex):
    """The everything server's flow; returns the recording's "messages"."""
    caps = {"elicitation": {"form": {}, "url": {}}}
    init, before = ex.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": caps,
                                             "clientInfo": CLIENT_INFO})
    ex.notify("notifications/initialized")
    after_initialized = ex.drain(2.0)  # it registers the tools that need the client's capabilities
    tools_first_page, tools = all_tools(ex)
    names = [t["name"] for t in tools]
    echo, _ = ex.request("tools/call", {"name": "echo", "arguments": {"message": "hello"}})
    long_call, progress = ex.request("tools/call", {"name": "trigger-long-running-operation",
                                                    "arguments": {"duration": 0.2, "steps": 2},
                                                    "_meta": {"progressToken": "progress-1"}})
    seen = {}

    def decline(m):
        seen.setdefault(m["method"], []).append(m)
        return {"action": "decline"} if m["method"] == "elicitation/create" else None

    form_call, _ = ex.request("tools/call", {"name": "trigger-elicitation-request", "arguments": {}},
                              on_request=decline)
    url_call, _ = ex.request("tools/call", {"name": "trigger-url-elicitation",
                                            "arguments": {"url": "https://example.com/authorize?x=1",
                                                          "message": "Please authorize."}},
                             on_request=decline)
    unknown, _ = ex.request("tools/call", {"name": "no-such-tool", "arguments": {}})
    ping, _ = ex.request("ping")
    elicitations = seen.get("elicitation/create", [])
    return {
        "before_initialize_response": before,
        "initialize": init,
        "after_initialized": after_initialized,
        "tools_list_first_page": tools_first_page,
        "tool_names": names,
        "tools_call_echo": echo,
        "progress_notifications": [m for m in progress if m.get("method") == "notifications/progress"],
        "tools_call_long_running": long_call,
        "elicitation_create_form": next((m for m in elicitations if (m.get("params") or {}).get("mode") != "url"), None),
        "elicitation_create_url": next((m for m in elicitations if (m.get("params") or {}).get("mode") == "url"), None),
        "tools_call_elicitation_declined": form_call,
        "tools_call_url_elicitation_declined": url_call,
        "tools_call_unknown_tool": unknown,
        "ping": ping,
    }


def main():
    out = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else OUT
    node = shutil.which("node")
    if node is None or not EVERYTHING.is_file():
        sys.exit(f"need node and {EVERYTHING}: run `scripts/setup nodedeps`")
    version = json.loads((EVERYTHING.parent.parent / "package.json").read_text())["version"]
    ex = Exchange([node, str(EVERYTHING), "stdio"])
    try:
        messages = flow(ex)
    finally:
        ex.close()
    rec = {
        "recorded_by": "tests/fake/record_mcp_everything.py",
        "server": f"{PACKAGE}@{version}",
        "command": f"node tests/node/node_modules/{PACKAGE}/dist/index.js stdio",
        "node": subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip(),
        "messages": messages,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rec, indent=2, ensure_ascii=False) + "\n")
    print(f"recorded {len(messages)} exchanges of {PACKAGE}@{version} into {out}")


if __name__ == "__main__":
    main()
