"""The subcommand registry: each module of this package registers its subcommands with @command,
and the CLI builds its parser from what is registered (so no command module imports the CLI)."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable

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
    return Console(highlight=False)


def stderr() -> Console:
    return Console(stderr=True, highlight=False)


def run_async(coro) -> int:
    return asyncio.run(coro)
