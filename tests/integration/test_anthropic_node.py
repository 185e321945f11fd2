"""warden's Anthropic Messages surface driven by the official Node SDK (@anthropic-ai/sdk, pinned
in tests/node/package.json): starts the scripted fake upstream and two wardens in front of it (one
with --api-key, for the 401 case), then runs tests/node/anthropic_sdk.test.mjs with node's own
test runner. The SDK comes from `scripts/setup nodedeps` (tests/node/node_modules links to the
cache); without it this test fails and says so."""
import os
import subprocess

import pytest

from conftest import ROOT, node_with_sdk, on_fake, warden_on_fake

NODE_DIR = ROOT / "tests" / "node"
TEST_FILE = NODE_DIR / "anthropic_sdk.test.mjs"
AUTH_KEY = "anthropic-node-test-key"


WARDEN = on_fake("--sse-ping-interval", "300")  # the module's `warden` fixture (conftest.py)


@pytest.fixture(scope="module")
def keyed_warden(fake_upstream, tmp_path_factory):
    w = warden_on_fake(fake_upstream, "--api-key", AUTH_KEY, home=tmp_path_factory.mktemp("warden-home-keyed"))
    yield w
    w.stop()


def test_official_node_sdk(warden, keyed_warden, fake_upstream):
    node = node_with_sdk("@anthropic-ai/sdk")
    env = dict(os.environ)
    env.update({
        "WARDEN_BASE": warden.base,
        "WARDEN_AUTH_BASE": keyed_warden.base,
        "WARDEN_AUTH_KEY": AUTH_KEY,
        "FAKE_BASE": f"http://127.0.0.1:{fake_upstream.port}",
        # ESM imports ignore NODE_PATH (node finds the SDK through tests/node/node_modules); it is
        # set for anything the test runner loads as CommonJS
        "NODE_PATH": str(NODE_DIR / "node_modules"),
        "NO_COLOR": "1",
    })
    for k in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_LOG"):
        env.pop(k, None)
    try:
        p = subprocess.run([node, "--test", "--test-reporter=spec", str(TEST_FILE)], cwd=NODE_DIR, env=env,
                           capture_output=True, text=True, errors="replace", timeout=300)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"node --test did not finish in 300 s:\n{e.stdout or ''}\n{e.stderr or ''}")
    out = p.stdout + ("\n--- stderr ---\n" + p.stderr if p.stderr.strip() else "")
    print(out)
    alive = {"warden": warden.p.poll(), "warden --api-key": keyed_warden.p.poll()}
    assert all(rc is None for rc in alive.values()), \
        f"warden exited during the node tests (exit status {alive}; -4 is SIGILL, -11 SIGSEGV):\n{out}\n" \
        f"--- warden log (tail) ---\n" + "\n".join(warden.log().splitlines()[-30:])
    assert p.returncode == 0, f"node --test {TEST_FILE.name} exited {p.returncode}:\n{out}\n" \
                              f"--- warden log (tail) ---\n" + "\n".join(warden.log().splitlines()[-30:])
