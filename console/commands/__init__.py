"""CLI subcommands; importing this package registers them with console.cli."""

from console.commands import basic, tui  # noqa: F401
