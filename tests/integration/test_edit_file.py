"""edit_file through warden's tool loop (issue 25, reference §4.6), on the scripted fake upstream
with the real sandbox: `auto` always asks for it, the edit lands in the session workspace (as the
jail's user), the result carries the diff, the audit row carries the path, and paths that try to
leave the workspace (.., absolute, a symlink a jailed call planted) are refused without writing.
"""
import os
import time

import pytest

from conftest import on_fake
from test_audit_log import warden_cli
from test_permissions import audit, chat, confirm, sid
from test_tool_loop import Stream, call, script, workspace

WARDEN = on_fake("--sse-ping-interval", "300")


def edit(path, old, new, **extra):
    return call("edit_file", {"path": path, "old_string": old, "new_string": new, **extra})


def test_auto_asks_for_every_edit_and_the_allowed_one_lands_with_its_diff(warden, fake_upstream, home):
    s_id = sid("edit")
    name = script(fake_upstream, [{"tool_calls": [edit("notes/todo.md", "", "- milk\n- eggs\n")]},
                                  {"tool_calls": [edit("notes/todo.md", "eggs", "bread")]},
                                  {"content": "Done."}])
    s = Stream(warden.port, chat(name, session_id=s_id))  # streaming, no mode: auto
    for want in ("Created notes/todo.md (14 bytes).", "Edited notes/todo.md: replaced 1 occurrence."):
        start = s.until_type("tool_start")
        assert start["tool_name"] == "edit_file" and start["awaiting_confirmation"], start  # auto always asks
        assert confirm(warden, start["approval_id"], "allow")[0] == 200
        end = s.until_type("tool_end")
        assert end["result"].startswith(want), end["result"]
    assert "-- eggs\n+- bread\n" in end["result"]
    s.rest()
    f = workspace(home, s_id) / "notes" / "todo.md"
    assert f.read_text() == "- milk\n- bread\n"
    if os.geteuid() == 0:
        assert f.stat().st_uid == 65534  # written by the jail's user, not the server's
    rows = audit(warden, session_id=s_id)
    assert [r["tool"] for r in rows] == ["edit_file", "edit_file"]
    assert all(r["arguments"]["path"] == "notes/todo.md" for r in rows)


@pytest.mark.parametrize("mode", ["off", "full"])  # in the jail, and under bypass with relative paths
def test_paths_out_of_the_workspace_are_refused(warden, fake_upstream, home, tmp_path, mode):
    s_id = sid("escape")
    # Every way out points at decoys under tmp_path, never at the machine's /etc: were a refusal
    # ever to break, the test would write there, not over a system file.
    outside = tmp_path / "outside.txt"
    outside.write_text("keep")
    (tmp_path / "etc").mkdir()
    decoy = tmp_path / "etc" / "passwd"
    decoy.write_text("keep")
    turns = [{"tool_calls": [call("terminal", {"command": f"ln -s {outside} planted && ln -s {tmp_path / 'etc'} etc"})]}]
    paths = ["../outside.txt", "planted", "etc/passwd", "sub/../../outside.txt"]
    if mode == "off":  # under bypass an absolute path is taken as written (the next test)
        paths += [str(outside), f"/proc/self/root{decoy}"]
    for path in paths:
        turns.append({"tool_calls": [edit(path, "keep", "pwned")]})
    name = script(fake_upstream, turns + [{"content": "ok"}])
    s = Stream(warden.port, chat(name, session_id=s_id, permission_mode=mode))
    results = [f["result"] for f in s.rest() if isinstance(f, dict) and f.get("type") == "tool_end"]
    assert len(results) == 1 + len(paths)
    assert results[0] == "(no output)", results[0]  # the links were planted
    for r in results[1:]:
        assert r.startswith("Error: "), r
    assert outside.read_text() == "keep"
    assert decoy.read_text() == "keep"
    ws = workspace(home, s_id) if mode == "off" else home / "workspaces" / ".host" / s_id
    assert (ws / "planted").is_symlink()  # not followed, not replaced
    # `warden audit` shows each refused edit as an error (it has no exit status)
    out = warden_cli("audit", "--home", str(home), "--session", s_id, "--limit", "20")
    edits = [l for l in out.stdout.splitlines() if "edit_file" in l]
    assert len(edits) == len(paths) and all("exit=error" in l for l in edits), out.stdout + out.stderr


def test_a_symlink_swapped_in_by_a_concurrent_jailed_call_never_leads_out(warden, fake_upstream, home, tmp_path):
    # Request A: a jailed python call swaps `d` between a folder and a symlink to a decoy outside
    # (RENAME_EXCHANGE, so `d` is always there) for a few seconds. Request B, on the same session
    # meanwhile: edit_file creates d/f0 … d/f29. Each edit lands in the folder or is refused;
    # the decoy folder stays empty.
    s_id = sid("race")
    decoy = tmp_path / "decoy"
    decoy.mkdir()
    flip = ("import ctypes, os, time\n"
            "os.mkdir('d'); os.symlink(%r, 'l')\n"
            "libc = ctypes.CDLL(None, use_errno=True)\n"
            "end = time.time() + 6; n = 0\n"
            "while time.time() < end:\n"
            "    n += libc.renameat2(-100, b'd', -100, b'l', 2) == 0\n"
            "print('swaps', n)\n") % str(decoy)
    flipper = script(fake_upstream, [{"tool_calls": [call("python", {"code": flip})]}, {"content": "flipped"}])
    a = Stream(warden.port, chat(flipper, session_id=s_id, permission_mode="off"))
    a.until_type("tool_start")
    deadline = time.time() + 10
    while not (workspace(home, s_id) / "l").is_symlink() and time.time() < deadline:
        time.sleep(0.05)
    edits = script(fake_upstream, [{"tool_calls": [edit(f"d/f{i}", "", "x")]} for i in range(20)] + [{"content": "ok"}])
    b = Stream(warden.port, chat(edits, session_id=s_id, permission_mode="off"))
    results = [f["result"] for f in b.rest() if isinstance(f, dict) and f.get("type") == "tool_end"]
    ran = [f["result"] for f in a.rest() if isinstance(f, dict) and f.get("type") == "tool_end"]
    assert ran and ran[0].startswith("swaps "), ran
    assert len(results) == 20
    assert list(decoy.iterdir()) == []  # never written through the symlink
    for r in results:
        assert r.startswith("Created d/f") or r.startswith("Error: "), r
