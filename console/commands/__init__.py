"""CLI subcommands; importing this package registers them with console.cli."""

from console.commands import actions, basic, capture, demo, drift, replay, status, tui  # noqa: F401
