#!/usr/bin/env python3
"""What the Anthropic surface costs: /v1/messages through warden against the same completion
streamed directly from the llama-server warden runs (and against warden's OpenAI route).

Starts `warden serve --port 0` on the real default model (run_bench.py's Warden and key
handling), then streams one prompt, temperature 0, in rounds that alternate the targets (direct
llama-server /v1/chat/completions, warden /v1/chat/completions, warden /v1/messages, and warden's
chat with a client tool with healing on and off: the TTFT ratio of issue 24) so drift hits all
alike. Per request: TTFT (request sent → first frame with text: a content delta,
or an Anthropic text_delta), tokens/s (text frames after the first / time between first and
last), total. Reports medians and the ratios to the direct target, measured in the same process.

Stdlib only. Usage: python bench/anthropic_bench.py --warden build/app/warden [--rounds 10]
"""

from __future__ import annotations

import argparse
import http.client
import json
import shutil
import statistics
import sys
import time

import run_bench as rb


def stream_messages(url: str, body: bytes, timeout_s: float) -> rb.Sample:
    """One /v1/messages stream; the same timings as run_bench.stream_chat."""
    host, port = rb._host_port(url)
    conn = http.client.HTTPConnection(host, port, timeout=timeout_s)
    try:
        conn.connect()
        t0 = time.perf_counter()
        conn.request("POST", "/v1/messages", body=body, headers={"Content-Type": "application/json",
                                                                  "anthropic-version": "2023-06-01"})
        resp = conn.getresponse()
        if resp.status != 200:
            raise rb.RequestError(f"messages: HTTP {resp.status}: {resp.read(2000)!r}")
        first = last = None
        frames = 0
        stopped = False
        while True:
            raw = resp.readline()
            now = time.perf_counter()
            if not raw:
                break
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            if not line.startswith("data:"):
                continue
            obj = json.loads(line[5:])
            if obj.get("type") == "error":
                raise rb.RequestError(f"messages: error event {obj}")
            if obj.get("type") == "content_block_delta" and obj["delta"].get("type") == "text_delta":
                frames += 1
                first = first if first is not None else now
                last = now
            if obj.get("type") == "message_stop":
                stopped = True
        t_end = time.perf_counter()
        if not stopped or first is None:
            raise rb.RequestError(f"messages: stream ended without message_stop or text ({frames} frames)")
        tok_s = (frames - 1) / (last - first) if frames >= 2 and last > first else None
        return rb.Sample("messages", 0, 0, (first - t0) * 1e3, (t_end - t0) * 1e3, frames, tok_s)
    except (OSError, http.client.HTTPException) as e:
        raise rb.RequestError(f"messages: {type(e).__name__}: {e}") from e
    finally:
        conn.close()


def median(xs: list[float]) -> float:
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--warden", required=True)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--timeout", type=float, default=180.0)
    args = ap.parse_args()

    key, key_file, key_folder = rb.write_llama_key_file()
    rb.AUTH_HEADERS["Authorization"] = f"Bearer {key}"
    warden = rb.Warden([args.warden, "serve", "--port", "0", "--log-level", "info", "--llama-api-key-file", key_file])
    try:
        try:
            warden.start()
            warden.wait_ready(300)
        finally:
            shutil.rmtree(key_folder, ignore_errors=True)
        messages = [{"role": "user", "content": rb.PROMPT}]
        chat = json.dumps({"model": warden.model_id, "messages": messages, "stream": True, "temperature": 0,
                           "seed": 1, "max_tokens": args.max_tokens}).encode()
        anth = json.dumps({"model": warden.model_id, "messages": messages, "stream": True, "temperature": 0,
                           "max_tokens": args.max_tokens}).encode()
        # Healing (engine/healing.h) on a plain-text answer: the same request with a client tool,
        # auto_heal_tool_calls on (the typed path through the healing stage) and off (passthrough).
        tool = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}
        heal = {h: json.dumps({"model": warden.model_id, "messages": messages, "stream": True, "temperature": 0,
                               "seed": 1, "max_tokens": args.max_tokens, "tools": [tool],
                               "auto_heal_tool_calls": h}).encode() for h in (True, False)}
        targets = {
            "direct": lambda: rb.stream_chat(warden.llama_url, chat, args.timeout, "direct", 0, 0),
            "openai": lambda: rb.stream_chat(warden.warden_url, chat, args.timeout, "openai", 0, 0),
            "messages": lambda: stream_messages(warden.warden_url, anth, args.timeout),
            "heal_on": lambda: rb.stream_chat(warden.warden_url, heal[True], args.timeout, "heal_on", 0, 0),
            "heal_off": lambda: rb.stream_chat(warden.warden_url, heal[False], args.timeout, "heal_off", 0, 0),
        }
        samples: dict[str, list[rb.Sample]] = {k: [] for k in targets}
        for r in range(args.warmup + args.rounds):
            for name, run in targets.items():
                s = run()
                if r >= args.warmup:
                    samples[name].append(s)
        print(f"model {warden.model_id}, {args.rounds} rounds, max_tokens {args.max_tokens}")
        print(f"{'target':10} {'TTFT p50 ms':>12} {'tok/s p50':>10} {'total p50 ms':>13} {'frames':>7}")
        stats = {}
        for name, ss in samples.items():
            stats[name] = (median([s.ttft_ms for s in ss]), median([s.tok_s for s in ss]),
                           median([s.total_ms for s in ss]), median([s.frames for s in ss]))
            print(f"{name:10} {stats[name][0]:12.2f} {stats[name][1]:10.1f} {stats[name][2]:13.1f} {stats[name][3]:7.0f}")
        d = stats["direct"]
        for name in ("openai", "messages"):
            s = stats[name]
            print(f"{name}: TTFT overhead {s[0] - d[0]:+.2f} ms, throughput ratio {s[1] / d[1]:.3f}, "
                  f"total ratio {s[2] / d[2]:.3f}")
        on, off = stats["heal_on"], stats["heal_off"]
        print(f"healing on/off (client tools, a plain-text answer): TTFT ratio {on[0] / off[0]:.3f} "
              f"({on[0] - off[0]:+.2f} ms; target ≤ 1.05), throughput ratio {on[1] / off[1]:.3f}")
        return 0
    except rb.RequestError as e:
        print(f"error: {e}", file=sys.stderr)
        warden.dump_logs()
        return rb.EXIT_REQUEST_FAILED
    finally:
        warden.stop()


if __name__ == "__main__":
    sys.exit(main())
