"""A simulated host installs SGLang releases offline with its own tools: `python -m venv NEW`
then `NEW/bin/python -m pip install sglang==X` (pip reads the host user's config: the host's own
wheel index) gives a venv whose sglang is X and whose server is X's, beside the untouched env."""

from __future__ import annotations

import os
import subprocess

from sglconsole.sim.host.root import create_host


def test_pip_install_in_a_new_venv_gives_that_release_and_leaves_the_old_env_alone(tmp_path):
    root = create_host(tmp_path / "h", sglang_version="0.5.9")
    env = {"PATH": os.environ["PATH"], "HOME": str(root)}  # as an SSH session on the host
    old = root / "env" / "bin" / "python3"
    new = tmp_path / "env-sglang-0.5.11"
    subprocess.run([str(old), "-m", "venv", str(new)], env=env, check=True, timeout=120)
    installed = subprocess.run(
        [str(new / "bin" / "python"), "-m", "pip", "install", "sglang==0.5.11"],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert "Successfully installed sglang-0.5.11" in installed.stdout
    asked = "import sglang; print(sglang.__version__)"
    versions = [
        subprocess.run([python, "-c", asked], env=env, capture_output=True, text=True).stdout
        for python in (str(new / "bin" / "python"), str(old))
    ]
    assert versions == ["0.5.11\n", "0.5.9\n"]
    refused = subprocess.run(
        [str(new / "bin" / "python"), "-m", "pip", "install", "sglang==0.4.0"],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert refused.returncode != 0  # a release the index does not have: pip says so
