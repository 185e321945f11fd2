#!/usr/bin/env python3
"""Benchmark warden's proxy overhead against the llama-server it runs.

Starts `warden serve --port 0 ...`, learns both URLs (warden's from its stdout
"serving" line, llama-server's from the "llama-server ready at ..." log line on
stderr), then streams the same chat completion directly to llama-server and
through warden, alternating the two every round so drift hits both alike.

Per request it records:
  * TTFT: from sending the request to the first SSE `data:` frame whose
    choices[0].delta has non-empty `content` (or `reasoning_content`);
  * tokens/s: content frames after the first / (last frame time - first);
  * total: from sending the request to `[DONE]` (or end of stream).

Stdlib only. Exit code: 0 when the measurement completed (even when a target
is missed), 2 when warden failed to start, 3 when a request failed.

Usage: python bench/run_bench.py --warden build/app/warden [--rounds 12]
       [--rounds-c4 6] [--warmup 2] [--max-tokens 64] [--json out.json]
"""

from __future__ import annotations

import argparse
import collections
import http.client
import json
import os
import re
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field, asdict

PROMPT = "Write one sentence about the sea."

SERVING_RE = re.compile(r"warden: serving (\S+) at (http://[^\s/]+)(/v1)?")
LLAMA_READY_RE = re.compile(r"llama-server ready at (http://[^\s/]+)")
LLAMA_PID_RE = re.compile(r"starting llama-server \(pid (\d+)\)")
# llama-server only answers requests that carry its key (so nothing else on the machine can
# use it directly). The benchmark picks the key itself, hands it to warden with
# --llama-api-key-file (a 0600 file in a 0700 temp folder, removed once warden has read it) and
# sends it on every request (warden itself ignores the header unless it has --api-key of its own).
AUTH_HEADERS: dict[str, str] = {}


def write_llama_key_file() -> tuple[str, str, str]:
    """A random key in a fresh private file: (key, file, folder to remove)."""
    key = secrets.token_hex(16)
    folder = tempfile.mkdtemp(prefix="warden-bench-key-")  # 0700
    path = os.path.join(folder, "key")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(key + "\n")
    return key, path, folder

EXIT_START_FAILED = 2
EXIT_REQUEST_FAILED = 3


class StartError(Exception):
    pass


class RequestError(Exception):
    pass


# --------------------------------------------------------------------------
# warden process handling


class Warden:
    """The warden child: its two output pipes are drained by threads."""

    def __init__(self, argv: list[str]):
        self.argv = argv
        self.proc: subprocess.Popen | None = None
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=60)
        self.stdout_tail: collections.deque[str] = collections.deque(maxlen=20)
        self.warden_url: str | None = None
        self.model_id: str | None = None
        self.llama_url: str | None = None
        self.llama_pid: int | None = None
        self._serving = threading.Event()
        self._llama_ready = threading.Event()
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        self.proc = subprocess.Popen(
            self.argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
            bufsize=1,
            # Own process group: a Ctrl-C in the terminal reaches only this
            # script, which then shuts warden down in order.
            start_new_session=True,
        )
        for name, stream, fn in (
            ("warden-stdout", self.proc.stdout, self._on_stdout),
            ("warden-stderr", self.proc.stderr, self._on_stderr),
        ):
            t = threading.Thread(target=self._drain, args=(stream, fn),
                                 name=name, daemon=True)
            t.start()
            self._threads.append(t)

    @staticmethod
    def _drain(stream, fn) -> None:
        try:
            for line in stream:
                fn(line.rstrip("\r\n"))
        except (OSError, ValueError):
            pass

    def _on_stdout(self, line: str) -> None:
        self.stdout_tail.append(line)
        m = SERVING_RE.search(line)
        if m and not self._serving.is_set():
            self.model_id = m.group(1)
            self.warden_url = m.group(2)
            self._serving.set()

    def _on_stderr(self, line: str) -> None:
        self.stderr_tail.append(line)
        p = LLAMA_PID_RE.search(line)
        if p and self.llama_pid is None:
            self.llama_pid = int(p.group(1))
        m = LLAMA_READY_RE.search(line)
        if m and not self._llama_ready.is_set():
            self.llama_url = m.group(1)
            self._llama_ready.set()

    def wait_ready(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._serving.is_set() and self._llama_ready.is_set():
                return
            rc = self.proc.poll()
            if rc is not None:
                time.sleep(0.2)  # let the drain threads catch the last lines
                raise StartError(f"warden exited with code {rc} before it was ready")
            time.sleep(0.05)
        missing = []
        if not self._serving.is_set():
            missing.append("the 'warden: serving ...' line on stdout")
        if not self._llama_ready.is_set():
            missing.append("the 'llama-server ready at ...' line on stderr")
        raise StartError(f"warden not ready after {timeout_s:.0f} s: missing "
                         + " and ".join(missing))

    def stop(self) -> None:
        p = self.proc
        if p is None:
            return
        if p.poll() is None:
            try:
                p.send_signal(signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                print("warden did not exit 10 s after SIGTERM; sending SIGKILL",
                      file=sys.stderr)
                try:
                    # warden's own group (start_new_session): takes any
                    # llama-server it left in that group with it.
                    os.killpg(p.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    p.kill()
                p.wait(timeout=10)
        for t in self._threads:
            t.join(timeout=2)

    def dump_logs(self) -> None:
        if self.stdout_tail:
            print("--- warden stdout (tail) ---", file=sys.stderr)
            for line in self.stdout_tail:
                print(line, file=sys.stderr)
        if self.stderr_tail:
            print("--- warden stderr (tail) ---", file=sys.stderr)
            for line in self.stderr_tail:
                print(line, file=sys.stderr)


# --------------------------------------------------------------------------
# one streamed request


@dataclass
class Sample:
    target: str            # "direct" or "warden"
    round: int
    stream: int            # thread index within a concurrent batch
    ttft_ms: float
    total_ms: float
    frames: int            # content frames received
    tok_s: float | None    # None when fewer than 2 content frames


def _host_port(url: str) -> tuple[str, int]:
    m = re.fullmatch(r"http://([^:/]+):(\d+)", url)
    if not m:
        raise ValueError(f"unexpected URL {url!r}")
    return m.group(1), int(m.group(2))


def _delta_has_text(obj: dict) -> bool:
    choices = obj.get("choices") or []
    if not choices:
        return False
    delta = choices[0].get("delta") or {}
    return bool(delta.get("content")) or bool(delta.get("reasoning_content"))


def stream_chat(url: str, body: bytes, timeout_s: float, target: str,
                rnd: int, idx: int) -> Sample:
    host, port = _host_port(url)
    conn = http.client.HTTPConnection(host, port, timeout=timeout_s)
    try:
        conn.connect()  # TCP connect is kept out of the timings
        t0 = time.perf_counter()
        conn.request("POST", "/v1/chat/completions", body=body, headers={
            "Content-Type": "application/json",
            "Accept": "text/event-stream",
            **AUTH_HEADERS,
        })
        resp = conn.getresponse()
        if resp.status != 200:
            text = resp.read(2000).decode("utf-8", "replace")
            raise RequestError(f"{target}: HTTP {resp.status}: {text}")

        first = last = None
        frames = 0
        data_lines: list[str] = []
        last_line = ""
        t_event = None
        done = False
        while not done:
            raw = resp.readline()
            now = time.perf_counter()
            if not raw:
                break  # end of stream
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            if line:
                last_line = line[:160]
            if line.startswith("data:"):
                if not data_lines:
                    t_event = now
                data_lines.append(line[5:].lstrip(" "))
                continue
            if line != "" or not data_lines:
                continue  # comment (": ping"), other field, or stray blank
            payload = "\n".join(data_lines)
            data_lines = []
            if payload.strip() == "[DONE]":
                done = True
                break
            try:
                obj = json.loads(payload)
            except json.JSONDecodeError as e:
                raise RequestError(f"{target}: bad SSE JSON ({e}): {payload[:200]}")
            if "error" in obj:
                raise RequestError(f"{target}: error frame: {json.dumps(obj['error'])[:300]}")
            if _delta_has_text(obj):
                frames += 1
                if first is None:
                    first = t_event
                last = t_event
        t_end = time.perf_counter()
        if data_lines:  # stream ended without the blank line after [DONE]
            if "\n".join(data_lines).strip() == "[DONE]":
                done = True
        if not done:
            # http.client reports a connection closed mid-chunk (or a broken
            # chunk header) as a plain end of stream, hence the detail here.
            raise RequestError(
                f"{target}: stream ended without [DONE] after "
                f"{(t_end - t0) * 1e3:.0f} ms, {frames} content frame(s), "
                f"last line {last_line!r}")
        if first is None:
            raise RequestError(f"{target}: no content frame in the stream")
        tok_s = None
        if frames >= 2 and last > first:
            tok_s = (frames - 1) / (last - first)
        return Sample(target, rnd, idx, (first - t0) * 1e3, (t_end - t0) * 1e3,
                      frames, tok_s)
    except (OSError, http.client.HTTPException) as e:
        raise RequestError(f"{target}: {type(e).__name__}: {e}") from e
    finally:
        conn.close()


def run_batch(url: str, body: bytes, concurrency: int, timeout_s: float,
              target: str, rnd: int) -> list[Sample]:
    """`concurrency` requests started together (barrier), one per thread."""
    if concurrency == 1:
        return [stream_chat(url, body, timeout_s, target, rnd, 0)]
    results: list[Sample | None] = [None] * concurrency
    errors: list[BaseException] = []
    barrier = threading.Barrier(concurrency)

    def worker(i: int) -> None:
        try:
            barrier.wait()
            results[i] = stream_chat(url, body, timeout_s, target, rnd, i)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,), daemon=True)
               for i in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0] if isinstance(errors[0], RequestError) else RequestError(repr(errors[0]))
    return [r for r in results if r is not None]


# --------------------------------------------------------------------------
# statistics


def pct(values: list[float], p: float) -> float:
    """Percentile by linear interpolation (p in 0..100)."""
    xs = sorted(values)
    if not xs:
        return float("nan")
    if len(xs) == 1:
        return xs[0]
    k = (len(xs) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def _mean(xs: list[float]) -> float:
    return statistics.fmean(xs) if xs else float("nan")


def summarize(name: str, concurrency: int, samples: list[Sample]) -> dict:
    by = {t: [s for s in samples if s.target == t] for t in ("direct", "warden")}
    out: dict = {"scenario": name, "concurrency": concurrency}
    for t, ss in by.items():
        ttft = [s.ttft_ms for s in ss]
        tps = [s.tok_s for s in ss if s.tok_s is not None]
        out[t] = {
            "requests": len(ss),
            "ttft_ms_p50": pct(ttft, 50),
            "ttft_ms_p90": pct(ttft, 90),
            "ttft_ms_mean": _mean(ttft),
            "tok_s_mean": _mean(tps),
            "tok_s_p50": pct(tps, 50),
            "total_ms_p50": pct([s.total_ms for s in ss], 50),
            "total_ms_mean": _mean([s.total_ms for s in ss]),
            "frames_mean": _mean([float(s.frames) for s in ss]),
        }
    d, w = out["direct"], out["warden"]
    # Paired differences: per round, warden's median TTFT minus direct's
    # (for c=1 that is just the two requests of the round).
    rounds = sorted({s.round for s in samples})
    paired = []
    for r in rounds:
        dr = [s.ttft_ms for s in by["direct"] if s.round == r]
        wr = [s.ttft_ms for s in by["warden"] if s.round == r]
        if dr and wr:
            paired.append(statistics.median(wr) - statistics.median(dr))
    out["ttft_overhead_ms_diff_of_medians"] = w["ttft_ms_p50"] - d["ttft_ms_p50"]
    out["ttft_overhead_ms_median_paired"] = statistics.median(paired) if paired else float("nan")
    out["ttft_overhead_ms_paired"] = paired
    out["throughput_ratio"] = w["tok_s_mean"] / d["tok_s_mean"] if d["tok_s_mean"] else float("nan")
    out["throughput_ratio_of_medians"] = (w["tok_s_p50"] / d["tok_s_p50"]
                                          if d["tok_s_p50"] else float("nan"))
    out["total_time_ratio"] = w["total_ms_mean"] / d["total_ms_mean"] if d["total_ms_mean"] else float("nan")
    out["samples"] = [asdict(s) for s in samples]
    return out


def print_table(res: dict) -> None:
    d, w = res["direct"], res["warden"]
    print(f"\n== {res['scenario']} (concurrency {res['concurrency']}, "
          f"{d['requests']} direct + {w['requests']} warden requests) ==")
    rows = [
        ("TTFT p50 (ms)", d["ttft_ms_p50"], w["ttft_ms_p50"], "{:.2f}"),
        ("TTFT p90 (ms)", d["ttft_ms_p90"], w["ttft_ms_p90"], "{:.2f}"),
        ("tokens/s per stream (mean)", d["tok_s_mean"], w["tok_s_mean"], "{:.2f}"),
        ("tokens/s per stream (median)", d["tok_s_p50"], w["tok_s_p50"], "{:.2f}"),
        ("total time per request mean (ms)", d["total_ms_mean"], w["total_ms_mean"], "{:.1f}"),
        ("content frames per request (mean)", d["frames_mean"], w["frames_mean"], "{:.1f}"),
    ]
    print(f"  {'':36}{'direct':>12}{'warden':>12}")
    for label, a, b, fmt in rows:
        print(f"  {label:36}{fmt.format(a):>12}{fmt.format(b):>12}")
    print(f"  TTFT overhead p50, diff of medians : {res['ttft_overhead_ms_diff_of_medians']:+.2f} ms")
    print(f"  TTFT overhead p50, median of paired: {res['ttft_overhead_ms_median_paired']:+.2f} ms")
    print(f"  throughput ratio warden/direct     : {res['throughput_ratio']:.3f}"
          f" (of medians: {res['throughput_ratio_of_medians']:.3f})")
    print(f"  total time ratio warden/direct     : {res['total_time_ratio']:.3f}")


# --------------------------------------------------------------------------
# main


def run_scenario(name: str, concurrency: int, rounds: int, warmup: int,
                 urls: dict[str, str], body: bytes, timeout_s: float) -> dict:
    order = ("direct", "warden")
    print(f"[{name}] warm-up: {warmup} round(s) of {concurrency} request(s), "
          f"alternating direct/warden", flush=True)
    for i in range(warmup):
        t = order[i % 2]
        run_batch(urls[t], body, concurrency, timeout_s, t, -1)
    samples: list[Sample] = []
    t_start = time.monotonic()
    for r in range(rounds):
        # ABAB: each round is a direct batch then a warden batch.
        for t in order:
            samples.extend(run_batch(urls[t], body, concurrency, timeout_s, t, r))
        el = time.monotonic() - t_start
        print(f"[{name}] round {r + 1}/{rounds} done ({el:.1f} s)", flush=True)
    return summarize(name, concurrency, samples)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--warden", required=True, help="path to the warden binary")
    ap.add_argument("--rounds", type=int, default=12,
                    help="measured rounds at concurrency 1 (default 12); a round "
                         "is one direct request then one through warden")
    ap.add_argument("--rounds-c4", type=int, default=None,
                    help="measured rounds at concurrency 4 (default 6, or "
                         "half of --rounds when --rounds is given)")
    ap.add_argument("--warmup", type=int, default=2,
                    help="warm-up rounds per scenario, not measured (default 2)")
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--prompt", default=PROMPT)
    ap.add_argument("--timeout", type=float, default=180.0,
                    help="per-request socket timeout in seconds (default 180)")
    ap.add_argument("--start-timeout", type=float, default=300.0,
                    help="seconds to wait for warden and llama-server (default 300)")
    ap.add_argument("--json", metavar="PATH", help="write a JSON summary here")
    args = ap.parse_args()
    if args.rounds_c4 is None:
        args.rounds_c4 = 6 if args.rounds == 12 else max(1, args.rounds // 2)
    if args.rounds < 1 or args.rounds_c4 < 1 or args.warmup < 0:
        ap.error("rounds must be >= 1 and warmup >= 0")

    # SIGTERM to this script: unwind through `finally` so warden is stopped.
    def on_term(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, on_term)
    # Ctrl-C: a KeyboardInterrupt even where the shell started us with SIGINT
    # ignored (background jobs), so warden is still shut down in order.
    signal.signal(signal.SIGINT, signal.default_int_handler)

    key, key_file, key_folder = write_llama_key_file()
    AUTH_HEADERS["Authorization"] = f"Bearer {key}"
    argv = [args.warden, "serve", "--port", "0", "--log-level", "info",
            "--parallel", "4", "--ctx", "4096", "--llama-api-key-file", key_file]
    warden = Warden(argv)
    t_run = time.monotonic()
    load_start = os.getloadavg()
    try:
        print("starting: " + " ".join(argv), flush=True)
        try:
            warden.start()
            warden.wait_ready(args.start_timeout)
        except (StartError, OSError) as e:
            print(f"error: {e}", file=sys.stderr)
            warden.dump_logs()
            return EXIT_START_FAILED
        finally:  # warden read it at start-up
            shutil.rmtree(key_folder, ignore_errors=True)
        urls = {"direct": warden.llama_url, "warden": warden.warden_url}
        print(f"model {warden.model_id}; direct {urls['direct']}; "
              f"warden {urls['warden']} (ready in {time.monotonic() - t_run:.1f} s)",
              flush=True)

        body = json.dumps({
            "model": warden.model_id,
            "messages": [{"role": "user", "content": args.prompt}],
            "stream": True,
            "temperature": 0,
            "seed": 1,
            "max_tokens": args.max_tokens,
            # llama.cpp's extra: every request decodes exactly max_tokens, so an instruction-tuned
            # default model that stops early does not shrink the workload being compared
            "ignore_eos": True,
        }).encode()

        results = []
        try:
            for name, conc, rounds in (("c1", 1, args.rounds), ("c4", 4, args.rounds_c4)):
                results.append(run_scenario(name, conc, rounds, args.warmup,
                                            urls, body, args.timeout))
        except RequestError as e:
            print(f"error: request failed: {e}", file=sys.stderr)
            warden.dump_logs()
            return EXIT_REQUEST_FAILED

        for res in results:
            print_table(res)

        print()
        verdicts = []
        for res in results:
            ov = res["ttft_overhead_ms_diff_of_medians"]
            ratio = res["throughput_ratio"]
            ok_ttft = ov < 1.0
            ok_tp = ratio >= 0.99
            verdicts.append({"scenario": res["scenario"], "ttft_overhead_ms": ov,
                             "ttft_pass": ok_ttft, "throughput_ratio": ratio,
                             "throughput_pass": ok_tp})
            print(f"[{res['scenario']}] TTFT overhead p50 < 1 ms: "
                  f"{'PASS' if ok_ttft else 'FAIL'} ({ov:.2f} ms)")
            print(f"[{res['scenario']}] throughput ratio >= 0.99: "
                  f"{'PASS' if ok_tp else 'FAIL'} ({ratio:.3f})")
        load_end = os.getloadavg()
        print(f"(run took {time.monotonic() - t_run:.1f} s; load average "
              f"{load_start[0]:.2f} at start, {load_end[0]:.2f} at end on "
              f"{os.cpu_count()} CPU(s); TTFT overhead above is the difference "
              f"of medians; a CPU-only model makes these numbers noisy)")

        if args.json:
            summary = {
                "model": warden.model_id,
                "direct_url": urls["direct"],
                "warden_url": urls["warden"],
                "prompt": args.prompt,
                "max_tokens": args.max_tokens,
                "warmup_rounds": args.warmup,
                "scenarios": results,
                "targets": verdicts,
                "run_seconds": time.monotonic() - t_run,
                "loadavg_1m_start": load_start[0],
                "loadavg_1m_end": load_end[0],
                "cpu_count": os.cpu_count(),
            }
            with open(args.json, "w", encoding="utf-8") as f:
                json.dump(summary, f, indent=2)
                f.write("\n")
            print(f"JSON summary written to {args.json}")
        return 0
    except KeyboardInterrupt:
        print("\ninterrupted; stopping warden", file=sys.stderr)
        return 130
    finally:
        warden.stop()


if __name__ == "__main__":
    sys.exit(main())
