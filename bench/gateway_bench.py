#!/usr/bin/env python3
"""What warden costs as a gateway: warden against the same upstream called directly, and against
LiteLLM's proxy in front of that upstream (issue 23, part 6).

The upstream is bench/fast_upstream (C++, llama-server's shapes, no delay), not the Python fake of
tests/fake/, which costs more per request than a gateway does. The script starts it, then
`warden serve --port 0 --upstream http://127.0.0.1:P/v1` (a fresh WARDEN_HOME in a temp folder,
the default log level, its log in that folder) and LiteLLM's proxy (`litellm --config`, one
model `openai/fast-model` at the same upstream, from the bench venv that `scripts/setup benchdeps`
makes at $WARDEN_HOME/bench-venv; when it is missing or does not start, its column reads
"not run (why)" and the rest goes on).

Targets, each measured non-streaming and streaming (N content chunks a stream, --chunks, 32), at
c=1 and c=8 (threads, one keep-alive connection each per target):
  direct     POST /v1/chat/completions on fast_upstream
  warden     POST /v1/chat/completions through warden (passthrough)
  messages   POST /v1/messages through warden (decoded and re-rendered per chunk)
  responses  POST /v1/responses, store: false, through warden (the same)
  queued     POST /v1/chat/completions through a second warden with the admission queue in the path
             (--upstream-slots 64: every request takes and gives back a slot, none waits)
  pooled     the same through a third warden with the queue and a pool of two engines in the path
             (--upstream given twice, the same fast_upstream: every request is routed, least
             outstanding with round robin, and counted outstanding at its engine)
  litellm    POST /v1/chat/completions through LiteLLM's proxy
Each (mode, c) runs --rounds rounds after a warm-up round; each round sends a batch to every
target in turn (the order rotates per round), so drift hits all alike. The client is cheap: raw
sockets, requests rendered once, responses read to their end (Content-Length or the last chunk)
and checked for HTTP 200 only; one request per target is fully decoded first and must carry the
expected text (N content deltas for a stream).

Per cell: p50 latency (request sent to the response's last byte), p50 time to the first content
chunk for streams, requests/s (requests / the batches' wall time), and the CPU time of the
gateway's process (warden or LiteLLM), of fast_upstream and of this client, per request, and for
streams per forwarded chunk: the upstream's N + 3 JSON events of a stream (role, N content,
finish, usage). CPU comes from /proc/<pid>/stat utime+stime deltas around each batch, raw: for
warden it includes everything the process did meanwhile (HTTP parsing, routing, the upstream
call through libcurl, decoding and re-rendering, the access log line at info level, its upstream
prober thread). fast_upstream's CPU shows that it is not the bottleneck.

Targets (chat passthrough): CPU per forwarded chunk <= 5 us; CPU per non-streaming request
<= 40 us (both over c=1 and c=8 together); added p50 latency at c=1 (warden minus direct)
<= 0.2 ms; throughput at c=8 >= 70 % of direct. /v1/messages and /v1/responses: each of the same
figures within 2x of chat's. LiteLLM's figures are printed beside them as the peer.

Regression guard (not a timed test, never a failure): the ratios of this run (warden against
direct in the same run: latency and throughput ratios, CPU per request and per chunk over
direct's c=1 round trip) are kept in $WARDEN_HOME/bench/gateway.json keyed by commit; a ratio
more than 25 % worse than the latest stored run of another commit is printed as a FLAGGED line.

Stdlib only. Exit code 0 when it measured (targets met or missed), 2 when fast_upstream or warden
failed to start, 3 when a request failed.

Usage: python bench/gateway_bench.py --warden build/app/warden [--upstream build/bench/fast_upstream]
       [--requests 4000] [--litellm-requests 400] [--rounds 8] [--chunks 32] [--json out.json]
       [--no-litellm] [--history PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import gateway_report as report
from procs import StartFailed, start_with_port

ROOT = pathlib.Path(__file__).resolve().parent.parent
CLK_TCK = os.sysconf("SC_CLK_TCK")
SERVING_RE = r"warden: (?:serving .* at|listening at) http://[^:]+:(\d+)/v1"
PROMPT = "Write one sentence about the sea."
NONSTREAM_TOKENS = 5  # max_tokens of a non-streaming request (the upstream's answer has 5 tokens)
MARKER = b" sea"  # the upstream's content piece: the first one found marks the first chunk
EXIT_START_FAILED = 2
EXIT_REQUEST_FAILED = 3


class RequestFailed(Exception):
    pass


# --------------------------------------------------------------------------
# processes


def cpu_seconds(pid: int) -> float:
    """utime + stime of the whole process (every thread, live or gone), in seconds."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        data = f.read()
    fields = data[data.rfind(b")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def litellm_binary(home: str) -> str | None:
    path = os.path.join(home, "bench-venv", "bin", "litellm")
    return path if os.access(path, os.X_OK) else None


def start_litellm(binary: str, upstream_port: int, folder: str, timeout_s: float = 180.0):
    """LiteLLM's proxy with one model at fast_upstream: (process, port)."""
    cfg = os.path.join(folder, "litellm.yaml")
    with open(cfg, "w") as f:
        f.write("model_list:\n  - model_name: fast-model\n    litellm_params:\n"
                f"      model: openai/fast-model\n      api_base: http://127.0.0.1:{upstream_port}/v1\n"
                "      api_key: unused\n")
    port = free_port()
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", LITELLM_TELEMETRY="False",
               NO_PROXY="*", DISABLE_SCHEMA_UPDATE="True")
    log = open(os.path.join(folder, "litellm.log"), "w")
    p = subprocess.Popen([binary, "--config", cfg, "--host", "127.0.0.1", "--port", str(port), "--num_workers", "1"],
                         stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        if p.poll() is not None:
            raise StartFailed(f"litellm exited with code {p.returncode} (see {log.name})")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health/liveliness", timeout=2) as r:
                if r.status == 200:
                    return p, port
        except OSError:
            time.sleep(0.5)
    stop(p)
    raise StartFailed(f"litellm not ready after {timeout_s:.0f} s (see {log.name})")


def stop(p) -> None:
    if p is None or p.poll() is not None:
        return
    p.terminate()
    try:
        p.wait(10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait(10)


# --------------------------------------------------------------------------
# the client: raw keep-alive sockets


class Closed(Exception):
    pass


class Conn:
    """One keep-alive connection; exchange() sends rendered bytes and reads one response."""

    def __init__(self, port: int):
        self.port = port
        self.sock: socket.socket | None = None

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    def exchange(self, request: bytes) -> tuple[float, float | None, bytearray]:
        """(seconds to the last byte, seconds to the first MARKER or None, raw response)."""
        for attempt in range(2):
            if self.sock is None:
                self.sock = socket.create_connection(("127.0.0.1", self.port), timeout=60)
                self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            try:
                return self._exchange(request)
            except Closed:  # the server closed an idle keep-alive connection: once more on a new one
                self.close()
                if attempt:
                    raise RequestFailed(f"port {self.port}: connection closed before a response")
            except OSError as e:
                self.close()
                raise RequestFailed(f"port {self.port}: {type(e).__name__}: {e}") from e
        raise AssertionError("unreachable")

    def _exchange(self, request: bytes):
        s = self.sock
        t0 = time.perf_counter()
        buf = bytearray()
        first = None
        try:
            s.sendall(request)
            d = s.recv(65536)
        except (BrokenPipeError, ConnectionResetError) as e:
            raise Closed() from e
        if not d:
            raise Closed()
        buf += d
        while (head_end := buf.find(b"\r\n\r\n")) < 0:
            d = s.recv(65536)
            if not d:
                raise RequestFailed(f"port {self.port}: connection closed inside a response head")
            buf += d
        head = bytes(buf[:head_end]).lower()
        chunked = b"transfer-encoding: chunked" in head
        length = None if chunked else int(re.search(rb"content-length: *(\d+)", head).group(1))
        if MARKER in buf:
            first = time.perf_counter()
        while not (buf.endswith(b"\r\n0\r\n\r\n") if chunked else len(buf) >= head_end + 4 + length):
            d = s.recv(65536)
            if not d:
                raise RequestFailed(f"port {self.port}: connection closed inside a response body")
            buf += d
            if first is None and MARKER in d:
                first = time.perf_counter()
        t_end = time.perf_counter()
        if b"connection: close" in head:
            self.close()
        return t_end - t0, None if first is None else first - t0, buf


def dechunk(raw: bytes) -> tuple[int, bytes]:
    """(status, body) of one raw HTTP/1.1 response."""
    head, _, rest = raw.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    if b"transfer-encoding: chunked" not in head.lower():
        return status, rest
    body = bytearray()
    while True:
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            return status, bytes(body)
        body += rest[:size]
        rest = rest[size + 2:]


# --------------------------------------------------------------------------
# targets


@dataclass
class Target:
    name: str
    port: int
    path: str
    bodies: dict  # stream (bool) -> rendered request bytes
    pid: int | None  # the gateway's process (None for direct)
    count: int  # requests per cell
    local: threading.local = field(default_factory=threading.local)

    def conn(self) -> Conn:
        c = getattr(self.local, "conn", None)
        if c is None:
            c = self.local.conn = Conn(self.port)
        return c


def render(port: int, path: str, body: dict, extra: str = "") -> bytes:
    data = json.dumps(body, separators=(",", ":")).encode()
    return (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\n{extra}\r\n").encode() + data


def make_target(name: str, port: int, pid, count: int, chunks: int) -> Target:
    msgs = [{"role": "user", "content": PROMPT}]
    # max_tokens is the upstream's chunk count; a non-streaming request asks for NONSTREAM_TOKENS,
    # which matters where warden streams from the upstream to build one answer (messages, responses)
    n = lambda st: chunks if st else NONSTREAM_TOKENS
    if name == "messages":
        path, extra = "/v1/messages", "anthropic-version: 2023-06-01\r\n"
        body = lambda st: {"model": "fast-model", "max_tokens": n(st), "messages": msgs, "stream": st}
    elif name == "responses":
        path, extra = "/v1/responses", ""
        body = lambda st: {"model": "fast-model", "input": PROMPT, "max_output_tokens": n(st), "store": False,
                           "stream": st}
    else:
        path, extra = "/v1/chat/completions", ""
        body = lambda st: {"model": "fast-model", "messages": msgs, "max_tokens": n(st), "stream": st}
    bodies = {st: render(port, path, body(st), extra) for st in (False, True)}
    return Target(name, port, path, bodies, pid, count)


def content_pieces(name: str, payloads: list) -> list[str]:
    """The content text pieces of one decoded stream, in the target's own dialect."""
    out = []
    for p in payloads:
        if name == "messages" and p.get("type") == "content_block_delta":
            out.append(p["delta"].get("text", ""))
        elif name == "responses" and p.get("type") == "response.output_text.delta":
            out.append(p["delta"])
        elif name not in ("messages", "responses") and p.get("choices"):
            out.append(p["choices"][0].get("delta", {}).get("content") or "")
    return [x for x in out if x]


def validate(t: Target, chunks: int) -> None:
    """One request of each mode, fully decoded: HTTP 200 and the upstream's text."""
    for stream in (False, True):
        _, _, raw = t.conn().exchange(t.bodies[stream])
        status, body = dechunk(bytes(raw))
        if status != 200:
            raise RequestFailed(f"{t.name}: HTTP {status}: {body[:300]!r}")
        if not stream:
            if b"The sea is wide." not in body and b" sea" * NONSTREAM_TOKENS not in body:
                raise RequestFailed(f"{t.name}: the answer lacks the upstream's text: {body[:300]!r}")
            continue
        payloads = [json.loads(line[5:]) for line in body.decode().split("\n")
                    if line.startswith("data:") and line[5:].strip() != "[DONE]"]
        pieces = content_pieces(t.name, payloads)
        if pieces != [" sea"] * chunks:
            raise RequestFailed(f"{t.name}: the stream carried {len(pieces)} content pieces, not {chunks} "
                                f"(first: {pieces[:3]})")


# --------------------------------------------------------------------------
# measuring


@dataclass
class Cell:
    requests: int = 0
    wall_s: float = 0.0
    latency_s: list = field(default_factory=list)
    ttft_s: list = field(default_factory=list)
    cpu_s: dict = field(default_factory=lambda: {"gateway": 0.0, "upstream": 0.0, "client": 0.0})


def run_requests(t: Target, stream: bool, n: int) -> list:
    conn, req = t.conn(), t.bodies[stream]
    out = []
    for _ in range(n):
        lat, first, raw = conn.exchange(req)
        if raw[9:12] != b"200":
            raise RequestFailed(f"{t.name}: {bytes(raw[:200])!r}")
        out.append((lat, first))
    return out


def client_cpu() -> float:
    t = os.times()
    return t.user + t.system


def batch(t: Target, stream: bool, c: int, n: int, pool, upstream_pid: int, cell: Cell | None) -> None:
    """n requests to t at concurrency c; adds their figures to cell (None: a warm-up)."""
    pids = {"gateway": t.pid, "upstream": upstream_pid}
    before = {k: cpu_seconds(p) for k, p in pids.items() if p}
    cpu0, t0 = client_cpu(), time.perf_counter()
    if c == 1:
        results = run_requests(t, stream, n)
    else:
        futures = [pool.submit(run_requests, t, stream, n // c) for _ in range(c)]
        results = [r for f in futures for r in f.result()]
    wall = time.perf_counter() - t0
    cpu1 = client_cpu()
    if cell is None:
        return
    for k, v in before.items():
        cell.cpu_s[k] += cpu_seconds(pids[k]) - v
    cell.cpu_s["client"] += cpu1 - cpu0
    cell.requests += len(results)
    cell.wall_s += wall
    cell.latency_s += [r[0] for r in results]
    cell.ttft_s += [r[1] for r in results if r[1] is not None]


def measure(targets: list, rounds: int, upstream_pid: int) -> dict:
    """{(target, stream, c): Cell}, rounds alternating the targets (rotating their order)."""
    cells = {}
    with ThreadPoolExecutor(max_workers=8) as pool:
        for stream in (False, True):
            for c in (1, 8):
                for r in range(rounds + 1):
                    order = targets[r % len(targets):] + targets[:r % len(targets)]
                    for t in order:
                        n = max(c, t.count // rounds // c * c)
                        cell = cells.setdefault((t.name, stream, c), Cell()) if r else None
                        batch(t, stream, c, n if r else max(c, n // 4), pool, upstream_pid, cell)
                print(f"  measured {'stream' if stream else 'non-stream'} c={c}", file=sys.stderr, flush=True)
    return cells


# --------------------------------------------------------------------------
# main


def commit_key() -> str:
    try:
        sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True,
                             check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return sha[:12] + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--warden", required=True)
    ap.add_argument("--upstream", default=str(ROOT / "build" / "bench" / "fast_upstream"))
    ap.add_argument("--requests", type=int, default=4000, help="requests per cell (warden, direct)")
    ap.add_argument("--litellm-requests", type=int, default=400, help="requests per LiteLLM cell")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--chunks", type=int, default=32, help="content chunks per stream")
    ap.add_argument("--no-litellm", action="store_true")
    ap.add_argument("--history", help="the regression guard's file (default $WARDEN_HOME/bench/gateway.json)")
    ap.add_argument("--json", help="write every figure here")
    ap.add_argument("--warden-arg", action="append", default=[],
                    help="one more argument for `warden serve` (repeat: --warden-arg=--threads --warden-arg=1)")
    return ap.parse_args()


def start_all(args, folder: str, procs: dict) -> tuple[dict, str]:
    """Starts fast_upstream, warden and (when it can) LiteLLM: ({name: (pid, port)}, why LiteLLM is not)."""
    up, up_port = start_with_port([args.upstream, "--port", "0", "--chunks", str(args.chunks)], r"PORT (\d+)",
                                  os.path.join(folder, "fast_upstream.log"))
    procs["upstream"] = up
    home = os.path.join(folder, "home")
    os.mkdir(home)
    w, w_port = start_with_port([args.warden, "serve", "--port", "0", "--upstream", f"http://127.0.0.1:{up_port}/v1",
                                 *args.warden_arg],
                                SERVING_RE, os.path.join(folder, "warden.log"), env=dict(os.environ, WARDEN_HOME=home))
    procs["warden"] = w
    # The same warden with the admission queue in the path (engine/admission_queue.h): 64 slots, so
    # it never waits here and the difference is what taking and giving back a slot costs.
    home_q = os.path.join(folder, "home-queued")
    os.mkdir(home_q)
    wq, wq_port = start_with_port([args.warden, "serve", "--port", "0", "--upstream", f"http://127.0.0.1:{up_port}/v1",
                                   "--upstream-slots", "64", *args.warden_arg],
                                  SERVING_RE, os.path.join(folder, "warden-queued.log"),
                                  env=dict(os.environ, WARDEN_HOME=home_q))
    procs["queued"] = wq
    # And with a pool of two engines (engine/engine_pool.h) behind the queue: the same upstream twice.
    home_p = os.path.join(folder, "home-pooled")
    os.mkdir(home_p)
    up_url = f"http://127.0.0.1:{up_port}/v1"
    wp, wp_port = start_with_port([args.warden, "serve", "--port", "0", "--upstream", up_url, "--upstream", up_url,
                                   "--upstream-slots", "32", *args.warden_arg],
                                  SERVING_RE, os.path.join(folder, "warden-pooled.log"),
                                  env=dict(os.environ, WARDEN_HOME=home_p))
    procs["pooled"] = wp
    ports = {"upstream": (up.pid, up_port), "warden": (w.pid, w_port), "queued": (wq.pid, wq_port),
             "pooled": (wp.pid, wp_port)}
    why = "--no-litellm"
    if not args.no_litellm:
        binary = litellm_binary(os.environ.get("WARDEN_HOME", os.path.expanduser("~/.cache/warden")))
        why = "no bench venv: `scripts/setup benchdeps` has not run or failed"
        if binary:
            try:
                lp, l_port = start_litellm(binary, up_port, folder)
                procs["litellm"] = lp
                ports["litellm"] = (lp.pid, l_port)
                why = ""
            except StartFailed as e:
                why = str(e)
    return ports, why


def main() -> int:
    args = parse_args()
    folder = tempfile.mkdtemp(prefix="warden-gateway-bench-")
    procs: dict = {}
    try:
        try:
            ports, litellm_why = start_all(args, folder, procs)
        except (StartFailed, OSError) as e:
            print(f"gateway bench: {e}", file=sys.stderr)
            return EXIT_START_FAILED
        up_pid, up_port = ports["upstream"]
        w_pid, w_port = ports["warden"]
        targets = [make_target("direct", up_port, None, args.requests, args.chunks)]
        targets += [make_target(n, w_port, w_pid, args.requests, args.chunks) for n in ("warden", "messages", "responses")]
        for name in ("queued", "pooled"):
            targets.append(make_target(name, ports[name][1], ports[name][0], args.requests, args.chunks))
        for t in targets:
            validate(t, args.chunks)
        if "litellm" in ports:
            peer = make_target("litellm", ports["litellm"][1], ports["litellm"][0], args.litellm_requests, args.chunks)
            try:
                validate(peer, args.chunks)
                targets.append(peer)
            except RequestFailed as e:
                litellm_why = f"its answer failed the check: {e}"
        cells = measure(targets, args.rounds, up_pid)
    except RequestFailed as e:
        print(f"gateway bench: request failed: {e} (logs in {folder})", file=sys.stderr)
        return EXIT_REQUEST_FAILED
    finally:
        for p in procs.values():
            stop(p)
    figures = report.print_all(cells, args, litellm_why)
    history = args.history or os.path.join(os.environ.get("WARDEN_HOME", os.path.expanduser("~/.cache/warden")),
                                           "bench", "gateway.json")
    report.guard(history, commit_key(), figures["ratios"])
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(figures, indent=2))
    shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
