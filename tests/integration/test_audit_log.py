"""The audit log that tells the truth (issue 22), against the scripted fake upstream with the real
tools in the real sandbox: a call that ran and lost its client still reads as run, commands
around a key marker or a command substitution are stored visible, each row carries the SHA-256
of the arguments the tool received, and `warden audit verify` checks the hash chain of a log a
running warden wrote — and names the row a person edited with the sqlite3 command line."""
import hashlib
import json
import shutil
import sqlite3
import subprocess
import time
import uuid

from conftest import WARDEN_BIN, on_fake, request, script, warden_on_fake
from test_tool_loop import Stream, call

WARDEN = on_fake("--sse-ping-interval", "300")  # the module's `warden` fixture (conftest.py)


def chat(name, **kw):
    """A streaming tool-loop request in mode off: every call runs without a question."""
    body = {"messages": [{"role": "user", "content": f"scenario:script:{name}"}], "stream": True,
            "enable_tools": True, "permission_mode": "off"}
    body.update(kw)
    return body


def sid(prefix):
    return prefix + "-" + uuid.uuid4().hex[:8]


def audit(w, **params):
    q = "&".join(f"{k}={v}" for k, v in params.items())
    st, _, body = request(w.port, "GET", "/api/audit" + ("?" + q if q else ""))
    assert st == 200, body
    return json.loads(body)["data"]


def rows_when(w, session, ready, timeout=20):
    """The session's audit rows once `ready(rows)` holds (records are written off the stream)."""
    deadline = time.time() + timeout
    while True:
        rows = audit(w, session_id=session)
        if ready(rows) or time.time() > deadline:
            return rows
        time.sleep(0.1)


def args_sha256(args):
    """What the row's arguments_sha256 is, computed from the arguments as sent (store/call_records.h:
    nlohmann's dump() of the parsed object is Python's json.dumps with sorted keys, no spaces, raw UTF-8)."""
    canonical = json.dumps(args, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def warden_cli(*args):
    return subprocess.run([WARDEN_BIN, *args], capture_output=True, text=True, timeout=60)


def terminal_turns(*commands, final="done"):
    return [{"tool_calls": [call("terminal", {"command": c})]} for c in commands] + [{"content": final}]


def test_a_call_that_ran_and_lost_its_client_reads_as_run(warden, fake_upstream, home):
    s_id = sid("gone")
    command = "sleep 2; echo done"
    s = Stream(warden.port, chat(script(fake_upstream, terminal_turns(command)), session_id=s_id))
    assert not s.until_type("tool_start")["awaiting_confirmation"]
    s.until(lambda f: isinstance(f, dict) and f.get("type") == "tool_status" and f["content"].startswith("Running"),
            "the call running")
    assert [r["status"] for r in audit(warden, session_id=s_id)] == ["pending"]  # written before it ran
    s.close()  # the client leaves while `sleep 2` runs
    rows = rows_when(warden, s_id, lambda rs: rs and rs[0]["status"] != "pending")
    assert len(rows) == 1
    row = rows[0]
    assert row["status"] == "ran" and row["allowed"] is True, row
    assert row["notes"] == ["client_gone"] and row["decided_by"] != "client_gone", row
    assert row["arguments"] == {"command": command}
    assert row["arguments_sha256"] == args_sha256({"command": command})
    assert len(row["row_hash"]) == 64
    # `warden audit` reads it the same way
    out = warden_cli("audit", "--home", str(home), "--session", s_id)
    assert out.returncode == 0 and " ran[client_gone] " in out.stdout, out.stdout + out.stderr


def test_commands_around_a_key_marker_or_a_substitution_are_stored_visible(warden, fake_upstream):
    s_id = sid("visible")
    pw = "Hunter2" + "Secret"
    commands = ["echo '-----BEGIN PRIVATE KEY-----' > k; echo after-the-marker",
                "echo -----BEGIN OPENSSH PRIVATE KEY-----; echo after-the-bare-marker",
                "API_KEY=\"$(echo not-a-secret)\" sh -c 'echo after-the-substitution'",
                f"echo {pw} | sudo -S true; echo after-sudo"]
    s = Stream(warden.port, chat(script(fake_upstream, terminal_turns(*commands)), session_id=s_id))
    s.rest()
    rows = rows_when(warden, s_id, lambda rs: len(rs) == len(commands) and all(r["status"] != "pending" for r in rs))
    assert [r["arguments"]["command"] for r in rows[:3]] == commands[:3]
    assert rows[3]["arguments"]["command"] == "echo [REDACTED] | sudo -S true; echo after-sudo"
    for r, c in zip(rows, commands):
        assert r["status"] == "ran" and r["arguments_sha256"] == args_sha256({"command": c})
    assert pw not in json.dumps(audit(warden, session_id=s_id))


def edit_row(db, row_id, arguments):
    """Rewrites one row's arguments behind warden's back, with the sqlite3 command line (Debian's
    `sqlite3`, scripts/setup), or Python's sqlite3 module where the command is missing."""
    statement = f"UPDATE call_records SET arguments = '{arguments}' WHERE id = {row_id};"
    if shutil.which("sqlite3"):
        subprocess.run(["sqlite3", str(db), statement], check=True, timeout=30)
    else:
        with sqlite3.connect(db) as conn:
            conn.execute(statement)


def test_verify_passes_on_a_real_log_and_names_the_row_edited_with_sqlite3(fake_upstream, tmp_path):
    w = warden_on_fake(fake_upstream, home=tmp_path)
    try:
        s_id = sid("chain")
        turns = [{"tool_calls": [call("terminal", {"command": "echo one"}), call("python", {"code": "print(2)"})]},
                 {"tool_calls": [call("terminal", {"command": "rm -rf /workspace/nothing"})]},
                 {"tool_calls": [call("nope", {})]},
                 {"content": "end"}]
        Stream(w.port, chat(script(fake_upstream, turns), session_id=s_id)).rest()
        n = 4
        rows = rows_when(w, s_id, lambda rs: len(rs) == n and all(r["status"] != "pending" for r in rs))
        assert [r["status"] for r in rows] == ["ran", "ran", "ran", "not_run"]
        ok = warden_cli("audit", "verify", "--home", str(tmp_path))  # while the server writes (WAL)
        assert ok.returncode == 0 and ok.stdout.startswith(f"ok: {n} rows, 7 events, chain head "), ok.stdout + ok.stderr
        assert ok.stdout.split("chain head ")[1].strip() in {r["row_hash"] for r in rows}
    finally:
        w.stop()
    target = rows[1]["id"]
    edit_row(tmp_path / "warden.db", target, '{"code":"print(3)"}')
    bad = warden_cli("audit", "verify", "--home", str(tmp_path))
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert bad.stdout.startswith(f"row {target}: arguments differs from its last chained event"), bad.stdout
