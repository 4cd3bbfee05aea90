"""Where the target SGLang lives on the host: an interpreter the operator names (`--python`), or
a new virtual environment beside the one the running server uses, made and filled with the host's
own tools (`python -m venv`, then that venv's pip) so the running server's environment is never
touched. Remote commands are argv lists."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass


@dataclass(frozen=True)
class Install:
    python: str
    """The interpreter the upgraded server runs with."""
    steps: tuple[tuple[str, ...], ...]
    """The host commands that make it (none for an existing `--python`)."""
    venv: str | None = None


def venv_beside(python: str, version: str) -> str:
    """`/opt/env/bin/python3` -> `/opt/env-sglang-0.5.11`: beside the current one, never in it."""
    folder = posixpath.dirname(posixpath.dirname(python)) or "/"
    return f"{folder.rstrip('/')}-sglang-{version}"


def plan_install(current_python: str, version: str, python: str | None = None) -> Install:
    if python:
        return Install(python, ())
    venv = venv_beside(current_python, version)
    new_python = posixpath.join(venv, "bin", "python")
    return Install(
        new_python,
        (
            (current_python, "-m", "venv", venv),
            (new_python, "-m", "pip", "install", f"sglang=={version}"),
        ),
        venv,
    )
