"""CLI subcommands: each module of this package registers its own in commands.registry when it
is imported (`load`)."""

from __future__ import annotations

import importlib
from collections.abc import Iterable

ALL = (
    "actions",
    "basic",
    "bench",
    "capture",
    "demo",
    "drift",
    "exporter",
    "replay",
    "schema",
    "status",
    "tui",
    "upgrade",
)
"""Every module, in the order `sglconsole --help` lists their subcommands."""

MODULES = {
    "diff": "drift",
    "argdiff": "drift",
    "kill": "actions",
    "relaunch": "actions",
    "restore": "actions",
    "rollback": "actions",
    "probe": "actions",
    "router-in": "actions",
    "check": "basic",
    "hosts": "basic",
    "run": "basic",
    "bench": "bench",
    "capture": "capture",
    "demo": "demo",
    "exporter": "exporter",
    "replay": "replay",
    "schema": "schema",
    "status": "status",
    "log-stats": "status",
    "parse-log": "status",
    "upgrade": "upgrade",
}
"""Which module registers each subcommand (tests/test_command_modules.py holds it to the
registry): a command line that names one imports that module alone, so a one-shot `status`
starts connecting ~0.1 s sooner than after importing every action."""


def load(words: Iterable[str] = ()) -> None:
    """Register the subcommands that WORDS (a command line's) name, or, naming none (--help, the
    console, a shell's completion), every one."""
    named = dict.fromkeys(MODULES[word] for word in words if word in MODULES)
    for module in named or ALL:
        importlib.import_module(f"sglconsole.commands.{module}")
