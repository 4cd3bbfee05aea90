"""CLI subcommands; importing this package registers them with console.cli."""

from console.commands import actions, basic, demo, drift, status, tui  # noqa: F401
