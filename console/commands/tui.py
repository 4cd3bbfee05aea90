"""Opening the Textual console (the default when no subcommand is given)."""

from __future__ import annotations

import argparse
from pathlib import Path

from console import config
from console.cli import config_path


def open_console(args: argparse.Namespace) -> int:
    cfg = config.load(config_path(args))
    return _run(cfg, read_only=args.read_only)


def run_console(path: Path, read_only: bool = False) -> int:
    return _run(config.load(path), read_only=read_only)


def _run(cfg: config.Config, read_only: bool) -> int:
    from console.tui.app import make_app

    app = make_app(cfg, read_only=read_only)
    app.run()
    return app.return_code or 0
