"""Run the console's CLI as a user would: `python -m sglconsole ...` in a subprocess, wide
enough that tables never wrap (the tests read words out of them)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys


def cli(
    *args: str,
    timeout: float = 120,
    env: dict[str, str] | None = None,
    stdin: str | None = None,
    columns: int = 200,
    base_env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess:
    """`env` is added to `base_env` (default: this process's environment)."""
    environ = dict(os.environ if base_env is None else base_env)
    return subprocess.run(
        [sys.executable, "-m", "sglconsole", *args],
        capture_output=True,
        text=True,
        input=stdin,
        timeout=timeout,
        env={**environ, "COLUMNS": str(columns), **(env or {})},
    )


def ctrl_c_default() -> None:
    """preexec_fn for a child the test will Ctrl-C: a process started with SIGINT ignored (a
    background job of a non-interactive shell, as CI may run us) passes that on, and a Python
    that starts with SIGINT ignored keeps ignoring it; a terminal's Ctrl-C is what we test."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
