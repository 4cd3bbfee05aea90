"""CLI subcommands; importing this package registers them with sglconsole.cli."""

from sglconsole.commands import actions, basic, bench, capture, demo, drift, replay, status, tui  # noqa: F401
