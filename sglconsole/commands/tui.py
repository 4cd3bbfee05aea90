"""Opening the Textual console (the default when no subcommand is given)."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from sglconsole import config
from sglconsole.commands.registry import config_path


def open_console(args: argparse.Namespace) -> int:
    cfg = config.load(config_path(args))
    return _run(
        cfg,
        read_only=args.read_only,
        theme=getattr(args, "theme", None),
        record=getattr(args, "record", None),
    )


def run_console(
    path: Path, read_only: bool = False, theme: str | None = None, record: str | None = None
) -> int:
    return _run(config.load(path), read_only=read_only, theme=theme, record=record)


def _run(
    cfg: config.Config, read_only: bool, theme: str | None = None, record: str | None = None
) -> int:
    from sglconsole.tui.app import make_app

    return run_app(make_app(cfg, read_only=read_only, theme=theme, record=record))


def run_app(app) -> int:
    from textual.logging import TextualHandler

    # log records must not be printed over the screen: send them to Textual's log (textual console)
    logging.basicConfig(level=logging.WARNING, handlers=[TextualHandler()], force=True)
    app.run()
    return app.return_code or 0
