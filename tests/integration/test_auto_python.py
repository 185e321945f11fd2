"""Issue 22, part 1 for Python: in the default streaming mode (no permission_mode: `auto`), a
session workspace seeded with files survives each destructive Python shape of the issue.

The scripted fake upstream plays a model that calls python once with the shape; warden classifies
it, the stream shows the call awaiting confirmation with a high risk and its reason, the test denies
it, and every seeded file is unchanged. The control: the same call allowed does change the files
(so each shape is a real one and the check can fail), and a call that only reads runs unasked."""
import os
import pathlib
import uuid

import pytest

from conftest import on_fake, script
from test_tool_loop import DECLINED, Stream, call, confirm, workspace

WARDEN = on_fake("--sse-ping-interval", "300")  # the module's `warden` fixture (conftest.py)

SEED = {"a.txt": "alpha\n", "b.txt": "beta\n", "data/c.csv": "x,y\n1,2\n"}

# (id, code, a phrase of the reason the card must show)
SHAPES = [
    ("path-unlink-loop",
     "from pathlib import Path\nfor p in sorted(Path('.').rglob('*'), reverse=True):\n    if p.is_file():\n        p.unlink()",
     "uses the name unlink (deletes files)"),
    ("shutil-os-system",
     "import shutil\nshutil.os.system('rm -rf ./*')",
     "uses the name os (runs programs or reaches the system)"),
    ("from-shutil-import-os",
     "from shutil import os as o\no.remove('a.txt')\no.remove('b.txt')",
     "uses the name os (runs programs or reaches the system)"),
    ("open-w-truncates",
     "for name in ('a.txt', 'b.txt'):\n    open(name, 'w').close()",
     "opens a file for writing (mode 'w')"),
    ("tempfile-os-unlink",
     "import tempfile\ntempfile._os.unlink('a.txt')",
     "uses the name _os (runs programs or reaches the system)"),
]


def chat(name, session_id):
    """Streaming, tools on, nothing about the gate set: permission_mode auto."""
    return {"messages": [{"role": "user", "content": f"scenario:script:{name}"}], "stream": True,
            "enable_tools": True, "session_id": session_id}


def seed(home, session_id):
    """Writes SEED into the session's workspace, owned by the jail's user when warden runs as
    root (uid 65534 outside the jail), so an allowed call could really change them."""
    ws = workspace(home, session_id)
    for rel, text in SEED.items():
        p = ws / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    if os.geteuid() == 0:
        for p in [ws, *ws.rglob("*")]:
            os.chown(p, 65534, 65534)
    return ws


def files(ws):
    """The seeded files as they are now (None: gone)."""
    return {rel: (ws / rel).read_text() if (ws / rel).exists() else None for rel in SEED}


def run_once(warden, fake_upstream, home, code, decision):
    """One python call in a fresh seeded session, answered with `decision`; returns (the
    tool_start frame, the tool_end frame, the workspace)."""
    session_id = "autopy-" + uuid.uuid4().hex[:8]
    ws = seed(home, session_id)
    name = script(fake_upstream, [{"tool_calls": [call("python", {"code": code})]}, {"content": "done"}])
    s = Stream(warden.port, chat(name, session_id))
    start = s.until_type("tool_start")
    if start.get("awaiting_confirmation"):
        st, _ = confirm(warden, start["approval_id"], decision)
        assert st == 200
    end = s.until_type("tool_end")
    s.rest()
    return start, end, ws


@pytest.mark.parametrize("code,reason", [(c, r) for _, c, r in SHAPES], ids=[i for i, _, _ in SHAPES])
def test_destructive_shape_asks_and_denying_runs_nothing(warden, fake_upstream, home, code, reason):
    start, end, ws = run_once(warden, fake_upstream, home, code, "deny")
    assert start["awaiting_confirmation"] and start["approval_id"], start
    assert start["risk"]["level"] == "high", start
    assert reason in start["risk"]["reasons"], start["risk"]
    assert end["result"] == DECLINED, end
    assert files(ws) == SEED


@pytest.mark.parametrize("code", [c for _, c, _ in SHAPES], ids=[i for i, _, _ in SHAPES])
def test_control_the_same_call_allowed_changes_the_files(warden, fake_upstream, home, code):
    start, end, ws = run_once(warden, fake_upstream, home, code, "allow")
    assert start["awaiting_confirmation"], start
    assert end["result"] != DECLINED, end
    after = files(ws)
    assert after != SEED, (end, after)


def test_control_a_read_runs_unasked(warden, fake_upstream, home):
    code = "with open('a.txt') as f:\n    print(f.read().upper(), end='')"
    start, end, ws = run_once(warden, fake_upstream, home, code, "deny")
    assert not start["awaiting_confirmation"] and start["risk"]["level"] == "low", start
    assert end["result"] == "ALPHA\n", end
    assert files(ws) == SEED
