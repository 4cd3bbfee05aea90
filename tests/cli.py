"""Run the console's CLI as a user would: `python -m sglconsole ...` in a process of its own,
wide enough that tables never wrap (the tests read words out of them).

Each run is forked from a process that has imported the CLI already (tests/cli_fork.py): the
same code from `python -m` on, without paying its imports again. A run whose environment asks
the interpreter itself for something (PYTHON* variables) starts a fresh interpreter, and so does
every run with SGLCONSOLE_TEST_CLI_FORK=0."""

from __future__ import annotations

import atexit
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


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
    environ = {**environ, "COLUMNS": str(columns), **(env or {})}
    argv = [sys.executable, "-m", "sglconsole", *args]
    if os.environ.get("SGLCONSOLE_TEST_CLI_FORK") == "0" or any(
        name.startswith("PYTHON") and environ.get(name) != os.environ.get(name) for name in environ
    ):
        return subprocess.run(
            argv, capture_output=True, text=True, input=stdin, timeout=timeout, env=environ
        )
    return _FORKS.run(argv, environ, stdin, timeout)


class _Forks:
    """This worker's forking process (tests/cli_fork.py), started at its first run."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.process: subprocess.Popen | None = None
        self.control: socket.socket | None = None

    def _start(self) -> socket.socket:
        if self.process is not None and self.process.poll() is None:
            return self.control
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.cli_fork", str(theirs.fileno())],
            pass_fds=(theirs.fileno(),),
            stdin=subprocess.DEVNULL,
            cwd=ROOT,
        )
        theirs.close()
        self.control = ours
        atexit.register(self._stop, self.process, ours)
        return ours

    @staticmethod
    def _stop(process: subprocess.Popen, control: socket.socket) -> None:
        control.close()  # it returns when its worker has gone
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()

    def run(
        self, argv: list[str], environ: dict[str, str], stdin: str | None, timeout: float
    ) -> subprocess.CompletedProcess:
        with tempfile.TemporaryDirectory(prefix="sglcli-") as folder:
            paths = {name: os.path.join(folder, name) for name in ("stdin", "stdout", "stderr")}
            Path(paths["stdin"]).write_text(stdin or "")
            Path(paths["stdout"]).touch()
            Path(paths["stderr"]).touch()
            request = {"args": argv[3:], "env": environ, "cwd": os.getcwd(), **paths}
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            with ours:
                with self.lock:
                    control = self._start()
                    socket.send_fds(control, [json.dumps(request).encode()], [theirs.fileno()])
                theirs.close()
                pid, code = _replies(ours, time.monotonic() + timeout)
                if code is None and pid is not None:  # past its timeout: where it hangs, then
                    os.kill(pid, signal.SIGUSR1)  # killed, as subprocess.run does
                    time.sleep(2)
                    os.kill(pid, signal.SIGKILL)
                    _replies(ours, time.monotonic() + 10)
            output = Path(paths["stdout"]).read_text(errors="replace")
            errors = Path(paths["stderr"]).read_text(errors="replace")
        if code is None:
            print(errors[-20000:], file=sys.stderr)  # shown with the failing test
            raise subprocess.TimeoutExpired(argv, timeout, output, errors)
        return subprocess.CompletedProcess(argv, code, output, errors)


def _replies(reply: socket.socket, deadline: float) -> tuple[int | None, int | None]:
    """The run's pid and exit status, as its forking process says them (None: not by then)."""
    pid = code = None
    pending = b""
    while code is None:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        reply.settimeout(left)
        try:
            chunk = reply.recv(4096)
        except TimeoutError:
            break
        if not chunk:
            raise RuntimeError("the CLI's forking process went away (tests/cli_fork.py)")
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            message = json.loads(line)
            pid = message.get("pid", pid)
            code = message.get("exit", code)
    return pid, code


_FORKS = _Forks()


def ctrl_c_default() -> None:
    """preexec_fn for a child the test will Ctrl-C: a process started with SIGINT ignored (a
    background job of a non-interactive shell, as CI may run us) passes that on, and a Python
    that starts with SIGINT ignored keeps ignoring it; a terminal's Ctrl-C is what we test."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
