"""Start a process the way an operator leaves one running on a host.

``setsid nohup ARGV... </dev/null >>LOG 2>&1 &`` from a shell that exits at
once: the process gets its own session, no terminal, its output appended to
the log, and is reparented to the host's init, as if started by hand.
"""

from __future__ import annotations

import os
import subprocess

_SHELL = 'log=$1; shift; setsid nohup "$@" </dev/null >>"$log" 2>&1 &'


def start_detached(argv: list[str], *, env: dict[str, str], cwd: str, log: str) -> None:
    os.makedirs(os.path.dirname(log) or ".", exist_ok=True)
    subprocess.run(
        ["/bin/sh", "-c", _SHELL, "sh", log, *argv],
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        check=False,
    )
