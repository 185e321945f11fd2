"""warden's OpenAI surfaces (Responses with retrieve/input_items/delete and approvals,
/v1/completions, /v1/embeddings) driven by the official Node SDK (`openai`, pinned in
tests/node/package.json): starts the scripted fake upstream and a warden in front of it, then runs
tests/node/openai_sdk.test.mjs with node's own test runner. The SDK comes from
`scripts/setup nodedeps` (tests/node/node_modules links to the cache); without it this test fails
and says so."""
import os
import subprocess

import pytest

from conftest import ROOT, node_with_sdk, on_fake

NODE_DIR = ROOT / "tests" / "node"
TEST_FILE = NODE_DIR / "openai_sdk.test.mjs"


WARDEN = on_fake("--sse-ping-interval", "600000")  # the module's `warden` fixture (conftest.py)


def test_official_openai_node_sdk(warden, fake_upstream):
    node = node_with_sdk("openai")
    env = dict(os.environ)
    env.update({
        "WARDEN_BASE": warden.base,
        "FAKE_BASE": f"http://127.0.0.1:{fake_upstream.port}",
        # ESM imports ignore NODE_PATH (node finds the SDK through tests/node/node_modules); it is
        # set for anything the test runner loads as CommonJS
        "NODE_PATH": str(NODE_DIR / "node_modules"),
        "NO_COLOR": "1",
    })
    for k in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "OPENAI_LOG"):
        env.pop(k, None)
    try:
        p = subprocess.run([node, "--test", "--test-reporter=spec", str(TEST_FILE)], cwd=NODE_DIR, env=env,
                           capture_output=True, text=True, errors="replace", timeout=300)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"node --test did not finish in 300 s:\n{e.stdout or ''}\n{e.stderr or ''}")
    out = p.stdout + ("\n--- stderr ---\n" + p.stderr if p.stderr.strip() else "")
    print(out)
    rc = warden.p.poll()
    assert rc is None, \
        f"warden exited during the node tests (exit status {rc}; -4 is SIGILL, -11 SIGSEGV):\n{out}\n" \
        f"--- warden log (tail) ---\n" + "\n".join(warden.log().splitlines()[-30:])
    assert p.returncode == 0, f"node --test {TEST_FILE.name} exited {p.returncode}:\n{out}\n" \
                              f"--- warden log (tail) ---\n" + "\n".join(warden.log().splitlines()[-30:])
