#!/usr/bin/env python3
"""What a stored response costs (issue 28 §6, docs/scale-out.md): warden's memory (RSS) and its
database on disk (warden.db with its write-ahead log) before and after N Responses requests with
store: true, each a new conversation of one user message of --chars characters answered by the
scripted fake upstream (tests/fake/fake_upstream.py), then N more that continue the first ones
through previous_response_id (a chain carries its history).

Prints bytes per stored response, on disk and in memory. Reported, not targeted: stored responses
live in SQLite, so memory should not grow with them (the page cache aside).

Stdlib only. Usage: python bench/stored_response_bench.py --warden build/app/warden [--responses 2000]
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import pathlib
import sys
import tempfile

from procs import start_with_port, StartFailed

ROOT = pathlib.Path(__file__).resolve().parent.parent
SERVING_RE = r"warden: (?:serving .* at|listening at) http://[^:]+:(\d+)/v1"


def rss_bytes(pid: int) -> int:
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def db_bytes(home: str) -> int:
    return sum(os.path.getsize(os.path.join(home, f)) for f in os.listdir(home) if f.startswith("warden.db"))


def post(conn, body: dict) -> dict:
    conn.request("POST", "/v1/responses", body=json.dumps(body), headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    data = r.read()
    if r.status != 200:
        raise RuntimeError(f"HTTP {r.status}: {data[:300]!r}")
    return json.loads(data)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--warden", default=str(ROOT / "build" / "app" / "warden"))
    ap.add_argument("--responses", type=int, default=2000)
    ap.add_argument("--chars", type=int, default=500)
    args = ap.parse_args()
    folder = tempfile.mkdtemp(prefix="warden-stored-bench-")
    home = os.path.join(folder, "home")
    os.mkdir(home)
    procs = []
    try:
        fake, fake_port = start_with_port([sys.executable, str(ROOT / "tests" / "fake" / "fake_upstream.py"), "0"],
                                          r"PORT (\d+)", os.path.join(folder, "fake.log"))
        procs.append(fake)
        w, port = start_with_port([args.warden, "serve", "--port", "0", "--upstream",
                                   f"http://127.0.0.1:{fake_port}/v1"], SERVING_RE, os.path.join(folder, "warden.log"),
                                  env=dict(os.environ, WARDEN_HOME=home))
        procs.append(w)
    except StartFailed as e:
        print(f"stored response bench: {e}", file=sys.stderr)
        return 2
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        text = ("lorem ipsum " * (args.chars // 12 + 1))[: args.chars]
        post(conn, {"model": "m", "input": "warm up", "store": True})
        rss0, db0 = rss_bytes(w.pid), db_bytes(home)
        ids = [post(conn, {"model": "m", "input": f"{i} {text}", "store": True})["id"] for i in range(args.responses)]
        rss1, db1 = rss_bytes(w.pid), db_bytes(home)
        for i, prev in enumerate(ids):
            post(conn, {"model": "m", "input": f"again {i}", "store": True, "previous_response_id": prev})
        rss2, db2 = rss_bytes(w.pid), db_bytes(home)
        n = args.responses
        print(f"stored responses: {n} new conversations ({args.chars}-character input), then {n} continuations")
        print(f"  disk (warden.db + WAL): {(db1 - db0) / n / 1024:.2f} KiB per new response, "
              f"{(db2 - db1) / n / 1024:.2f} KiB per continuation (the WAL is checkpointed as it grows)")
        print(f"  memory (RSS): {(rss1 - rss0) / n / 1024:.2f} KiB per new response, "
              f"{(rss2 - rss1) / n / 1024:.2f} KiB per continuation; RSS {rss0 / 2**20:.1f} -> {rss2 / 2**20:.1f} MiB "
              "(SQLite's page cache, bounded: stored responses live on disk)")
        return 0
    finally:
        for p in procs:
            p.terminate()
            p.wait(timeout=20)


if __name__ == "__main__":
    sys.exit(main())
