#!/usr/bin/env python3
"""Large request bodies on each route: time to answer 50k, 100k and 200k one-word messages on
/v1/chat/completions, /v1/messages and /v1/responses (issue 23, part 1: parsing must be linear).

Starts `warden serve --port 0` on the scripted fake upstream (tests/fake/fake_upstream.py, which
answers "ok"), sends each body twice per size and keeps the faster, and reports seconds per size
with the growth ratio 200k/50k (linear ≈ 4; the quadratic parse this replaced gave ≈ 16) and the
target: the 200k body answered in under 1 s. Exit code 0 when it measured (targets missed or met),
2 when warden or the fake failed to start, 3 when a request failed.

Usage: python bench/parse_bench.py --warden build/app/warden [--json out.json]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import pathlib
import sys
import tempfile
import time

from procs import StartFailed, start_with_port

ROOT = pathlib.Path(__file__).resolve().parent.parent
SIZES = (50_000, 100_000, 200_000)
TARGET_S = 1.0


def body_for(route: str, n: int, scenario: str) -> bytes:
    msgs = [{"role": "user", "content": "w"} for _ in range(n - 1)]
    msgs.append({"role": "user", "content": scenario})
    if route == "/v1/chat/completions":
        return json.dumps({"model": "m", "messages": msgs}).encode()
    if route == "/v1/messages":
        return json.dumps({"model": "m", "max_tokens": 16, "messages": msgs}).encode()
    items = [{"role": m["role"], "content": m["content"]} for m in msgs]
    return json.dumps({"model": "m", "input": items, "store": False}).encode()


def post(port: int, route: str, body: bytes) -> float:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    t0 = time.perf_counter()
    conn.request("POST", route, body=body, headers={"Content-Type": "application/json",
                                                    "anthropic-version": "2023-06-01"})
    r = conn.getresponse()
    data = r.read()
    took = time.perf_counter() - t0
    conn.close()
    if r.status != 200:
        print(f"{route}: HTTP {r.status}: {data[:300]!r}", file=sys.stderr)
        raise SystemExit(3)
    return took


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--warden", required=True)
    ap.add_argument("--json")
    args = ap.parse_args()
    home = tempfile.mkdtemp(prefix="warden-parse-bench-")
    env = dict(os.environ, WARDEN_HOME=home)
    try:
        fake, fake_port = start_with_port([sys.executable, str(ROOT / "tests" / "fake" / "fake_upstream.py"), "0"],
                                          r"PORT (\d+)", os.path.join(home, "fake.log"))
        warden, port = start_with_port([args.warden, "serve", "--port", "0", "--upstream",
                                        f"http://127.0.0.1:{fake_port}/v1", "--log-level", "warn"],
                                       r"http://[^:]+:(\d+)/v1", os.path.join(home, "warden.log"), env=env)
    except StartFailed as e:
        print(f"parse_bench: {e}", file=sys.stderr)
        return 2
    results = {}
    try:
        print("large bodies (one-word messages), seconds to the answer; target: 200k < 1 s, 200k/50k ≈ 4")
        print(f"{'route':24} {'50k':>8} {'100k':>8} {'200k':>8} {'200k/50k':>9}  target")
        for route in ("/v1/chat/completions", "/v1/messages", "/v1/responses"):
            row = {}
            for n in SIZES:
                body = body_for(route, n, "ok")
                row[n] = min(post(port, route, body) for _ in range(2))
            ratio = row[SIZES[-1]] / row[SIZES[0]]
            met = "met" if row[SIZES[-1]] < TARGET_S else "MISSED"
            print(f"{route:24} {row[50_000]:8.3f} {row[100_000]:8.3f} {row[200_000]:8.3f} {ratio:9.2f}  {met}")
            results[route] = {str(k): v for k, v in row.items()}
    finally:
        warden.terminate()
        fake.terminate()
        warden.wait(10)
        fake.wait(10)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
