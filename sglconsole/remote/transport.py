"""How a remote command is spelled, independent of the SSH library.

Remote commands are always argv lists. They become one shell-quoted string
only here, after the host's exec_prefix (e.g. ``pct exec 129 --``) has been put
in front; nothing else in sglconsole joins strings into commands.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass


def command_line(argv: Sequence[str], exec_prefix: Sequence[str] = ()) -> str:
    """The string sent over SSH: the login shell splits it back into exactly this argv."""
    full = [*exec_prefix, *argv]
    if not full:
        raise ValueError("empty command")
    return shlex.join(str(arg) for arg in full)


def shell(script: str, *args: str) -> list[str]:
    """argv that runs a fixed sh script; values reach it as "$1", "$2", ... never spliced in."""
    return ["sh", "-c", script, "sh", *args]


@dataclass(frozen=True, slots=True)
class RunResult:
    argv: tuple[str, ...]
    exit_status: int | None
    """None when the command was killed by a signal or timed out."""
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.exit_status == 0
