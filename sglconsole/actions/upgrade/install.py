"""Where the target SGLang lives on the host: an interpreter the operator names (`--python`), or
a new virtual environment beside the one the running server uses, made and filled with the host's
own tools (`python -m venv`, then that venv's pip) so the running server's environment is never
touched. Remote commands are argv lists."""

from __future__ import annotations

import posixpath
import shlex
from dataclasses import dataclass

from sglconsole.actions.base import ActionContext, StageFailed
from sglconsole.remote.parser_cache import installed_version

INSTALL_TIMEOUT_S = 1800.0  # a real `pip install sglang` downloads torch: minutes, not seconds


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


async def install_release(ctx: ActionContext, host: str, install: Install, version: str) -> None:
    """Run the steps; then the interpreter must import exactly `version`."""
    ssh = ctx.ssh[host]
    async with ctx.stage(
        "install", f"SGLang {version} in {install.venv or install.python}"
    ) as stage:
        for argv in install.steps:
            if ctx.dry_run:
                ctx.would_run(ssh, list(argv))
                continue
            done = await ssh.run(list(argv), timeout=INSTALL_TIMEOUT_S)
            if done.exit_status != 0:
                raise StageFailed(
                    f"`{shlex.join(argv)}` exited {done.exit_status}",
                    evidence=(done.stdout + done.stderr).splitlines()[-20:],
                )
        if ctx.dry_run:
            return
        found = await installed_version(ssh, install.python)
        if found != version:
            raise StageFailed(f"{install.python} has SGLang {found or 'none'}, not {version}")
        stage.detail = f"{install.python}: SGLang {found}"
