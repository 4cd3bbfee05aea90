"""Opening the Textual console (the default when no subcommand is given)."""

from __future__ import annotations

import argparse

from console import config
from console.cli import config_path, stdout


def open_console(args: argparse.Namespace) -> int:
    cfg = config.load(config_path(args))
    stdout().print(f"{cfg.path}: {len(cfg.hosts)} hosts (the console UI is not built yet)")
    return 0
