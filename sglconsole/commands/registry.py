"""The subcommand registry: each module of this package registers its subcommands with @command,
and the CLI builds its parser from what is registered (so no command module imports the CLI)."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

Handler = Callable[[argparse.Namespace], int]
COMMANDS: dict[str, tuple[Handler, Callable[[argparse.ArgumentParser], None], str]] = {}


def command(name: str, help: str):
    """Register a subcommand: the decorated function adds its arguments and returns the handler."""

    def register(build: Callable[[argparse.ArgumentParser], Handler]) -> Callable:
        COMMANDS[name] = (build, help)  # type: ignore[assignment]
        return build

    return register


def config_path(args: argparse.Namespace) -> str | None:
    return getattr(args, "config", None)


def stdout() -> Console:
    from rich.console import Console  # on output, not before a command's work starts

    return Console(highlight=False, width=_piped_width(sys.stdout))


def stderr() -> Console:
    from rich.console import Console

    return Console(stderr=True, highlight=False, width=_piped_width(sys.stderr))


def _piped_width(stream) -> int | None:
    """Into a pipe or file, tables keep their natural width (rich would cut them to 80 columns,
    wrapping flag names mid-word); COLUMNS still decides when set. A terminal: its own width."""
    try:
        if stream.isatty():
            return None
    except (AttributeError, ValueError):
        return None
    return None if os.environ.get("COLUMNS") else 200


def run_async(coro) -> int:
    return asyncio.run(coro)
