"""`warden chat`, the terminal client, driven through tmux like a person at a keyboard.

warden runs on the scripted fake upstream (tests/fake/fake_upstream.py): each question typed is
`scenario:script:<name>`, which makes the "model" stream a given text or python call. The chat
runs in a detached tmux session on a private socket (120x40); the test types with send-keys
and reads the screen with capture-pane, waiting (bounded polling, no fixed sleeps) for what
must appear. Piped mode (`echo … | warden chat`) runs as a plain subprocess.

WARDEN_UPDATE_TRANSCRIPT=1 also rewrites docs/warden-chat-transcript.txt from a real session."""
import json
import os
import pathlib
import re
import shlex
import shutil
import socket
import subprocess
import time
import uuid

import pytest

from conftest import ROOT, WARDEN_BIN, request, script, upstream_requests, on_fake, warden_on_fake

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (scripts/setup packages)")

ASK = "allow? [y]es / [a]lways for this chat / [A]lways / [n]o"
DECLINED = "The user declined to run this tool call."
WAIT_S = 40  # generous: the machine may be busy with builds


def call(name, args):
    return {"name": name, "arguments": json.dumps(args)}


def python_turns(code, final):
    return [{"content": "Let me run that.", "tool_calls": [call("python", {"code": code})]}, {"content": final}]


class Tmux:
    """A tmux server of our own (a private socket), torn down with the fixture."""

    def __init__(self):
        self.socket = f"warden-chat-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self.run("-f", "/dev/null", "new-session", "-d", "-s", "keep", "-x", "120", "-y", "40", "sleep 3600")
        self.run("set-option", "-g", "history-limit", "50000")

    def run(self, *args, check=True):
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=30, check=check)

    def close(self):
        self.run("kill-server", check=False)


class Pane:
    """`warden chat ARGS` in a tmux session; after it exits the pane shows `__EXIT__ <status>`."""

    def __init__(self, tmux, home, *args, env=None):
        self.tmux = tmux
        self.name = "chat-" + uuid.uuid4().hex[:8]
        envs = [f"WARDEN_HOME={home}", *(f"{k}={v}" for k, v in (env or {}).items())]
        chat = shlex.join(["env", "-u", "NO_COLOR", "-u", "WARDEN_API_KEY", *envs, WARDEN_BIN, "chat", *args])
        tmux.run("new-session", "-d", "-s", self.name, "-x", "120", "-y", "40",
                 f"{chat}; echo __EXIT__ $?; sleep 3600")

    def type(self, text):
        self.tmux.run("send-keys", "-t", self.name, "-l", text)

    def keys(self, *keys):
        self.tmux.run("send-keys", "-t", self.name, *keys)

    def line(self, text):
        self.type(text)
        self.keys("Enter")

    def screen(self):
        """Everything the pane showed, scrollback included, wrapped lines joined."""
        return self.tmux.run("capture-pane", "-p", "-J", "-S", "-", "-t", self.name).stdout

    def wait_for(self, pattern, count=1, timeout=WAIT_S):
        """Waits until `pattern` (a regex) appears `count` times; returns the screen."""
        rx = re.compile(pattern)
        deadline = time.time() + timeout
        while True:
            text = self.screen()
            if len(rx.findall(text)) >= count:
                return text
            if time.time() > deadline:
                raise AssertionError(f"no {count} x /{pattern}/ within {timeout}s; screen:\n{text}")
            time.sleep(0.05)

    def wait_prompt(self, count):
        """Waits for the `count`-th `you›` prompt (the REPL is ready for the next line)."""
        return self.wait_for(r"(?m)^you› ", count)

    def exit_status(self, timeout=WAIT_S):
        return int(re.search(r"__EXIT__ (\d+)", self.wait_for(r"__EXIT__ \d+", timeout=timeout)).group(1))

    def close(self):
        self.tmux.run("kill-session", "-t", self.name, check=False)


@pytest.fixture(scope="module")
def tmux():
    t = Tmux()
    yield t
    t.close()


WARDEN = on_fake("--sse-ping-interval", "300")  # the module's `warden` fixture (conftest.py)


@pytest.fixture
def pane(tmux, warden, home):
    """A chat in a fresh session; `pane.sid` is its session id."""
    made = []

    def start(*args, sid=None, chat_home=None, env=None):
        sid = sid or "tchat-" + uuid.uuid4().hex[:8]
        p = Pane(tmux, chat_home or home, "--url", warden.base, "--session", sid, *args, env=env)
        p.sid = sid
        made.append(p)
        p.wait_prompt(1)
        return p

    yield start
    for p in made:
        p.close()


def audit(w, sid):
    st, _, body = request(w.port, "GET", f"/api/audit?session_id={sid}")
    assert st == 200, body
    return json.loads(body)["data"]


def rules(w, sid=None):
    st, _, body = request(w.port, "GET", "/api/permissions/rules" + (f"?session_id={sid}" if sid else ""))
    assert st == 200, body
    return json.loads(body)["data"]


def fake_stats(fake):
    return json.loads(request(fake.port, "GET", "/stats")[2])


def workspace(home, sid):
    return pathlib.Path(home) / "workspaces" / sid


def piped(warden_url, question, *args, env=None, timeout=60):
    e = {k: v for k, v in os.environ.items() if k not in ("WARDEN_API_KEY", "NO_COLOR")}
    e.update(env or {})
    t0 = time.time()
    r = subprocess.run([WARDEN_BIN, "chat", "--url", warden_url, *args], input=question, capture_output=True,
                       text=True, timeout=timeout, env=e)
    r.elapsed = time.time() - t0
    return r


# --- 1. a streamed answer ----------------------------------------------------------------------

def test_answer_streams_and_the_conversation_is_kept(pane, warden, fake_upstream):
    text = "Streaming " + "word " * 40 + "done."
    first = script(fake_upstream, [{"content": text, "piece": 4, "piece_delay": 0.05}])
    p = pane()
    assert f"model fake-model · mode ask · session {p.sid}" in p.screen()
    p.line(f"scenario:script:{first}")
    # the answer shows up piece by piece: a screen with its start but not its end
    deadline, partial = time.time() + WAIT_S, False
    while time.time() < deadline:
        s = p.screen()
        if "done." in s:
            break
        partial = partial or "Streaming word" in s
        time.sleep(0.03)
    assert partial, "never saw the answer half written"
    p.wait_for(re.escape(text))
    p.wait_prompt(2)
    second = script(fake_upstream, [{"content": "Second answer."}])
    p.line(f"scenario:script:{second}")
    p.wait_for("Second answer.")
    p.wait_prompt(3)
    # the second request carried the conversation so far, and warden's tools
    req = upstream_requests(fake_upstream, second)[0]
    convo = [(m["role"], m["content"]) for m in req["messages"] if m["role"] in ("user", "assistant")]
    assert convo[-3:] == [("user", f"scenario:script:{first}"), ("assistant", text), ("user", f"scenario:script:{second}")]
    assert {t["function"]["name"] for t in req["tools"]} >= {"python", "terminal", "render_html"}


# --- 2. approvals --------------------------------------------------------------------------------

def test_yes_runs_no_declines(pane, warden, fake_upstream, home):
    p = pane()
    yes = script(fake_upstream, python_turns("print(6*7)", "The answer is 42."))
    p.line(f"scenario:script:{yes}")
    s = p.wait_for(re.escape(ASK))
    assert "» python" in s and "    print(6*7)" in s and "risk: low" in s
    assert "The answer is 42." not in s  # the run waits for the answer
    p.line("y")
    s = p.wait_for("The answer is 42.")
    assert re.search(r"│ 42\n", s) and "✓ python finished · you allowed it" in s
    p.wait_prompt(2)

    no = script(fake_upstream, python_turns("open('nope.txt','w').write('x')", "Fine, I did not run it."))
    p.line(f"scenario:script:{no}")
    p.wait_for(re.escape(ASK), count=2)
    p.line("n")
    s = p.wait_for("Fine, I did not run it.")
    assert "✗ python not run · you declined it" in s and DECLINED in s
    p.wait_prompt(3)
    assert not (workspace(home, p.sid) / "nope.txt").exists()
    rows = audit(warden, p.sid)
    assert [(r["decided_by"], r["allowed"]) for r in rows] == [("user", True), ("user", False)]


def test_an_edit_file_card_shows_the_change_it_asks_for(pane, warden, fake_upstream, home):
    p = pane()
    name = script(fake_upstream, [
        {"content": "Writing it.", "tool_calls": [call("edit_file", {"path": "hi.txt", "old_string": "",
                                                                     "new_string": "hello\nworld\n"})]},
        {"content": "Created it."}])
    p.line(f"scenario:script:{name}")
    s = p.wait_for(re.escape(ASK))
    assert "» edit_file" in s and "    hi.txt\n    (new file)\n    +hello\n    +world" in s, s
    assert not (workspace(home, p.sid) / "hi.txt").exists()  # nothing written before the answer
    p.line("y")
    p.wait_for("Created it.")
    assert (workspace(home, p.sid) / "hi.txt").read_text() == "hello\nworld\n"


def test_two_waiting_cards_are_asked_in_turn(pane, warden, fake_upstream, home):
    """Both calls of a turn wait at once (README: every card of a turn comes first); each is asked."""
    p = pane()
    name = script(fake_upstream, [
        {"tool_calls": [call("python", {"code": "print('first call')"}),
                        call("terminal", {"command": "echo second > second.txt"})]},
        {"content": "Both answered."}])
    p.line(f"scenario:script:{name}")
    s = p.wait_for(re.escape(ASK))
    assert "print('first call')" in s
    p.line("y")
    s = p.wait_for(re.escape(ASK), count=2)
    assert "$ echo second > second.txt" in s
    p.line("n")
    s = p.wait_for("Both answered.")
    assert "│ first call" in s and "✗ terminal not run · you declined it" in s
    assert not (workspace(home, p.sid) / "second.txt").exists()
    assert sorted((r["tool"], r["allowed"]) for r in audit(warden, p.sid)) == [("python", True), ("terminal", False)]


def test_an_unclear_answer_asks_again(pane, fake_upstream):
    p = pane()
    name = script(fake_upstream, python_turns("print('asked twice')", "ok then"))
    p.line(f"scenario:script:{name}")
    p.wait_for(re.escape(ASK))
    p.line("maybe")
    p.wait_for("answer y \\(allow once\\)")
    p.wait_for(re.escape(ASK), count=2)
    p.line("yes")
    s = p.wait_for("ok then")
    assert "│ asked twice" in s


def test_always_answers_are_remembered(pane, warden, fake_upstream, home):
    p = pane()
    code = "print('remembered for the chat')"
    first = script(fake_upstream, python_turns(code, "First run done."))
    p.line(f"scenario:script:{first}")
    p.wait_for(re.escape(ASK))
    p.line("a")
    s = p.wait_for("First run done.")
    rule_id = re.search(r"remembered for this chat as (rule_[A-Za-z0-9_-]+)", s).group(1)
    p.wait_prompt(2)
    # the same call again: no question, the rule allowed it
    again = script(fake_upstream, python_turns(code, "Second run done."))
    p.line(f"scenario:script:{again}")
    s = p.wait_for("Second run done.")
    assert s.count(ASK) == 1 and "allowed by a remembered rule" in s
    assert s.count("│ remembered for the chat") == 2
    p.wait_prompt(3)
    # /rules lists it; /rules revoke forgets it
    p.line("/rules")
    s = p.wait_for(rule_id + r"\s+session\s+python\s+print\('remembered for the chat'\)")
    p.line(f"/rules revoke {rule_id}")
    p.wait_for("revoked " + rule_id)
    assert rule_id not in [r["id"] for r in rules(warden, p.sid)]
    p.line("/rules revoke rule_doesnotexist")
    p.wait_for("no rule rule_doesnotexist")

    # [A]lways: remembered for every session, so a new session runs it without a question
    code = "print('remembered for good')"
    always = script(fake_upstream, python_turns(code, "Always run done."))
    p.line(f"scenario:script:{always}")
    p.wait_for(re.escape(ASK), count=2)
    p.line("A")
    s = p.wait_for("Always run done.")
    always_id = re.search(r"remembered for every session as (rule_[A-Za-z0-9_-]+)", s).group(1)
    try:
        p.line("/new")
        s = p.wait_for(r"new conversation · session (chat-[A-Za-z0-9_-]{12})")
        new_sid = re.search(r"new conversation · session (chat-[A-Za-z0-9_-]{12})", s).group(1)
        other = script(fake_upstream, python_turns(code, "Other session done."))
        p.line(f"scenario:script:{other}")
        s = p.wait_for("Other session done.")
        assert s.count(ASK) == 2 and s.count("│ remembered for good") == 2
        assert [(r["decided_by"], r["rule_id"]) for r in audit(warden, new_sid)] == [("rule", always_id)]
    finally:
        request(warden.port, "DELETE", f"/api/permissions/rules/{always_id}")


# --- 3. Ctrl-C -------------------------------------------------------------------------------

def test_ctrl_c_cancels_a_slow_run_and_the_prompt_returns(pane, warden, fake_upstream):
    slow = script(fake_upstream, [{"content": "slow " * 400, "piece": 5, "piece_delay": 0.1}])  # 40 s in all
    before = fake_stats(fake_upstream)["disconnects"]
    p = pane()
    p.line(f"scenario:script:{slow}")
    p.wait_for("slow slow slow")
    t0 = time.time()
    p.keys("C-c")
    s = p.wait_for("run cancelled")
    took = time.time() - t0
    # warden got the cancel for this run's cancel_id, and stopped the model
    assert "cancelling the run (server stopped 1 run" in s
    assert took < 4.5, took
    p.wait_prompt(2)
    deadline = time.time() + 10
    while fake_stats(fake_upstream)["disconnects"] <= before:
        assert time.time() < deadline, "warden never closed the upstream stream"
        time.sleep(0.1)
    assert len(upstream_requests(fake_upstream, slow)) == 1
    # the chat goes on
    after = script(fake_upstream, [{"content": "Still here."}])
    p.line(f"scenario:script:{after}")
    p.wait_for("Still here.")
    p.wait_prompt(3)
    # Ctrl-C at an empty prompt quits
    p.keys("C-c")
    assert p.exit_status() == 0


def test_ctrl_c_while_a_card_waits_declines_it(pane, warden, fake_upstream, home):
    p = pane()
    name = script(fake_upstream, python_turns("open('late.txt','w').write('x')", "never"))
    p.line(f"scenario:script:{name}")
    p.wait_for(re.escape(ASK))
    p.keys("C-c")
    s = p.wait_for("run cancelled")
    assert "server stopped 1 run" in s and "never" not in s.split("run cancelled")[0].split(ASK)[-1]
    p.wait_prompt(2)
    assert not (workspace(home, p.sid) / "late.txt").exists()
    rows = audit(warden, p.sid)
    assert len(rows) == 1 and rows[0]["allowed"] is False and rows[0]["decided_by"] in ("cancel", "user")


def test_ctrl_d_quits(pane):
    p = pane()
    p.keys("C-d")
    assert p.exit_status() == 0


def test_second_ctrl_c_while_cancelling_quits(pane, fake_upstream):
    p = pane()
    # a model that does not answer for 20 s (the cancel reaches warden, not the fake's sleep)
    name = script(fake_upstream, [{"delay": 20, "content": "late"}])
    p.line(f"scenario:script:{name}")
    # Ctrl-C once the run is in flight: pressed before the client has sent the question (a
    # loaded machine), it only clears the prompt, and there is no run to cancel
    deadline = time.time() + WAIT_S
    while not any(name in json.dumps(b) for b in fake_stats(fake_upstream)["requests"]):
        assert time.time() < deadline, "the question never reached the upstream"
        time.sleep(0.1)
    p.keys("C-c")
    p.wait_for("cancelling the run")
    p.keys("C-c")
    assert p.exit_status(timeout=10) in (0, 130)


# --- 4. piped mode -----------------------------------------------------------------------------

def test_piped_question_prints_the_answer(warden, fake_upstream):
    name = script(fake_upstream, [{"content": "Piped answer."}])
    r = piped(warden.base, f"scenario:script:{name}\n")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "Piped answer.\n"
    assert "you›" not in r.stdout and "\x1b[" not in r.stdout  # no prompt, no colours on a pipe


def test_piped_gated_call_is_denied(warden, fake_upstream, home):
    sid = "tpipe-" + uuid.uuid4().hex[:8]
    name = script(fake_upstream, python_turns("open('piped.txt','w').write('x')", "I could not run it."))
    r = piped(warden.base, f"scenario:script:{name}", "--session", sid)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "Let me run that.\nI could not run it.\n"
    assert "warden chat: denied the python call: stdin is not a terminal" in r.stderr
    assert not (workspace(home, sid) / "piped.txt").exists()
    assert [(x["decided_by"], x["allowed"]) for x in audit(warden, sid)] == [("user", False)]
    # --mode off: nothing asks, so the call runs (its card and output go to stderr)
    sid2 = "tpipe-" + uuid.uuid4().hex[:8]
    name = script(fake_upstream, python_turns("print(6*7)", "It printed 42."))
    r = piped(warden.base, f"scenario:script:{name}", "--session", sid2, "--mode", "off")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "Let me run that.\nIt printed 42.\n" and "│ 42" in r.stderr and "denied" not in r.stderr


def test_piped_errors_are_clear_and_quick(fake_upstream, tmp_path):
    # nobody listening
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    dead = f"http://127.0.0.1:{s.getsockname()[1]}"
    s.close()
    r = piped(dead, "hello")
    assert r.returncode == 1 and "cannot reach warden at " + dead in r.stderr and r.elapsed < 10
    w = warden_on_fake(fake_upstream, "--api-key", "chat-key-123", "--max-permission", "ask", home=tmp_path)
    try:
        name = script(fake_upstream, [{"content": "Keyed answer."}])
        r = piped(w.base, f"scenario:script:{name}")
        assert r.returncode == 1 and "HTTP 401" in r.stderr and "WARDEN_API_KEY" in r.stderr, r.stderr
        r = piped(w.base, f"scenario:script:{name}", env={"WARDEN_API_KEY": "chat-key-123"})
        assert r.returncode == 0 and r.stdout == "Keyed answer.\n", r.stderr
        r = piped(w.base, f"scenario:script:{name}", "--api-key", "chat-key-123")
        assert r.returncode == 0 and r.stdout == "Keyed answer.\n", r.stderr
        # above the server's --max-permission: the 403 envelope's message, exit 1
        r = piped(w.base, f"scenario:script:{name}", "--api-key", "chat-key-123", "--mode", "full")
        assert r.returncode == 1 and "HTTP 403" in r.stderr and "--max-permission" in r.stderr, r.stderr
        # an empty question, a bad session id
        r = piped(w.base, "  \n", "--api-key", "chat-key-123")
        assert r.returncode == 2 and "no question on stdin" in r.stderr
        r = piped(w.base, "hi", "--session", "bad id!")
        assert r.returncode == 2 and "--session" in r.stderr
    finally:
        w.stop()


# --- 5. commands ---------------------------------------------------------------------------------

def test_commands(pane, warden, fake_upstream, home):
    for r in rules(warden):  # always-rules of other tests would show in /rules
        if r["scope"] == "always":
            request(warden.port, "DELETE", f"/api/permissions/rules/{r['id']}")
    p = pane()
    n = 1
    def command(line, expect):
        nonlocal n
        p.line(line)
        n += 1
        s = p.wait_prompt(n)
        assert re.search(expect, s), f"{line!r}: no /{expect}/ in\n{s}"
        return s

    command("/help", r"/rules revoke <id>")
    command("/mode", r"mode ask: every tool call waits for your answer")
    command("/mode sometimes", r"/mode takes ask, auto, off or full")
    command("/mode full", r"warning: mode full means no sandbox")
    command("/mode auto", r"mode auto: only calls the risk classifier rates high wait")
    # auto: a low-risk call runs without a question
    name = script(fake_upstream, python_turns("print(6*7)", "Auto ran it."))
    command(f"scenario:script:{name}", r"Auto ran it\.")
    assert ASK not in p.screen() and "│ 42" in p.screen()
    # /tools: the next request offers only python, then all again
    command("/tools python", r"tools: python")
    name = script(fake_upstream, [{"content": "Only python."}])
    command(f"scenario:script:{name}", r"Only python\.")
    assert [t["function"]["name"] for t in upstream_requests(fake_upstream, name)[0]["tools"]] == ["python"]
    command("/tools b@d", r"/tools: not a tool name")
    command("/tools all", r"tools: all")
    name = script(fake_upstream, [{"content": "All tools."}])
    command(f"scenario:script:{name}", r"All tools\.")
    assert len(upstream_requests(fake_upstream, name)[0]["tools"]) >= 3
    # /audit: the call of this session, as a table
    command("/audit", r"(?m)^time\s+tool\s+ran\?\s+decided by.*\n\d\d:\d\d:\d\d\s+python\s+ran\s+\w+.*print\(6\*7\)")
    command("/rules", r"no remembered rules")
    # /new: another session id, an empty conversation
    s = command("/new", r"new conversation · session chat-[A-Za-z0-9_-]{12}")
    new_sid = re.findall(r"new conversation · session (chat-[A-Za-z0-9_-]{12})", s)[-1]
    command("/audit", r"no tool calls in this session yet")
    name = script(fake_upstream, python_turns("print('new session')", "New session ran it."))
    command(f"scenario:script:{name}", r"New session ran it\.")
    assert [r["tool"] for r in audit(warden, new_sid)] == ["python"]
    req = upstream_requests(fake_upstream, name)[0]
    assert [m["role"] for m in req["messages"] if m["role"] in ("user", "assistant")] == ["user"]
    command("/bogus", r"unknown command /bogus")
    p.line("/quit")
    assert p.exit_status() == 0
    # the lines typed went to libedit's history file (spaces written as \040), private to the user
    hist = pathlib.Path(home) / "chat_history"
    assert "\n/tools\\040python\n" in hist.read_text() and (hist.stat().st_mode & 0o777) == 0o600


# --- the transcript in docs/ ---------------------------------------------------------------------

@pytest.mark.skipif(not os.environ.get("WARDEN_UPDATE_TRANSCRIPT"), reason="WARDEN_UPDATE_TRANSCRIPT=1 rewrites it")
def test_write_transcript(pane, fake_upstream):
    """A real session (the fake upstream plays the model: each question triggers its script)."""
    tag = uuid.uuid4().hex[:4]

    def named(question, turns):
        assert request(fake_upstream.port, "POST", "/script",
                       {"name": f"t-{tag}-{uuid.uuid4().hex[:6]}", "turns": turns, "trigger": question})[0] == 200
        return question

    p = pane(sid="demo")
    p.line(named("Hello! What can you do?", [{"content": "Hello! I stream my answer as I write it. Ask me to compute something "
                                       "and I will use Python.", "piece_delay": 0.02}]))
    p.wait_prompt(2)
    code = "import math\nprint(math.factorial(20))"
    p.line(named("What is 20 factorial? Use Python.", [
        {"content": "I will compute it with Python.", "tool_calls": [call("python", {"code": code})]},
        {"content": "20! = 2432902008176640000.", "piece_delay": 0.02}]))
    p.wait_for(re.escape(ASK))
    p.line("y")
    p.wait_for("20! = 2432902008176640000.")
    p.wait_prompt(3)
    p.line(named("Clean up the workspace.", [
        {"content": "Cleaning up.", "tool_calls": [call("terminal", {"command": "rm -rf /workspace/*"})]},
        {"content": "Understood, I left the files alone.", "piece_delay": 0.02}]))
    p.wait_for(re.escape(ASK), count=2)
    p.line("n")
    p.wait_prompt(4)
    p.line("/audit")
    p.wait_prompt(5)
    p.keys("C-d")
    p.exit_status()
    screen = p.screen()
    screen = screen[:screen.index("__EXIT__")].rstrip() + "\n"
    screen = re.sub(r"http://127\.0\.0\.1:\d+", "http://127.0.0.1:8888", screen)
    screen = screen.replace(f"-{tag}", "")
    (ROOT / "docs" / "warden-chat-transcript.txt").write_text(screen)
