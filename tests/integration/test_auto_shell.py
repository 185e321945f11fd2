"""Issue 22, part 1 for terminal commands, in the default streaming mode (no permission_mode: auto):
a session workspace seeded with files survives each destructive shell shape of the issue. Each one
arrives as tool_start with awaiting_confirmation and a reason; denying it runs nothing, and every
file of the workspace is byte for byte what it was (the real tools, the real sandbox, the scripted
fake upstream)."""
import os
import shutil
import subprocess
import uuid

import pytest

from conftest import on_fake
from test_tool_loop import DECLINED, Stream, call, confirm, script, workspace


WARDEN = on_fake("--sse-ping-interval", "300")  # the module's `warden` fixture (conftest.py)

SCRIPT = "rm -rf /workspace/*\n"


def seed(ws, with_git=False):
    """Files a session has made: data, code, a script, a sourced file and a Makefile that would
    wipe the workspace if anything ran them."""
    (ws / "src").mkdir(parents=True)
    (ws / "empty").mkdir()
    (ws / "a.txt").write_text("alpha\nbeta\n")
    (ws / "src" / "main.py").write_text("print('hello')\n")
    (ws / "c.sh").write_text(SCRIPT)
    (ws / "c").write_text(SCRIPT)
    (ws / "Makefile").write_text("all:\n\trm -rf /workspace/*\n")
    if with_git:
        env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@x", GIT_COMMITTER_NAME="t",
                   GIT_COMMITTER_EMAIL="t@x", HOME=str(ws.parent))
        for argv in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "seed"]):
            subprocess.run(argv, cwd=ws, env=env, check=True, capture_output=True)
        (ws / "a.txt").write_text("alpha\nbeta\nuncommitted work\n")  # what `git checkout -- .` would lose
    if os.geteuid() == 0:  # a root server runs the jail as uid 65534: the files must be its own, as if it wrote them
        for root, dirs, files in os.walk(ws):
            for n in dirs + files:
                os.lchown(os.path.join(root, n), 65534, 65534)
        os.lchown(ws, 65534, 65534)


def snapshot(ws):
    """Every file and folder under the workspace with its bytes (None for a folder)."""
    out = {}
    for root, dirs, files in os.walk(ws):
        for d in dirs:
            out[os.path.relpath(os.path.join(root, d), ws) + "/"] = None
        for f in files:
            p = os.path.join(root, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, ws)] = fh.read()
    return out


# (command, a reason the card must show, what the row needs on this machine)
SHAPES = [
    ("cp /dev/null a.txt", "cp is not known to be safe", None),
    ("sed -i 's/.*//' a.txt src/main.py", "sed -i edits files in place", None),
    ("rsync -a --delete empty/ ./", "rsync is not known to be safe", "rsync"),
    ("git checkout -- .", "git checkout is not known to be safe", "git"),
    ("find . -type f -exec rm {} +", "find -exec runs programs", None),
    ("bash c.sh", "bash runs a script file (c.sh)", None),
    ("printf 'rm -rf /workspace/*\\n' > d.sh; bash d.sh", "writes to d.sh (redirection)", None),
    (". ./c", "sources a script file (./c)", None),
    ("make", "make is not known to be safe", None),
    ("printf 'all:\\n\\trm -rf /workspace/*\\n' > Makefile; make", "writes to Makefile (redirection)", None),
    ("yes > big", "writes to big (redirection)", None),
    (":(){ :|:& };:", "defines a shell function", None),
    ("for i in $(seq 600); do sleep 60 & done", "runs a command in the background (&)", None),
]


@pytest.mark.parametrize("command,reason,needs", SHAPES, ids=[s[0] for s in SHAPES])
def test_destructive_shape_asks_and_denying_runs_nothing(warden, fake_upstream, home, command, reason, needs):
    if needs == "rsync" and shutil.which("rsync") is None:
        pytest.skip("rsync is not installed on this machine, so the row could not show it would have run")
    if needs == "git" and shutil.which("git") is None:
        pytest.skip("git is not installed on this machine: no repository to seed")
    sid = "auto-shell-" + uuid.uuid4().hex[:8]
    ws = workspace(home, sid)
    seed(ws, with_git=needs == "git")
    before = snapshot(ws)
    name = script(fake_upstream, [{"tool_calls": [call("terminal", {"command": command})]},
                                  {"content": "Understood, I left it alone."}])
    body = {"messages": [{"role": "user", "content": f"scenario:script:{name}"}], "stream": True,
            "enable_tools": True, "session_id": sid}  # no permission_mode: auto
    s = Stream(warden.port, body)
    assert s.status == 200
    start = s.until_type("tool_start")
    assert start["awaiting_confirmation"] is True and start["approval_id"], start
    assert start["arguments"] == {"command": command}
    assert start["risk"]["level"] == "high", start["risk"]
    assert reason in start["risk"]["reasons"], start["risk"]
    assert confirm(warden, start["approval_id"], "deny")[0] == 200
    assert s.until_type("tool_end")["result"] == DECLINED
    frames = s.rest()
    assert frames[-1] == "[DONE]"
    assert not [f for f in frames if isinstance(f, dict) and f.get("type") == "tool_output"]
    assert snapshot(ws) == before


def test_a_read_only_pipeline_runs_unasked_in_the_same_mode(warden, fake_upstream, home):
    """The other side: what is on the read-only list runs without a question and changes nothing."""
    sid = "auto-shell-ro-" + uuid.uuid4().hex[:8]
    ws = workspace(home, sid)
    seed(ws)
    before = snapshot(ws)
    command = "cat a.txt | sort | uniq -c | wc -l; ls -la src | grep -c main"
    name = script(fake_upstream, [{"tool_calls": [call("terminal", {"command": command})]}, {"content": "ok"}])
    s = Stream(warden.port, {"messages": [{"role": "user", "content": f"scenario:script:{name}"}], "stream": True,
                             "enable_tools": True, "session_id": sid})
    start = s.until_type("tool_start")
    assert start["awaiting_confirmation"] is False and start["risk"]["level"] == "low", start
    assert s.until_type("tool_end")["result"] == "2\n1\n"
    s.rest()
    assert snapshot(ws) == before
