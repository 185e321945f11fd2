"""Vercel's AI SDK (`generateObject` through `@ai-sdk/anthropic`) on the real default model:
runs tests/node/ai_sdk_real.test.mjs with node's test runner against warden (issue 24: Anthropic's
`output_config.format` is a constraint, not ignored)."""
import os
import subprocess

from conftest import ROOT, node_with_sdk, on_model

WARDEN = on_model()
NODE_DIR = ROOT / "tests" / "node"


def test_generate_object(warden):
    node = node_with_sdk("@ai-sdk/anthropic")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update({"WARDEN_BASE": warden.base, "NO_COLOR": "1"})
    p = subprocess.run([node, "--test", "--test-reporter=spec", str(NODE_DIR / "ai_sdk_real.test.mjs")], cwd=NODE_DIR,
                       env=env, capture_output=True, text=True, errors="replace", timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr + "\n--- warden log ---\n" + "\n".join(warden.log().splitlines()[-20:])
