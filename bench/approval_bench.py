#!/usr/bin/env python3
"""Benchmark: many chat streams parked on a tool approval (issue 3's targets).

Starts the scripted fake upstream (tests/fake/fake_upstream.py) and `warden serve --upstream`,
then opens N streaming requests whose model turn asks for a gated `python` call
(confirm_code_execution). Each stream parks on its approval after sending `tool_start`.

Reports, for warden's process:
  * RSS and thread count with 0, N/10 and N streams parked (threads must not grow with N);
  * the time from sending POST /api/inference/tool-confirm (deny) to that stream's `tool_end`
    frame, p50/p99 over every stream, decided one at a time over a keep-alive connection;
  * the same for an allow on a sample (it spawns python, so it is reported, not targeted);
  * the baseline in the same process: a GET /health round trip on the same connection, and the
    ratio of the confirm latency to it.
  * the approvals inbox (issue 10) in place: one client follows GET /api/inference/approvals/stream
    the whole time (it must see N approval_requested and N approval_settled events), and
    GET /api/inference/approvals is timed with all N parked (it must list all N).
Targets: RSS < 100 MB at N = 10,000 (issue 23; issue 3's was 300 MB); threads independent of N;
deny p99 < 5 ms. The RSS of a parked stream is mostly its coroutine frames (every frame of the
chain from the connection down to the approval wait, each holding all its locals) and what the
loop keeps for the call (its plan, the approval ticket); `heaptrack` on warden shows them.

Stdlib only (asyncio). Raises RLIMIT_NOFILE for itself and warden (run as root or with a high
hard limit). Usage: python bench/approval_bench.py --warden build/app/warden [--streams 10000]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import pathlib
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
RSS_TARGET_MB = 100  # with N = 10,000 parked


def proc_status(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            out[k] = v.strip()
    return int(out["VmRSS"].split()[0]) / 1024.0, int(out["Threads"])


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


class ParkedStream:
    def __init__(self, reader, writer):
        self.reader, self.writer = reader, writer
        self.approval_id = None

    async def frame(self):
        """Next SSE data payload (chunked transfer decoded), or None at the end."""
        while True:
            line = await self.reader.readline()
            if not line:
                return None
            line = line.strip()
            if line.startswith(b"data: "):
                return line[6:]


async def open_stream(port, script_name):
    reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=1 << 20)
    body = json.dumps({"messages": [{"role": "user", "content": f"scenario:script:{script_name}"}],
                       "stream": True, "enable_tools": True, "confirm_code_execution": True}).encode()
    writer.write(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                 b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    await writer.drain()
    s = ParkedStream(reader, writer)
    seen = []
    while True:
        f = await s.frame()
        if f is None:
            raise RuntimeError(f"stream ended before tool_start: {seen[-3:]}")
        seen.append(f)
        if b'"tool_start"' in f:
            s.approval_id = json.loads(f)["approval_id"]
            return s


async def wait_tool_end(s):
    while True:
        f = await s.frame()
        if f is None:
            raise RuntimeError("stream ended before tool_end")
        if b'"tool_end"' in f:
            return json.loads(f)


async def http_keepalive(port):
    return await asyncio.open_connection("127.0.0.1", port)


async def read_response(reader):
    """(status, body) of one Content-Length response."""
    status = await reader.readline()
    length = 0
    while True:
        h = await reader.readline()
        if h in (b"\r\n", b""):
            break
        if h.lower().startswith(b"content-length:"):
            length = int(h.split(b":")[1])
    return int(status.split()[1]), await reader.readexactly(length)


async def roundtrip(conn, method, path, body=b""):
    reader, writer = conn
    writer.write(b"%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                 % (method, path, len(body), body))
    await writer.drain()
    return (await read_response(reader))[0]


class InboxFollower:
    """Follows the approvals SSE feed and counts its events."""

    def __init__(self):
        self.requested = 0
        self.settled = 0
        self.task = None

    async def start(self, port):
        reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=1 << 20)
        writer.write(b"GET /api/inference/approvals/stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        await writer.drain()
        status = await reader.readline()
        assert b" 200 " in status, status
        self.writer = writer
        self.task = asyncio.ensure_future(self._read(reader))

    async def _read(self, reader):
        while True:
            line = await reader.readline()
            if not line:
                return
            if line.startswith(b"event: approval_requested"):
                self.requested += 1
            elif line.startswith(b"event: approval_settled"):
                self.settled += 1


async def timed_get(conn, path):
    """(status, body bytes, ms) of one GET on a keep-alive connection."""
    reader, writer = conn
    t = time.perf_counter()
    writer.write(b"GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % path)
    await writer.drain()
    status, body = await read_response(reader)
    return status, body, (time.perf_counter() - t) * 1000


async def park(port, script_name, n, batch):
    streams = []
    for i in range(0, n, batch):
        streams += await asyncio.gather(*(open_stream(port, script_name) for _ in range(min(batch, n - i))))
    return streams


async def main_async(args, warden_pid, port):
    report = {}
    rss0, thr0 = proc_status(warden_pid)
    report["idle"] = {"rss_mb": rss0, "threads": thr0}
    inbox = InboxFollower()
    await inbox.start(port)
    t0 = time.time()
    first = await park(port, "bench", args.streams // 10, args.batch)
    rss1, thr1 = proc_status(warden_pid)
    report["parked_10pct"] = {"streams": len(first), "rss_mb": rss1, "threads": thr1}
    rest = await park(port, "bench", args.streams - len(first), args.batch)
    streams = first + rest
    park_s = time.time() - t0
    await asyncio.sleep(1.0)
    rss2, thr2 = proc_status(warden_pid)
    report["parked_all"] = {"streams": len(streams), "rss_mb": rss2, "threads": thr2, "park_seconds": park_s}
    print(f"parked {len(streams)} streams in {park_s:.1f} s: RSS {rss2:.1f} MB, threads {thr2} "
          f"(idle {rss0:.1f} MB / {thr0} threads; {len(first)} parked: {rss1:.1f} MB / {thr1})", flush=True)

    conn = await http_keepalive(port)
    st, body, list_ms = await timed_get(conn, b"/api/inference/approvals")
    listed = len(json.loads(body)["data"]) if st == 200 else -1
    report["inbox_list"] = {"status": st, "listed": listed, "ms": list_ms, "bytes": len(body)}
    print(f"GET /api/inference/approvals with {len(streams)} parked: {listed} listed, {len(body) / 1e6:.1f} MB "
          f"in {list_ms:.0f} ms; the SSE follower has seen {inbox.requested} approval_requested", flush=True)
    base = []
    for _ in range(500):
        t = time.perf_counter()
        assert await roundtrip(conn, b"GET", b"/health") == 200
        base.append((time.perf_counter() - t) * 1000)

    allow_sample = set(range(0, len(streams), max(1, len(streams) // args.allow_sample)))
    deny_ms, allow_ms = [], []
    for i, s in enumerate(streams):
        decision = "allow" if i in allow_sample else "deny"
        body = json.dumps({"approval_id": s.approval_id, "decision": decision}).encode()
        t = time.perf_counter()
        st = await roundtrip(conn, b"POST", b"/api/inference/tool-confirm", body)
        end = await wait_tool_end(s)
        ms = (time.perf_counter() - t) * 1000
        assert st == 200, st
        if decision == "deny":
            assert end["result"] == "The user declined to run this tool call.", end
            deny_ms.append(ms)
        else:
            allow_ms.append(ms)
        s.writer.close()
    for _ in range(100):  # let the follower read the last settled events
        if inbox.settled >= len(streams):
            break
        await asyncio.sleep(0.05)
    report["inbox_follower"] = {"requested": inbox.requested, "settled": inbox.settled}
    inbox.writer.close()
    report["health_rtt_ms"] = {"p50": statistics.median(base), "p99": pct(base, 99)}
    report["deny_confirm_to_tool_end_ms"] = {"n": len(deny_ms), "p50": statistics.median(deny_ms),
                                             "p99": pct(deny_ms, 99), "max": max(deny_ms)}
    report["allow_confirm_to_tool_end_ms"] = {"n": len(allow_ms), "p50": statistics.median(allow_ms),
                                              "p99": pct(allow_ms, 99)}
    report["ratio_deny_p50_to_health_p50"] = report["deny_confirm_to_tool_end_ms"]["p50"] / report["health_rtt_ms"]["p50"]
    return report


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--warden", default=str(ROOT / "build" / "app" / "warden"))
    ap.add_argument("--streams", type=int, default=10000)
    ap.add_argument("--batch", type=int, default=250)
    ap.add_argument("--allow-sample", type=int, default=50)
    ap.add_argument("--json")
    args = ap.parse_args()
    # Each process (this client, warden) holds one socket per stream.
    want = args.streams + 512
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, want), max(hard, want)))
    except (ValueError, PermissionError) as e:
        sys.exit(f"cannot raise the open-file limit to {want} (hard limit {hard}: {e}); lower --streams")

    home = tempfile.mkdtemp(prefix="warden-bench-")
    fake = subprocess.Popen([sys.executable, str(ROOT / "tests" / "fake" / "fake_upstream.py"), "0"],
                            stdout=subprocess.PIPE, text=True)
    fport = int(re.search(r"PORT (\d+)", fake.stdout.readline()).group(1))
    import urllib.request
    turns = [{"tool_calls": [{"name": "python", "arguments": json.dumps({"code": "print(1)"})}]}, {"content": "ok"}]
    urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{fport}/script",
                                                  data=json.dumps({"name": "bench", "turns": turns}).encode()))
    w = subprocess.Popen([args.warden, "serve", "--port", "0", "--upstream", f"http://127.0.0.1:{fport}/v1",
                          "--sse-ping-interval", "3600000", "--log-level", "warn"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                         env={**os.environ, "WARDEN_HOME": home})
    try:
        line = w.stdout.readline()
        m = re.search(r"http://[^:]+:(\d+)/v1", line)
        if not m:
            sys.exit(f"warden did not start: {line!r}")
        report = asyncio.run(main_async(args, w.pid, int(m.group(1))))
    finally:
        w.terminate()
        fake.terminate()
        w.wait(10)
        fake.wait(10)
    d = report["deny_confirm_to_tool_end_ms"]
    a = report["allow_confirm_to_tool_end_ms"]
    h = report["health_rtt_ms"]
    p = report["parked_all"]
    print(f"tool-confirm → tool_end, deny ({d['n']} streams): p50 {d['p50']:.2f} ms, p99 {d['p99']:.2f} ms, max {d['max']:.2f} ms")
    print(f"tool-confirm → tool_end, allow (python runs; {a['n']} streams): p50 {a['p50']:.2f} ms, p99 {a['p99']:.2f} ms")
    print(f"baseline GET /health round trip: p50 {h['p50']:.3f} ms, p99 {h['p99']:.3f} ms; "
          f"deny p50 / health p50 = {report['ratio_deny_p50_to_health_p50']:.2f}")
    print(f"targets: RSS < {RSS_TARGET_MB} MB: {'met' if p['rss_mb'] < RSS_TARGET_MB else 'MISSED'} ({p['rss_mb']:.1f} MB); "
          f"threads independent of streams: {'met' if p['threads'] == report['parked_10pct']['threads'] else 'MISSED'} "
          f"({report['parked_10pct']['threads']} → {p['threads']}); deny p99 < 5 ms: "
          f"{'met' if d['p99'] < 5 else 'MISSED'} ({d['p99']:.2f} ms)")
    i, f = report["inbox_list"], report["inbox_follower"]
    n = p["streams"]
    print(f"inbox: list {i['listed']}/{n} in {i['ms']:.0f} ms; SSE follower saw {f['requested']}/{n} requested and "
          f"{f['settled']}/{n} settled: {'met' if i['listed'] == n and f['requested'] == n and f['settled'] == n else 'MISSED'}")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
