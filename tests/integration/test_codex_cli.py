"""Codex CLI (npm @openai/codex, pinned in tests/node/package.json) with its default
configuration and `wire_api = "responses"`, against warden on the scripted fake upstream: a text
turn and a tool turn. Codex sends a `namespace` tool and a hosted `web_search` tool on every
request; warden flattens the first and leaves the second out with a note, instead of a 400 that
made Codex exit (issue 24)."""
import json
import os
import subprocess

from conftest import ROOT, node_with_sdk, on_fake, request, script, upstream_requests

WARDEN = on_fake()

CODEX = ROOT / "tests" / "node" / "node_modules" / ".bin" / "codex"


def codex(w, tmp_path, prompt, *flags):
    node_with_sdk("@openai/codex")  # fails with how to install it when it is missing
    home = tmp_path / "codex-home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(
        'model = "m"\nmodel_provider = "warden"\n\n[model_providers.warden]\nname = "warden"\n'
        f'base_url = "{w.base}/v1"\nwire_api = "responses"\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CODEX_"))}
    env.update({"CODEX_HOME": str(home), "OPENAI_API_KEY": "unused"})
    p = subprocess.run([str(CODEX), "exec", "--skip-git-repo-check", *flags, prompt], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def test_a_text_turn(warden, fake_upstream, tmp_path):
    prompt = "Say hello in one short sentence."
    name = script(fake_upstream, [{"content": "Hello from warden."}])
    request(fake_upstream.port, "POST", "/script", {"name": name, "trigger": prompt,
                                                     "turns": [{"content": "Hello from warden."}]})
    rc, out, err = codex(warden, tmp_path, prompt)
    assert rc == 0, err[-2000:]
    assert "Hello from warden." in out, out


def test_a_tool_turn(warden, fake_upstream, tmp_path):
    prompt = "Run echo hi-from-codex and tell me what it printed."
    turns = [{"content": "", "tool_calls": [{"name": "exec_command", "arguments": json.dumps({"cmd": "echo hi-from-codex"}),
                                             "id": "call_cx1"}]},
             {"content": "It printed hi-from-codex."}]
    name = script(fake_upstream, turns)
    request(fake_upstream.port, "POST", "/script", {"name": name, "trigger": prompt, "turns": turns})
    # Codex's own Linux sandbox cannot start in this container ("bwrap: execvp codex-linux-sandbox:
    # No such file or directory", with or without warden), so its command runs unsandboxed here;
    # everything on warden's side is Codex's default configuration.
    rc, out, err = codex(warden, tmp_path, prompt, "--sandbox", "danger-full-access")
    assert rc == 0, err[-2000:]
    assert "It printed hi-from-codex." in out, out
    _, _, body = request(fake_upstream.port, "GET", "/stats")
    sent = [r for r in json.loads(body)["requests"]
            if any(m.get("content") == prompt for m in r.get("messages", []))]
    assert len(sent) == 2, len(sent)
    names = [t["function"]["name"] for t in sent[0]["tools"]]
    assert "exec_command" in names and "multi_agent_v1__spawn_agent" in names, names  # the namespace, flat
    assert not any(t.get("type") != "function" for t in sent[0]["tools"])          # web_search left out
    tool_msg = sent[1]["messages"][-1]
    assert tool_msg["role"] == "tool" and tool_msg["tool_call_id"] == "call_cx1"
    assert "hi-from-codex" in tool_msg["content"], tool_msg  # Codex ran the command and sent its output
