"""The tests' CLI runs (tests/cli.py) fork a process that has imported the CLI: each must be what
`python -m sglconsole` in a fresh interpreter is — output, exit status, stdin, environment."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

from tests.cli import cli


def _fresh(*args: str, stdin: str | None = None, env: dict | None = None):
    return subprocess.run(
        [sys.executable, "-m", "sglconsole", *args],
        capture_output=True,
        text=True,
        input=stdin,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
        timeout=60,
    )


@pytest.mark.parametrize(
    "args",
    [("--help",), ("status", "-c", "/nonexistent/hosts.yaml"), ("no-such-command",)],
)
def test_a_forked_run_says_and_exits_as_a_fresh_interpreter(args):
    forked, fresh = cli(*args), _fresh(*args)
    assert (forked.returncode, forked.stdout, forked.stderr) == (
        fresh.returncode,
        fresh.stdout,
        fresh.stderr,
    )


def test_a_forked_run_reads_its_stdin_and_its_own_environment(tmp_path):
    line = (
        "[2026-12-04 15:09:53] Decode batch, #running-req: 10, #token: 1024, token usage: 0.00, "
        "gen throughput (token/s): 2.06, #queue-req: 0"
    )
    forked = cli("parse-log", "-", "--jsonl", stdin=f"noise\n{line}\n")
    assert forked.returncode == 0 and '"running_req": 10' in forked.stdout, forked
    # a config named only by the environment of this one run
    missing = tmp_path / "elsewhere.yaml"
    forked = cli("status", env={"SGLCONSOLE_CONFIG": str(missing)})
    fresh = _fresh("status", env={"SGLCONSOLE_CONFIG": str(missing)})
    assert forked.returncode == fresh.returncode != 0
    assert forked.stderr == fresh.stderr and str(missing) in forked.stderr, forked.stderr


def test_a_run_past_its_timeout_is_killed(tmp_path):
    with socket.socket() as silent:  # takes the connection, never says SSH's banner
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        config = tmp_path / "hosts.yaml"
        port = silent.getsockname()[1]
        config.write_text(f"hosts:\n  h:\n    address: 127.0.0.1\n    port: {port}\n")
        with pytest.raises(subprocess.TimeoutExpired):
            cli("status", "-c", str(config), timeout=2)
