"""The package as users install it (pip, pipx, uv tool install): a wheel built from this tree,
installed apart from the source, carries its data (flag tables, styles, simulator tables) and
runs."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_the_built_wheel_carries_its_data_and_runs(tmp_path):
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q",
         "-w", str(tmp_path / "dist"), str(REPO)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert build.returncode == 0, build.stderr[-2000:]
    (wheel,) = (tmp_path / "dist").glob("sglconsole-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "sglconsole/tui/console.tcss" in names
    assert any(n.startswith("sglconsole/data/flags/") and n.endswith(".json") for n in names)
    assert any(n.startswith("sglconsole/sim/versions/") for n in names)
    assert not any(n.startswith("tests/") for n in names)
    target = tmp_path / "site"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target),
         str(wheel)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr[-2000:]
    env = {**os.environ, "PYTHONPATH": str(target)}
    run = subprocess.run(
        [sys.executable, "-c", "import sglconsole, sys; print(sglconsole.__file__)"],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60,
    )  # fmt: skip
    assert run.stdout.startswith(str(target)), run.stdout + run.stderr  # not this source tree
    argdiff = subprocess.run(
        [sys.executable, "-m", "sglconsole", "argdiff", "--sglang-version", "0.5.23",
         "--model-path m --tp-size 2", "--model-path m --tp 2"],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120,
    )  # fmt: skip
    assert argdiff.returncode == 0, argdiff.stdout + argdiff.stderr  # read from the wheel's tables
