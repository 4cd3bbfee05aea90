"""CLI subcommands; importing this package registers them in commands.registry."""

from sglconsole.commands import actions, basic, bench, capture, demo, drift, replay, status, tui  # noqa: F401
