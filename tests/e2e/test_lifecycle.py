"""The llama-server child's lifecycle: start-up line, failure messages, no orphans."""
import os
import pathlib
import signal
import subprocess
import time

from conftest import LLAMA_SERVER, WARDEN_BIN, pid_alive, request, warden_on_model


def wait_gone(pid, timeout=10):
    t0 = time.time()
    while pid_alive(pid):
        if time.time() - t0 > timeout:
            return False
        time.sleep(0.05)
    return True


def test_startup_line_health_and_clean_sigterm():
    w = warden_on_model()
    line = [l for l in w.out if l.startswith("warden: serving")]
    assert line == [f"warden: serving SmolLM2-135M-Instruct.Q4_1 at http://127.0.0.1:{w.port}/v1"]
    assert request(w.port, "GET", "/health")[0] == 200
    pid = w.llama_pid()
    assert pid and pid_alive(pid)
    assert w.stop(signal.SIGTERM) == 0
    assert wait_gone(pid), "llama-server survived warden's SIGTERM"


def test_sigint_and_sigkill_leave_no_orphan():
    w = warden_on_model()
    pid = w.llama_pid()
    assert w.stop(signal.SIGINT) == 0
    assert wait_gone(pid)
    w = warden_on_model()
    pid = w.llama_pid()
    w.p.kill()  # SIGKILL: no handler runs; PR_SET_PDEATHSIG must take the child down
    w.p.wait()
    assert wait_gone(pid), "llama-server orphaned after warden was SIGKILLed"


def test_bad_gguf_fails_with_the_model_name_and_llama_servers_words(tmp_path):
    bad = tmp_path / "broken-model.gguf"
    bad.write_bytes(b"GGUF" + os.urandom(4096))
    # its own home: the shared cache's warden.db may belong to another warden version
    env = {**os.environ, "WARDEN_HOME": str(tmp_path / "home"), "WARDEN_LLAMA_SERVER": str(LLAMA_SERVER)}
    r = subprocess.run([WARDEN_BIN, "serve", "--port", "0", "--model", str(bad)], capture_output=True,
                       text=True, timeout=120, env=env)
    assert r.returncode == 1
    assert "llama-server failed to load model broken-model" in r.stderr
    assert "Last lines of its output" in r.stderr
    assert "  | " in r.stderr  # quoted child output
    assert not r.stdout.startswith("warden: serving")


def test_missing_model_says_what_to_do(tmp_path):
    r = subprocess.run([WARDEN_BIN, "serve", "--port", "0", "--model", str(tmp_path / "nope.gguf")],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 1
    assert "model file not found" in r.stderr and "make setup" in r.stderr


def test_doctor_reports_the_cached_parts():
    r = subprocess.run([WARDEN_BIN, "doctor", "--port", "0"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "[ ok ] llama-server" in r.stdout and "version" in r.stdout
    assert "[ ok ] model" in r.stdout and "GGUF" in r.stdout
    r = subprocess.run([WARDEN_BIN, "doctor", "--model", "/nonexistent.gguf"], capture_output=True, text=True)
    assert r.returncode == 1 and "[FAIL] model" in r.stdout
    assert "[ ok ] hardening" in r.stdout and "[ ok ] exposure" in r.stdout
    r = subprocess.run([WARDEN_BIN, "doctor", "--port", "0", "--host", "0.0.0.0"], capture_output=True, text=True)
    assert r.returncode == 1 and "[FAIL] exposure" in r.stdout and "--api-key" in r.stdout
    r = subprocess.run([WARDEN_BIN, "doctor", "--port", "0", "--host", "0.0.0.0", "--api-key", "k"],
                       capture_output=True, text=True)
    assert "[ ok ] exposure" in r.stdout
