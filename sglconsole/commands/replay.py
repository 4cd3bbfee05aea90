"""replay: open the console on a recording made with --record (read-only)."""

from __future__ import annotations

import argparse
from pathlib import Path

from sglconsole.commands.registry import command


@command("replay", "open the console on a recording made with --record FILE (read-only)")
def _replay(parser: argparse.ArgumentParser):
    parser.add_argument(
        "file", type=Path, metavar="FILE", help="a JSONL recording written by --record"
    )
    parser.add_argument(
        "--speed", type=float, default=1.0, help="playback speed (default 1 = as recorded)"
    )
    parser.add_argument(
        "--end", action="store_true", help="open on the last recorded state instead of playing"
    )

    def handle(args: argparse.Namespace) -> int:
        from sglconsole.commands.tui import run_app
        from sglconsole.tui.app import make_app
        from sglconsole.tui.replay import Replay, load

        replay = Replay(load(args.file), speed=args.speed, to_end=args.end)
        return run_app(make_app(None, replay=replay, theme=getattr(args, "theme", None)))

    return handle
