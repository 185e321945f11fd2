"""What the benchmark drivers share for their child processes (gateway_bench.py, parse_bench.py)."""

from __future__ import annotations

import re
import shutil
import subprocess
import threading
import time


class StartFailed(Exception):
    """A child did not start: it exited or did not print what it should in time."""


def start_with_port(argv, pattern, log_path, env=None, timeout_s=60.0):
    """Starts argv, reads its stdout until `pattern`'s first group gives the port, and returns
    (process, port); the rest of its stdout and all its stderr go to log_path. StartFailed when
    the port line does not come within timeout_s (the child is killed)."""
    log = open(log_path, "w")
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=log, text=True, env=env, start_new_session=True)
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        line = p.stdout.readline()
        if not line:
            break
        m = re.search(pattern, line)
        if m:
            threading.Thread(target=shutil.copyfileobj, args=(p.stdout, log), daemon=True).start()
            return p, int(m.group(1))
    p.kill()
    p.wait()
    raise StartFailed(f"{argv[0]} did not print its port (see {log_path})")
