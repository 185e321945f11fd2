#!/usr/bin/env python3
"""Soak under chaos (`make soak`, issue 23 part 5): many concurrent clients against warden on the
scripted fake upstream for a set time, then the leak and audit checks.

Setup: the fake upstream (tests/fake/fake_upstream.py) on a port of its own, warden on it
(`--upstream`, a fresh WARDEN_HOME, the real bubblewrap jail for tool calls). A warm-up of
WARMUP seconds runs the same mix; once warden is idle again its baseline is taken. Then CLIENTS
threads (default 64) each repeat, until the time is up, one action drawn from:

  chat        a streamed /v1/chat/completions (the recording, or the `stall` scenario)
  messages    a streamed /v1/messages
  responses   a streamed, stored /v1/responses
  background  a background /v1/responses run polled to its end, or cancelled half way
  tool        a tool loop (python, confirm_code_execution) whose code leaves a marker file in
              the session's workspace; the approval is answered late (0-3 s) with allow or deny
  disconnect  a stream (chat `endless`, or a tool loop waiting for its approval) whose client
              goes away mid-stream
  cancel      a tool loop waiting for its approval, stopped by POST /api/inference/cancel
  upstream    the upstream failing: a stream cut mid-body, a 500, malformed frames

and a chaos thread kills the fake upstream every CHAOS_EVERY seconds (SIGKILL) and starts it
again on the same port two seconds later. What a client gets while the upstream is down (a 502
or 503 in the surface's envelope, an in-band error) is expected; what is not: a 500, a response
that is not the surface's envelope, a stream that neither ends nor errors within 60 s, warden
exiting.

Afterwards, once every client is gone and warden's counts (`GET /api/debug/counts`) are idle:
  - RSS and open file descriptors of warden within 10 % of the baseline;
  - no live work: no open stream, handler, parked approval, tool loop or background run;
  - the audit log: one row per tool call the run started (a tool_start seen), no other rows than
    calls the run scripted, none still "pending", and every call whose marker file exists says
    "ran".
Prints the figures (baseline, end, counts, actions done, unexpected outcomes) and exits 0 when
every check held, 1 when one did not, 2 when warden or the fake could not start.

Usage: python bench/soak.py --warden build/app/warden [--seconds 600] [--clients 64]
       [--warmup 30] [--chaos-every 45] [--json out.json]
"""

from __future__ import annotations

import argparse
import collections
import http.client
import json
import os
import pathlib
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid

ROOT = pathlib.Path(__file__).resolve().parent.parent
FAKE = ROOT / "tests" / "fake" / "fake_upstream.py"
STREAM_TIMEOUT_S = 60
IDLE_WAIT_S = 60
TOLERANCE = 0.10
ACTIONS = {  # name: weight
    "chat": 14, "messages": 10, "responses": 10, "background": 8, "tool": 20, "disconnect": 12,
    "cancel": 8, "upstream": 8,
}


# --- processes ------------------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Child:
    """A child whose output lines are kept (the last 2,000) by a reader thread."""

    def __init__(self, argv, env=None):
        self.p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        self.lines = collections.deque(maxlen=2000)
        self.seen = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.p.stdout:
            with self.seen:
                self.lines.append(line.rstrip("\n"))
                self.seen.notify_all()

    def wait_for(self, pattern, timeout=60):
        rx = re.compile(pattern)
        deadline = time.time() + timeout
        with self.seen:
            while time.time() < deadline:
                for line in self.lines:
                    m = rx.search(line)
                    if m:
                        return m
                if self.p.poll() is not None:
                    break
                self.seen.wait(0.2)
        raise RuntimeError(f"{pattern!r} never came:\n" + "\n".join(list(self.lines)[-30:]))

    def stop(self, sig=signal.SIGTERM):
        if self.p.poll() is None:
            self.p.send_signal(sig)
            try:
                self.p.wait(20)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        return self.p.returncode


class Upstream:
    """The fake upstream on a fixed port, killed and started again by the chaos thread."""

    def __init__(self, port):
        self.port = port
        self.lock = threading.Lock()
        self.child = None
        self.kills = 0
        self.start()

    def start(self):
        with self.lock:
            self.child = Child([sys.executable, str(FAKE), str(self.port)])
        self.child.wait_for(r"PORT (\d+)")

    def kill(self):
        with self.lock:
            self.child.stop(signal.SIGKILL)
            self.kills += 1

    def script(self, turns):
        """The scenario name of a new script; Refused while the upstream is down (killed by chaos)."""
        name = "soak-" + uuid.uuid4().hex[:10]
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            conn.request("POST", "/script", body=json.dumps({"name": name, "turns": turns}),
                         headers={"Content-Type": "application/json"})
            conn.getresponse().read()
            return name
        except (OSError, http.client.HTTPException) as e:
            raise Refused("the upstream is down") from e
        finally:
            conn.close()


def proc_figures(pid):
    with open(f"/proc/{pid}/status") as f:
        rss_kib = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
    return {"rss_mib": round(rss_kib / 1024, 1), "fds": len(os.listdir(f"/proc/{pid}/fd"))}


# --- one request ----------------------------------------------------------------------------------

class Unexpected(Exception):
    """An outcome the soak counts as a defect."""


class Refused(Exception):
    """A 502/503 in the surface's envelope, or the upstream unreachable for a script: expected
    while the chaos thread has the upstream down (and until warden's next probe finds it back)."""


def open_request(port, path, body, timeout=STREAM_TIMEOUT_S):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    conn.request("POST", path, body=json.dumps(body),
                 headers={"Content-Type": "application/json", "anthropic-version": "2023-06-01"})
    return conn, conn.getresponse()


def get_json(port, method, path, body=None, timeout=30):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request(method, path, body=None if body is None else json.dumps(body),
                     headers={"Content-Type": "application/json"})
        r = conn.getresponse()
        return r.status, json.loads(r.read() or b"null")
    finally:
        conn.close()


def check_status(resp, allowed=(200,)):
    """True for a status in `allowed`; Refused for a 502/503 in the surface's envelope (the
    upstream comes and goes); Unexpected for anything else (a 500, a body that is not JSON)."""
    if resp.status in allowed:
        return True
    body = resp.read()
    if resp.status in (502, 503):
        try:
            json.loads(body)
        except ValueError as e:
            raise Unexpected(f"{resp.status} whose body is not JSON: {body[:200]!r}") from e
        raise Refused(str(resp.status))
    raise Unexpected(f"HTTP {resp.status}: {body[:300]!r}")


def frames(resp):
    """The SSE data payloads of a streamed answer, parsed (or the text), as they arrive."""
    buf = b""
    while True:
        chunk = resp.read1(65536)
        if not chunk:
            return
        buf += chunk
        while b"\n\n" in buf:
            block, buf = buf.split(b"\n\n", 1)
            for line in block.split(b"\n"):
                if line.startswith(b"data: "):
                    payload = line[6:].decode()
                    try:
                        yield json.loads(payload)
                    except ValueError:
                        yield payload


def drain(resp):
    """Reads a stream to its end; the count of frames."""
    return sum(1 for _ in frames(resp))


# --- the actions ----------------------------------------------------------------------------------

class Soak:
    """What the clients share: warden's port, the upstream, the tally and the tool calls."""

    def __init__(self, port, upstream, home):
        self.port, self.upstream, self.home = port, upstream, pathlib.Path(home)
        self.lock = threading.Lock()
        self.done = collections.Counter()        # action → times finished
        self.refused = collections.Counter()     # action → times refused (Refused)
        self.unexpected = []                      # (action, message)
        self.scripted = {}                        # call id → (session, marker file)
        self.started = set()                      # call ids whose tool_start was seen

    def tally(self, action, problem=None):
        with self.lock:
            self.done[action] += 1
            if problem is not None:
                self.unexpected.append((action, problem))

    # each action returns normally, or raises Unexpected

    def chat(self, rng):
        scenario = rng.choice(["replay", "replay", "stall"])
        body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": f"scenario:{scenario}"}]}
        self.stream("/v1/chat/completions", body)

    def messages(self, rng):
        body = {"model": "m", "max_tokens": 64, "stream": True, "messages": [{"role": "user", "content": "soak"}]}
        self.stream("/v1/messages", body)

    def responses(self, rng):
        self.stream("/v1/responses", {"model": "m", "input": "soak", "stream": True, "store": True})

    def upstream_failing(self, rng):
        scenario = rng.choice(["crash", "http500", "malformed", "error"])
        body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": f"scenario:{scenario}"}]}
        self.stream("/v1/chat/completions", body)

    def stream(self, path, body):
        conn, resp = open_request(self.port, path, body)
        try:
            if check_status(resp):
                drain(resp)
        finally:
            conn.close()

    def background(self, rng):
        name = self.upstream.script([{"content": "in the background", "delay": 0.5}])
        st, r = get_json(self.port, "POST", "/v1/responses",
                         {"model": "m", "input": f"scenario:script:{name}", "background": True})
        if st in (429, 502, 503):
            raise Refused(str(st))
        if st != 200:
            raise Unexpected(f"background create: HTTP {st}: {r}")
        cancel_at = time.time() + 0.2 if rng.random() < 0.5 else None
        deadline = time.time() + STREAM_TIMEOUT_S
        while time.time() < deadline:
            if cancel_at and time.time() >= cancel_at:
                get_json(self.port, "POST", f"/v1/responses/{r['id']}/cancel")
                cancel_at = None
            st, now = get_json(self.port, "GET", f"/v1/responses/{r['id']}")
            if st != 200:
                raise Unexpected(f"background poll: HTTP {st}: {now}")
            if now["status"] in ("completed", "failed", "cancelled", "incomplete"):
                return
            time.sleep(0.1)
        raise Unexpected(f"background run {r['id']} still {now['status']} after {STREAM_TIMEOUT_S} s")

    def tool_loop(self, rng, then):
        """A python call that asks; `then` is "answer", "disconnect" or "cancel"."""
        sid = "soak-" + uuid.uuid4().hex[:12]
        call_id = "call_" + uuid.uuid4().hex[:16]
        marker = f"ran-{call_id}.txt"
        code = f"open({marker!r}, 'w').write('x')\nprint('ok')"
        name = self.upstream.script([{"tool_calls": [{"name": "python", "arguments": json.dumps({"code": code}),
                                                      "id": call_id}]}, {"content": "done"}])
        with self.lock:
            self.scripted[call_id] = (sid, marker)
        body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": f"scenario:script:{name}"}],
                "enable_tools": True, "confirm_tool_calls": False, "confirm_code_execution": True,
                "session_id": sid, "cancel_id": sid}
        conn, resp = open_request(self.port, "/v1/chat/completions", body)
        try:
            if check_status(resp):
                self.follow_tool_loop(rng, resp, sid, call_id, then)
        finally:
            conn.close()

    def follow_tool_loop(self, rng, resp, sid, call_id, then):
        for f in frames(resp):
            if not (isinstance(f, dict) and f.get("type") == "tool_start"):
                continue
            if f.get("provenance", {}).get("provisional"):
                continue
            with self.lock:
                self.started.add(f["tool_call_id"])
            if not f.get("awaiting_confirmation"):
                continue
            if then == "disconnect":
                return
            if then == "cancel":
                st, r = get_json(self.port, "POST", "/api/inference/cancel", {"cancel_id": sid})
                if st != 200:
                    raise Unexpected(f"cancel: HTTP {st}: {r}")
            else:
                time.sleep(rng.uniform(0, 3))  # answered late
                decision = "allow" if rng.random() < 0.7 else "deny"
                st, r = get_json(self.port, "POST", "/api/inference/tool-confirm",
                                 {"approval_id": f["approval_id"], "decision": decision, "session_id": sid})
                if st not in (200, 404):  # 404: the approval timed out or the upstream died meanwhile
                    raise Unexpected(f"tool-confirm: HTTP {st}: {r}")
        return

    def disconnect(self, rng):
        if rng.random() < 0.5:
            return self.tool_loop(rng, "disconnect")
        conn, resp = open_request(self.port, "/v1/chat/completions", {
            "model": "m", "stream": True, "messages": [{"role": "user", "content": "scenario:endless"}]})
        try:
            if check_status(resp):
                for i, _ in enumerate(frames(resp)):
                    if i >= rng.randint(1, 20):
                        break
        finally:
            conn.close()

    def run_action(self, name, rng):
        table = {"chat": self.chat, "messages": self.messages, "responses": self.responses,
                 "background": self.background, "upstream": self.upstream_failing, "disconnect": self.disconnect,
                 "tool": lambda r: self.tool_loop(r, "answer"), "cancel": lambda r: self.tool_loop(r, "cancel")}
        try:
            table[name](rng)
            self.tally(name)
        except Refused:
            with self.lock:
                self.refused[name] += 1
            time.sleep(0.25)  # as a client would back off; refusals are fast and would crowd out the mix
        except Unexpected as e:
            self.tally(name, str(e))
        except (socket.timeout, TimeoutError):
            self.tally(name, f"no progress for {STREAM_TIMEOUT_S} s")
        except (ConnectionError, http.client.HTTPException, OSError) as e:
            self.tally(name, f"connection broken: {e!r}")


def client_loop(soak, seed, until):
    rng = random.Random(seed)
    names, weights = zip(*ACTIONS.items())
    while time.time() < until:
        soak.run_action(rng.choices(names, weights)[0], rng)


def chaos_loop(upstream, every, until):
    while time.time() + every < until:
        time.sleep(every)
        upstream.kill()
        time.sleep(2)
        upstream.start()


def run_phase(soak, clients, seconds, chaos_every):
    until = time.time() + seconds
    threads = [threading.Thread(target=client_loop, args=(soak, i, until), daemon=True) for i in range(clients)]
    if chaos_every > 0:
        threads.append(threading.Thread(target=chaos_loop, args=(soak.upstream, chaos_every, until), daemon=True))
    for t in threads:
        t.start()
    for t in threads:
        t.join(seconds + 3 * STREAM_TIMEOUT_S)
    return not any(t.is_alive() for t in threads)


# --- the checks -----------------------------------------------------------------------------------

IDLE = {"connections_open": 1, "handlers_running": 1, "pending_body_bytes": 0, "approvals_pending": 0,
        "tool_loops_running": 0, "background_runs_live": 0}


def wait_idle(port):
    deadline = time.time() + IDLE_WAIT_S
    while True:
        st, counts = get_json(port, "GET", "/api/debug/counts")
        if (st == 200 and counts == IDLE) or time.time() > deadline:
            return counts
        time.sleep(0.5)


def audit_rows(port):
    rows, after = [], 0
    while True:
        st, page = get_json(port, "GET", f"/api/audit?limit=1000&after={after}")
        if st != 200:
            raise RuntimeError(f"/api/audit: HTTP {st}: {page}")
        rows += page["data"]
        if not page["has_more"]:
            return rows
        after = page["last_id"]


def audit_problems(soak, rows):
    """What is wrong with the audit log against what the clients saw."""
    problems = []
    by_call = collections.Counter(r["call_id"] for r in rows)
    problems += [f"{n} rows for call {c}" for c, n in by_call.items() if n > 1]
    problems += [f"a row for call {c} the run never scripted" for c in by_call if c not in soak.scripted]
    problems += [f"no row for started call {c}" for c in soak.started if c not in by_call]
    for r in rows:
        if r["status"] == "pending":
            problems.append(f"call {r['call_id']} still pending")
        sid, marker = soak.scripted.get(r["call_id"], (None, None))
        if sid and (soak.home / "workspaces" / sid / marker).exists() and r["status"] != "ran":
            problems.append(f"call {r['call_id']} left its file but its row says {r['status']}")
    return problems


def grew(base, end):
    """True when `end` is more than TOLERANCE above `base` (less is no leak)."""
    return end > base * (1 + TOLERANCE)


def start_all(args):
    upstream = Upstream(free_port())
    home = tempfile.mkdtemp(prefix="warden-soak-")
    env = dict(os.environ, WARDEN_HOME=home)
    warden = Child([args.warden, "serve", "--port", "0", "--upstream", f"http://127.0.0.1:{upstream.port}/v1",
                    "--sse-ping-interval", "1000", "--approval-timeout", "30", "--log-level", "warn"], env=env)
    port = int(warden.wait_for(r"warden: (?:serving .* at|listening at) http://[^:]+:(\d+)/v1").group(1))
    return upstream, home, warden, port


def measure(soak, warden, clients, seconds, chaos_every, label):
    t0 = time.time()
    finished = run_phase(soak, clients, seconds, chaos_every)
    counts = wait_idle(soak.port)
    figures = proc_figures(warden.p.pid)
    print(f"[soak] {label}: {time.time() - t0:.0f} s, clients finished: {finished}, "
          f"RSS {figures['rss_mib']} MiB, {figures['fds']} fds, counts {counts}", flush=True)
    return finished, counts, figures


def report(soak, base, end, counts, finished, rows):
    problems = []
    if not finished:
        problems.append("some clients never finished")
    if counts != IDLE:
        problems.append(f"live work left: {counts}")
    for key in ("rss_mib", "fds"):
        if grew(base[key], end[key]):
            problems.append(f"{key} grew from {base[key]} to {end[key]} (more than {TOLERANCE:.0%})")
    problems += audit_problems(soak, rows)
    problems += [f"{a}: {m}" for a, m in soak.unexpected[:50]]
    print(f"[soak] actions done: {dict(soak.done)}")
    print(f"[soak] refused while the upstream was down: {dict(soak.refused)}; upstream killed "
          f"{soak.upstream.kills} times")
    print(f"[soak] tool calls: {len(soak.scripted)} scripted, {len(soak.started)} started, {len(rows)} audit rows "
          f"({dict(collections.Counter(r['status'] for r in rows))})")
    print(f"[soak] baseline RSS {base['rss_mib']} MiB, {base['fds']} fds; end RSS {end['rss_mib']} MiB, "
          f"{end['fds']} fds (limit +{TOLERANCE:.0%})")
    print(f"[soak] unexpected outcomes: {len(soak.unexpected)}")
    for p in problems:
        print(f"[soak] PROBLEM: {p}")
    print("[soak] " + ("every check held" if not problems else f"{len(problems)} problems"), flush=True)
    return problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--warden", required=True)
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--clients", type=int, default=64)
    ap.add_argument("--warmup", type=float, default=30)
    ap.add_argument("--chaos-every", type=float, default=45)
    ap.add_argument("--json")
    args = ap.parse_args()
    try:
        upstream, home, warden, port = start_all(args)
    except RuntimeError as e:
        print(f"[soak] could not start: {e}", file=sys.stderr)
        return 2
    try:
        warm = Soak(port, upstream, home)
        measure(warm, warden, args.clients, args.warmup, 0, "warm-up")
        base = proc_figures(warden.p.pid)
        soak = Soak(port, upstream, home)
        finished, counts, end = measure(soak, warden, args.clients, args.seconds, args.chaos_every, "soak")
        rows = audit_rows(port)
        rows = [r for r in rows if r["call_id"] not in warm.scripted]
        problems = report(soak, base, end, counts, finished, rows)
        if warden.p.poll() is not None:
            problems.append(f"warden exited with {warden.p.returncode}")
        if args.json:
            pathlib.Path(args.json).write_text(json.dumps({
                "baseline": base, "end": end, "counts": counts, "actions": dict(soak.done), "refused": dict(soak.refused),
                "upstream_kills": upstream.kills, "unexpected": soak.unexpected, "problems": problems}, indent=1))
        return 1 if problems else 0
    finally:
        rc = warden.stop()
        upstream.child.stop(signal.SIGKILL)
        if rc != 0:
            print(f"[soak] warden exited with {rc} on SIGTERM", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
