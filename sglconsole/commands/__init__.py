"""CLI subcommands; importing this package registers them in commands.registry."""

from sglconsole.commands import (  # noqa: F401
    actions,
    basic,
    bench,
    capture,
    demo,
    drift,
    exporter,
    replay,
    schema,
    status,
    tui,
)
