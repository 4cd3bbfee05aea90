"""CLI subcommands; importing this package registers them with console.cli."""

from console.commands import actions, basic, bench, capture, demo, drift, replay, status, tui  # noqa: F401
