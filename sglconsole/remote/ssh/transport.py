"""How a remote command is spelled, independent of the SSH library.

Remote commands are always argv lists. They become one shell-quoted string
only here, after the host's exec_prefix (e.g. ``pct exec 129 --``) has been put
in front; nothing else in sglconsole joins strings into commands.

The string is split by the SSH user's *login shell*, which may be sh, bash,
tcsh or fish, so it is spelled in the subset of quoting all of them read alike:
single quotes, with ``'``, ``\\`` and ``!`` outside them as ``"'"``, ``\\\\`` and
``\\!`` (fish reads ``\\\\`` inside single quotes as one backslash; tcsh expands
``!`` even there). No spelling of a newline survives every shell (tcsh refuses
one inside quotes: "Unmatched '."), so the source of ``python -c CODE`` (the host
helpers, the snippets) travels base64-encoded behind a one-line bootstrap.
"""

from __future__ import annotations

import base64
import os
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

_PYTHON = re.compile(r"python[0-9.]*")
_LOOSE = re.compile(r"[\\!']")
"""Characters some login shell reads differently inside single quotes: spelled outside them."""
_FRAGILE = re.compile(r"[\n\r\\!]")
"""What makes Python source travel base64-encoded (it would reach the program changed or not
at all under some login shell)."""


def command_line(argv: Sequence[str], exec_prefix: Sequence[str] = ()) -> str:
    """The string sent over SSH: any login shell splits it back into exactly this argv (with
    the code of ``python -c`` behind a bootstrap that runs exactly that code)."""
    full = [*exec_prefix, *portable(str(arg) for arg in argv)]
    if not full:
        raise ValueError("empty command")
    return " ".join(quote(str(arg)) for arg in full)


def quote(arg: str) -> str:
    """One argument, quoted for sh, bash, dash, zsh, tcsh and fish alike."""
    if not arg:
        return "''"
    parts = []
    for piece in re.split(r"([\\!'])", arg):
        if not piece:
            continue
        if _LOOSE.fullmatch(piece):
            parts.append('"\'"' if piece == "'" else "\\" + piece)
        else:
            parts.append(shlex.quote(piece))
    return "".join(parts)


def portable(argv: Sequence[str] | object) -> list[str]:
    """argv with the CODE of ``python [OPTIONS] -c CODE`` replaced, when some login shell would
    mangle it, by a one-line bootstrap that decodes and runs it (sys.argv is left as it was:
    ``['-c', ARGS...]``)."""
    out = list(argv)  # type: ignore[call-overload]
    for index, arg in enumerate(out):
        if not _PYTHON.fullmatch(os.path.basename(arg)):
            continue
        position = index + 1
        while (
            position < len(out)
            and out[position].startswith("-")
            and out[position] not in ("-c", "-m", "-")
        ):
            position += 1
        if position + 1 < len(out) and out[position] == "-c" and _FRAGILE.search(out[position + 1]):
            out[position + 1] = bootstrap(out[position + 1])
        break  # what follows the interpreter is its program's business
    return out


def bootstrap(code: str) -> str:
    """One line of Python (3.6 and up) that runs `code` as `python -c code` would."""
    packed = base64.b64encode(code.encode("utf-8")).decode("ascii")
    return f'import base64;exec(compile(base64.b64decode("{packed}"),"<sglconsole -c>","exec"))'


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
