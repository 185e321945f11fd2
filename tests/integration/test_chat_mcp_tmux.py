"""`warden chat` and MCP servers (issue 26), driven through tmux like a person at a keyboard (the
fixtures and helpers of test_chat_tmux.py): a server's request for input (MCP "elicitation")
answered field by field in the chat, and `warden chat --inbox` answering what waits in another
client's stream. The scripted MCP server (tests/fake/mcp_server.py) is added as test_mcp.py adds
it; the scripted upstream asks for its tools."""
import json
import re
import threading
import time
import uuid

import pytest

from conftest import request, script, upstream_requests
from test_chat_tmux import ASK, WAIT_S, Pane, call, pane, piped, python_turns, tmux  # noqa: F401 (fixtures)
from test_mcp import add_server, fake_entry, wait_ready
from test_permissions import audit, chat, sid
from test_tool_loop import Stream

pytestmark = pytest.mark.skipif(not __import__("shutil").which("tmux"), reason="tmux is not installed (scripts/setup packages)")

SEND = "Send? [y]es / [d]ecline / [c]ancel"


@pytest.fixture(scope="module")
def fake(warden):
    add_server(warden, fake_entry("fake"))
    return wait_ready(warden, "fake")


def ask_turns(final):
    return [{"tool_calls": [call("fake__ask", {"question": "Who are you?"})]}, {"content": final}]


def pending(w, session_id):
    st, _, body = request(w.port, "GET", f"/api/inference/approvals?session_id={session_id}")
    assert st == 200, body
    return json.loads(body)["data"]


def wait_pending(w, session_id):
    deadline = time.time() + WAIT_S
    while not pending(w, session_id):
        assert time.time() < deadline, f"nothing came to wait in {session_id}"
        time.sleep(0.1)


class Background:
    """A streaming request read on a thread until its end (a client other than the chat)."""

    def __init__(self, w, body):
        self.stream = Stream(w.port, body, timeout=120)
        self.error = None
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        try:
            self.stream.rest()
        except Exception as e:  # noqa: BLE001 (reported by frames())
            self.error = e

    def frames(self, t):
        self.thread.join(WAIT_S)
        assert not self.thread.is_alive() and self.error is None, (self.error, self.stream.frames[-5:])
        return [f for f in self.stream.frames if isinstance(f, dict) and f.get("type") == t]


def test_an_mcp_form_is_answered_field_by_field_in_the_chat(pane, warden, fake_upstream, fake):
    p = pane("--mcp")
    name = script(fake_upstream, ask_turns("Nice to meet you, Ada."))
    p.line(f"scenario:script:{name}")
    s = p.wait_for(re.escape(ASK))  # mode ask: the call itself waits first
    assert "» fake__ask" in s and "question: Who are you?" in s
    p.line("y")
    s = p.wait_for(r"Name · text \(required\): ")
    assert "? fake asks (fake__ask)\n    Who are you?" in s, s
    p.line("")  # required: asked again
    p.wait_for("this field is required")
    p.line("Ada")
    p.wait_for(r"age · whole number, at least 0 \(Enter to skip\): ")
    p.line(" -3")  # (a leading "-" would be a tmux option; spaces around a number are fine)
    p.wait_for("must be at least 0")
    p.line("36")
    s = p.wait_for(r"color · choose 1-2 \(Enter to skip\): ")
    assert "    1) red\n    2) green" in s
    p.line("2")
    p.wait_for(r"subscribe · y/n \(Enter to skip\): ")
    p.line("")  # skipped
    s = p.wait_for(re.escape(SEND))
    assert 'answer: {"age":36,"color":"green","name":"Ada"}' in s
    p.line("y")
    s = p.wait_for("Nice to meet you, Ada.")
    assert re.search(r'│ action=accept content=\{"age": 36, "color": "green", "name": "Ada"\}', s), s
    p.wait_prompt(2)
    notes = audit(warden, session_id=p.sid)[0]["notes"]
    assert "elicitation:accept" in notes, notes


def test_ctrl_c_cancels_the_form_and_decline_declines(pane, warden, fake_upstream, fake):
    p = pane("--mcp", "--mode", "off")
    name = script(fake_upstream, ask_turns("Cancelled then."))
    p.line(f"scenario:script:{name}")
    p.wait_for(r"Name · text \(required\): ")
    p.type("Ad")
    p.keys("C-c")
    s = p.wait_for("Cancelled then.")
    assert "│ action=cancel" in s, s
    p.wait_prompt(2)
    name = script(fake_upstream, ask_turns("Declined then."))
    p.line(f"scenario:script:{name}")
    p.wait_for(r"Name · text \(required\): ", count=2)
    p.line("Bo")
    for _ in range(3):  # age, color, subscribe: skipped
        p.keys("Enter")
    p.wait_for(re.escape(SEND))
    p.line("maybe")
    p.wait_for(r"answer y \(send\), d \(decline\) or c \(cancel\)")
    p.line("d")
    s = p.wait_for("Declined then.")
    assert "│ action=decline" in s, s
    p.wait_prompt(3)


def test_a_url_request_shows_the_url_and_is_answered_done(pane, warden, fake_upstream, fake):
    p = pane("--mcp", "--mode", "off")
    name = script(fake_upstream, [{"tool_calls": [call("fake__ask_url", {})]}, {"content": "Authorized."}])
    p.line(f"scenario:script:{name}")
    s = p.wait_for(re.escape("[y] done / [d]ecline / [c]ancel"))
    assert "? fake asks you to visit a page" in s and "https://example.com/authorize?x=1" in s, s
    assert "does not open it" in s
    p.line("y")
    s = p.wait_for("Authorized.")
    assert "│ action=accept" in s, s


def test_inbox_answers_a_call_waiting_in_another_clients_stream(tmux, warden, fake_upstream, home):
    s_id = sid("tinbox")
    name = script(fake_upstream, python_turns("print('allowed from the inbox')", "Inbox run done."))
    bg = Background(warden, chat(name, session_id=s_id, permission_mode="ask"))
    wait_pending(warden, s_id)
    p = Pane(tmux, home, "--url", warden.base, "--inbox", "--session", s_id)
    try:
        s = p.wait_for(re.escape(ASK))
        assert f"1 question waits in session {s_id}:" in s, s
        assert re.search(rf"1\. python · print\('allowed from the inbox'\) · session {s_id} · expires in \d+ s", s), s
        assert "» python" in s and "print('allowed from the inbox')" in s
        p.line("y")
        assert p.exit_status() == 0
    finally:
        p.close()
    ends = bg.frames("tool_end")
    assert [(e["decided_by"], e["allowed"]) for e in ends] == [("user", True)], ends
    assert "allowed from the inbox" in ends[0]["result"]


def test_inbox_answers_an_mcp_form_and_says_when_nothing_waits(tmux, warden, fake_upstream, home, fake):
    s_id = sid("tinbox-el")
    p = Pane(tmux, home, "--url", warden.base, "--inbox", "--session", s_id)
    try:
        p.wait_for(f"nothing is waiting for an answer in session {s_id}")
        assert p.exit_status() == 0
    finally:
        p.close()
    name = script(fake_upstream, ask_turns("ok"))
    bg = Background(warden, chat(name, session_id=s_id, mcp_enabled=True, permission_mode="off"))
    wait_pending(warden, s_id)
    p = Pane(tmux, home, "--url", warden.base, "--inbox", "--session", s_id)
    try:
        s = p.wait_for(r"Name · text \(required\): ")
        assert re.search(r"1\. fake asks: Who are you\? \(fake__ask\) · session ", s), s
        p.line("Cy")
        for _ in range(3):
            p.keys("Enter")
        p.wait_for(re.escape(SEND))
        p.line("y")
        assert p.exit_status() == 0
    finally:
        p.close()
    ends = bg.frames("tool_end")
    assert ends[0]["result"] == 'action=accept content={"name": "Cy"}', ends


def test_mcp_and_inbox_commands_in_the_chat(pane, warden, fake_upstream, fake):
    p = pane("--mode", "off")
    p.line("/mcp")
    p.wait_for("MCP servers' tools: off")
    p.line("/mcp on")
    p.wait_for("MCP servers' tools: on")
    name = script(fake_upstream, [{"tool_calls": [call("fake__echo", {"text": "hi"})]}, {"content": "Echoed."}])
    p.line(f"scenario:script:{name}")
    s = p.wait_for("Echoed.")
    assert "│ echo: hi" in s, s
    assert "fake__echo" in {t["function"]["name"] for t in upstream_requests(fake_upstream, name)[0]["tools"]}
    p.line("/mcp maybe")
    p.wait_for("/mcp takes on or off")
    p.line("/inbox")
    p.wait_for(f"nothing is waiting for an answer in session {p.sid}")
    p.line("/inbox later")
    p.wait_for(r"/inbox takes nothing \(this session\) or: all")


def test_piped_an_mcp_question_is_declined(warden, fake_upstream, fake):
    name = script(fake_upstream, ask_turns("Nobody answered."))
    r = piped(warden.base, f"scenario:script:{name}", "--mcp", "--mode", "off")
    assert r.returncode == 0, r.stderr
    assert "warden chat: declined fake's request for input: stdin is not a terminal" in r.stderr, r.stderr
    assert "│ action=decline" in r.stderr and r.stdout == "Nobody answered.\n", (r.stdout, r.stderr)
