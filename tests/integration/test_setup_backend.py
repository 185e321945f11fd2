"""scripts/setup's choice of accelerator for llama-server (issue 27 §7), with stand-ins for the
GPU tools on PATH: CUDA when nvcc and an NVIDIA device are there, Vulkan when glslc, the Vulkan
headers and a non-CPU Vulkan device are, else the CPU build under the cache key it always had;
WARDEN_LLAMA_BACKEND overrides. `scripts/setup backend` builds nothing."""
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
SETUP = ROOT / "scripts" / "setup"
VERSION = "3.21.1"


def tool(d, name, body):
    p = d / name
    p.write_text("#!/bin/sh\n" + body + "\n")
    p.chmod(0o755)


def backend(tmp_path, tools, env_extra=None):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name, body in tools.items():
        tool(bin_dir, name, body)
    # only the stand-ins and the basics: no real nvcc, glslc, vulkaninfo or pkg-config leak in
    basics = tmp_path / "basics"
    basics.mkdir(exist_ok=True)
    for b in ("grep", "sed", "cat", "head", "dirname", "id", "nproc", "printf", "env", "paste", "mkdir"):
        real = subprocess.run(["sh", "-c", f"command -v {b}"], capture_output=True, text=True).stdout.strip()
        if real.startswith("/") and not (basics / b).is_symlink():
            (basics / b).symlink_to(real)
    env = {"PATH": f"{bin_dir}:{basics}", "WARDEN_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)}
    env.update(env_extra or {})
    r = subprocess.run(["/bin/bash", str(SETUP), "backend"], capture_output=True, text=True, env=env, timeout=60)
    return r


NVIDIA = {"nvcc": "echo 'Cuda compilation tools, release 12.4'", "nvidia-smi": "echo 'GPU 0: NVIDIA H200 (UUID: x)'"}
VULKAN_GPU = {"glslc": "true", "pkg-config": "[ \"$2\" = vulkan ]",
              "vulkaninfo": "echo '\tdeviceType = PHYSICAL_DEVICE_TYPE_DISCRETE_GPU'"}
VULKAN_LLVMPIPE = {"glslc": "true", "pkg-config": "[ \"$2\" = vulkan ]",
                   "vulkaninfo": "echo '\tdeviceType = PHYSICAL_DEVICE_TYPE_CPU'"}


@pytest.mark.parametrize("tools,want", [
    ({}, "cpu"),
    (NVIDIA, "cuda"),
    ({"nvcc": "true", "nvidia-smi": "exit 9"}, "cpu"),  # a toolkit without a device
    ({"nvidia-smi": "true"}, "cpu"),                    # a device without the toolkit
    (VULKAN_GPU, "vulkan"),
    (VULKAN_LLVMPIPE, "cpu"),                           # a CPU renderer is not a GPU
    ({**VULKAN_GPU, "pkg-config": "exit 1"}, "cpu"),    # no Vulkan headers
    ({**NVIDIA, **VULKAN_GPU}, "cuda"),
])
def test_auto_picks_what_the_machine_has(tmp_path, tools, want):
    r = backend(tmp_path, tools)
    assert r.returncode == 0, r.stderr
    got, dest = r.stdout.split()
    assert got == want
    home = tmp_path / "home" / "llama.cpp"
    assert dest == str(home / (VERSION if want == "cpu" else f"{VERSION}-{want}"))
    assert not (tmp_path / "home" / "llama.cpp").exists(), "the backend step built or made something"


def test_the_environment_overrides_and_a_bad_value_is_refused(tmp_path):
    r = backend(tmp_path, NVIDIA, {"WARDEN_LLAMA_BACKEND": "cpu"})
    assert r.returncode == 0 and r.stdout.split()[0] == "cpu", r.stderr
    r = backend(tmp_path, {}, {"WARDEN_LLAMA_BACKEND": "vulkan"})
    assert r.returncode == 0 and r.stdout.split()[0] == "vulkan"
    r = backend(tmp_path, {}, {"WARDEN_LLAMA_BACKEND": "tpu"})
    assert r.returncode != 0
    assert "WARDEN_LLAMA_BACKEND=tpu" in r.stderr and "fix:" in r.stderr


def test_cuda_asked_for_without_nvcc_is_refused_clearly(tmp_path):
    # found on a lent GPU machine: the flags then named an empty CUDA compiler
    r = backend(tmp_path, {"nvidia-smi": "true"}, {"WARDEN_LLAMA_BACKEND": "cuda"})
    assert r.returncode != 0, r.stdout
    assert "nvcc" in r.stderr and "fix:" in r.stderr, r.stderr
    r = backend(tmp_path, NVIDIA, {"WARDEN_LLAMA_BACKEND": "cuda"})
    assert r.returncode == 0 and r.stdout.split()[0] == "cuda", r.stderr
