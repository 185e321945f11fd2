"""The tables of bench/gateway_bench.py and its regression guard (see that script's docstring).

print_all(cells, args, litellm_why) prints the per-cell table and the target rows and returns every
figure with the guard's ratios; guard(path, commit, ratios) compares those ratios with the latest
stored run of another commit, prints FLAGGED lines for ones more than 25 % worse, and stores them.
"""

from __future__ import annotations

import json
import os
import statistics
import time

MODES = ((False, "non-stream"), (True, "stream"))
SURFACES = ("warden", "messages", "responses")  # warden = chat passthrough
WORSE_BY = 1.25  # the guard's threshold
KEEP_RUNS = 20
ADDED_FLOOR_MS = 0.01  # chat's added latency below this counts as this, for the 2x rule


def p50_ms(xs: list) -> float:
    return statistics.median(xs) * 1e3 if xs else float("nan")


def cell_figures(cell, stream: bool, chunks: int) -> dict:
    per_req = lambda k: cell.cpu_s[k] / cell.requests * 1e6
    f = {"requests": cell.requests, "p50_ms": p50_ms(cell.latency_s), "rps": cell.requests / cell.wall_s,
         "gateway_us_per_req": per_req("gateway"), "upstream_us_per_req": per_req("upstream"),
         "client_us_per_req": per_req("client"), "upstream_busy": cell.cpu_s["upstream"] / cell.wall_s}
    if stream:
        f["ttft_p50_ms"] = p50_ms(cell.ttft_s)
        f["gateway_us_per_chunk"] = cell.cpu_s["gateway"] / (cell.requests * (chunks + 3)) * 1e6
    return f


def print_cells(cells, args, litellm_why: str) -> dict:
    print(f"gateway bench: fast_upstream (C++, no delay) behind warden and LiteLLM; {args.chunks} content chunks a "
          f"stream (+ role, finish, usage = {args.chunks + 3} forwarded chunks); {args.requests} requests a cell "
          f"(LiteLLM {args.litellm_requests}) over {args.rounds} rounds alternating the targets")
    print("CPU: /proc/<pid>/stat utime+stime deltas around each batch, raw (everything the process did meanwhile); "
          "gw = the gateway (warden or LiteLLM)")
    print(f"{'mode':10} {'c':>2} {'target':10} {'p50 ms':>8} {'TTFT ms':>8} {'req/s':>8} {'gw us/req':>10} "
          f"{'gw us/chunk':>11} {'upstr us/req':>12} {'upstr busy':>10} {'client us/req':>13}")
    out = {}
    dash = lambda v, fmt: "-" if v is None else format(v, fmt)
    for stream, mode in MODES:
        for c in (1, 8):
            for name in ("direct",) + SURFACES + ("queued", "pooled", "litellm"):
                cell = cells.get((name, stream, c))
                if cell is None:
                    print(f"{mode:10} {c:2} {name:10} not run ({litellm_why})")
                    continue
                f = out[f"{name}/{mode}/c{c}"] = cell_figures(cell, stream, args.chunks)
                gw = name != "direct"
                print(f"{mode:10} {c:2} {name:10} {f['p50_ms']:8.3f} {dash(f.get('ttft_p50_ms'), '8.3f'):>8} "
                      f"{f['rps']:8.0f} {dash(f['gateway_us_per_req'] if gw else None, '10.1f'):>10} "
                      f"{dash(f.get('gateway_us_per_chunk') if gw else None, '11.2f'):>11} "
                      f"{f['upstream_us_per_req']:12.1f} {f['upstream_busy']:9.0%} {f['client_us_per_req']:13.1f}")
    return out


def pooled_cpu(cells, name: str, stream: bool, chunks: int) -> float | None:
    """The gateway's CPU per request (non-stream) or per forwarded chunk (stream), c=1 and c=8 together."""
    both = [cells.get((name, stream, c)) for c in (1, 8)]
    if None in both:
        return None
    cpu = sum(x.cpu_s["gateway"] for x in both) * 1e6
    n = sum(x.requests for x in both)
    return cpu / (n * (chunks + 3)) if stream else cpu / n


def surface_figures(cells, fig: dict, name: str, chunks: int) -> dict | None:
    """The target figures of one gateway surface, against direct in the same run."""
    if (name, False, 1) not in cells:
        return None
    g = lambda target, mode, c, k: fig[f"{target}/{mode}/c{c}"][k]
    s = {"cpu_us_per_req": pooled_cpu(cells, name, False, chunks),
         "cpu_us_per_chunk": pooled_cpu(cells, name, True, chunks)}
    for _, mode in MODES:
        s[f"added_p50_ms_{mode}"] = g(name, mode, 1, "p50_ms") - g("direct", mode, 1, "p50_ms")
        s[f"lat_ratio_c1_{mode}"] = g(name, mode, 1, "p50_ms") / g("direct", mode, 1, "p50_ms")
        s[f"thr_ratio_c8_{mode}"] = g(name, mode, 8, "rps") / g("direct", mode, 8, "rps")
    # info: what a chunk costs beyond a non-streaming request (stream minus non-stream, per chunk)
    per_stream = s["cpu_us_per_chunk"] * (chunks + 3)
    s["cpu_us_per_chunk_marginal"] = (per_stream - s["cpu_us_per_req"]) / (chunks + 3)
    s["added_ttft_ms"] = g(name, "stream", 1, "ttft_p50_ms") - g("direct", "stream", 1, "ttft_p50_ms")
    # CPU over direct's c=1 round trip (per request, per chunk): a ratio the machine's speed cancels in
    s["cpu_req_norm"] = s["cpu_us_per_req"] / (g("direct", "non-stream", 1, "p50_ms") * 1e3)
    s["cpu_chunk_norm"] = s["cpu_us_per_chunk"] / (g("direct", "stream", 1, "p50_ms") * 1e3 / (chunks + 3))
    return s


def row(label: str, value: str, target: str, ok) -> None:
    verdict = "-" if ok is None else ("met" if ok else "MISSED")
    print(f"  {label:58} {value:>12}  {target:>22}  {verdict}")


def chat_rows(s: dict) -> None:
    row("chat: CPU per forwarded chunk", f"{s['cpu_us_per_chunk']:.2f} us", "<= 5 us", s["cpu_us_per_chunk"] <= 5)
    row("chat: (info) CPU per chunk beyond a non-streaming request", f"{s['cpu_us_per_chunk_marginal']:.2f} us",
        "-", None)
    row("chat: CPU per non-streaming request", f"{s['cpu_us_per_req']:.1f} us", "<= 40 us", s["cpu_us_per_req"] <= 40)
    for _, mode in MODES:
        a = s[f"added_p50_ms_{mode}"]
        row(f"chat: added p50 latency at c=1, {mode}", f"{a:+.3f} ms", "<= 0.2 ms", a <= 0.2)
    row("chat: added p50 time to first chunk at c=1, stream", f"{s['added_ttft_ms']:+.3f} ms", "<= 0.2 ms",
        s["added_ttft_ms"] <= 0.2)
    for _, mode in MODES:
        r = s[f"thr_ratio_c8_{mode}"]
        row(f"chat: throughput at c=8, {mode}, of direct's", f"{r:.0%}", ">= 70 %", r >= 0.70)


def relative_rows(label: str, s: dict, chat: dict) -> None:
    """A surface's figures against chat passthrough's: each within 2x."""
    for key, what, unit in (("cpu_us_per_chunk", "CPU per forwarded chunk", "us"),
                            ("cpu_us_per_req", "CPU per non-streaming request", "us")):
        row(f"{label}: {what}", f"{s[key]:.2f} {unit}", f"<= {2 * chat[key]:.2f} (2x chat)", s[key] <= 2 * chat[key])
    for _, mode in MODES:
        key = f"added_p50_ms_{mode}"
        limit = 2 * max(chat[key], ADDED_FLOOR_MS)
        row(f"{label}: added p50 latency at c=1, {mode}", f"{s[key]:+.3f} ms", f"<= {limit:.3f} ms (2x chat)",
            s[key] <= limit)
    for _, mode in MODES:
        key = f"thr_ratio_c8_{mode}"
        row(f"{label}: throughput at c=8, {mode}, of direct's", f"{s[key]:.0%}", f">= {chat[key] / 2:.0%} (chat / 2)",
            s[key] >= chat[key] / 2)


def peer_rows(s: dict, warden: dict) -> None:
    for key, what, fmt in (("cpu_us_per_chunk", "CPU per forwarded chunk", "{:.2f} us"),
                           ("cpu_us_per_req", "CPU per non-streaming request", "{:.1f} us"),
                           ("added_p50_ms_non-stream", "added p50 latency at c=1, non-stream", "{:+.3f} ms"),
                           ("added_p50_ms_stream", "added p50 latency at c=1, stream", "{:+.3f} ms"),
                           ("added_ttft_ms", "added p50 time to first chunk at c=1, stream", "{:+.3f} ms")):
        row(f"LiteLLM: {what}", fmt.format(s[key]), f"peer; warden {fmt.format(warden[key])}", None)
    for _, mode in MODES:
        key = f"thr_ratio_c8_{mode}"
        row(f"LiteLLM: throughput at c=8, {mode}, of direct's", f"{s[key]:.0%}", f"peer; warden {warden[key]:.0%}", None)


def queue_rows(q: dict, chat: dict, what_in: str = "queue", without: str = "no queue") -> None:
    """Chat passthrough with the admission queue (or the queue and a pool) in the path against the
    same without them (same run)."""
    for key, what, unit in (("cpu_us_per_req", "CPU per non-streaming request", "us"),
                            ("cpu_us_per_chunk", "CPU per forwarded chunk", "us")):
        row(f"{what_in}: {what}", f"{q[key]:.2f} {unit}", f"{without} {chat[key]:.2f} {unit}", None)
    for _, mode in MODES:
        key = f"added_p50_ms_{mode}"
        row(f"{what_in}: added p50 latency at c=1, {mode}", f"{q[key]:+.3f} ms", f"{without} {chat[key]:+.3f} ms", None)
    for _, mode in MODES:
        key = f"thr_ratio_c8_{mode}"
        ratio = q[key] / chat[key] if chat[key] else float("nan")
        row(f"{what_in}: throughput at c=8, {mode}, of {without}'s", f"{ratio:.0%}", ">= 95 %", ratio >= 0.95)


def print_all(cells, args, litellm_why: str) -> dict:
    fig = print_cells(cells, args, litellm_why)
    surf = {n: surface_figures(cells, fig, n, args.chunks) for n in SURFACES + ("litellm",)}
    chat = surf["warden"]
    print("\ntargets (CPU per request and per chunk over c=1 and c=8 together; added = the gateway's p50 minus "
          "direct's, same run)")
    chat_rows(chat)
    relative_rows("/v1/messages", surf["messages"], chat)
    relative_rows("/v1/responses", surf["responses"], chat)
    queued = surface_figures(cells, fig, "queued", args.chunks)
    if queued:
        queue_rows(queued, chat)
    pooled = surface_figures(cells, fig, "pooled", args.chunks)
    if pooled:
        queue_rows(pooled, chat, "queue + pool of 2", "neither")
    if surf["litellm"]:
        peer_rows(surf["litellm"], chat)
    else:
        print(f"  LiteLLM: not run ({litellm_why})")
    ratios = {}
    for name in SURFACES:
        s, key = surf[name], "chat" if name == "warden" else name
        for _, mode in MODES:
            ratios[f"{key}.latency_c1_{mode}"] = [s[f"lat_ratio_c1_{mode}"], "higher"]
            ratios[f"{key}.throughput_c8_{mode}"] = [s[f"thr_ratio_c8_{mode}"], "lower"]
        ratios[f"{key}.cpu_per_request"] = [s["cpu_req_norm"], "higher"]
        ratios[f"{key}.cpu_per_chunk"] = [s["cpu_chunk_norm"], "higher"]
    return {"cells": fig, "surfaces": surf, "ratios": ratios, "chunks": args.chunks}


def worse_factor(old: float, new: float, worse: str) -> float:
    if old <= 0 or new <= 0:
        return 1.0
    return new / old if worse == "higher" else old / new


def guard(path: str, commit: str, ratios: dict) -> None:
    """Compares with the latest stored run of another commit; stores this run under `commit`."""
    try:
        with open(path) as f:
            runs = json.load(f).get("runs", [])
    except (OSError, ValueError):
        runs = []
    prev = next((r for r in reversed(runs) if r.get("commit") != commit), None)
    print(f"\nregression guard ({path}; a ratio more than {WORSE_BY - 1:.0%} worse than the previous commit's "
          "is FLAGGED; ratios are warden against direct in the same run)")
    if prev is None:
        print("  no earlier run of another commit: nothing to compare")
    else:
        flagged = 0
        for name, (value, worse) in sorted(ratios.items()):
            old = prev["ratios"].get(name)
            if old is None:
                continue
            factor = worse_factor(old[0], value, worse)
            if factor > WORSE_BY:
                flagged += 1
                print(f"  FLAGGED {name}: {old[0]:.3f} -> {value:.3f} ({factor - 1:.0%} worse; {worse} is worse) "
                      f"against {prev['commit']} ({prev.get('time', '?')})")
        print(f"  {len(ratios)} ratios against {prev['commit']} ({prev.get('time', '?')}): "
              f"{flagged} flagged")
    runs = [r for r in runs if r.get("commit") != commit]
    runs.append({"commit": commit, "time": time.strftime("%Y-%m-%d %H:%M:%S"), "ratios": ratios})
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"runs": runs[-KEEP_RUNS:]}, f, indent=1)
    os.replace(tmp, path)
