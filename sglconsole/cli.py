"""The `sglconsole` command line: subcommands, each a thin call into the library.

Exit codes: 0 success, 1 "something is not right" (a status, a drift), 2 an
error the user must fix (bad config, unreachable host, bad arguments), 130
interrupted, 141 stdout was closed by its reader (`... --json | head`: quietly).
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import sys

from sglconsole import __version__
from sglconsole.commands.registry import COMMANDS, Handler, stderr
from sglconsole.errors import ConsoleError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sglconsole",
        description="A terminal operations console for SGLang GPU fleets. "
        "Without a subcommand, opens the console on the fleet in hosts.yaml.",
    )
    parser.add_argument("--version", action="version", version=f"sglconsole {__version__}")
    _add_config(parser)
    parser.add_argument(
        "--read-only", action="store_true", help="hide every action that changes a host"
    )
    parser.add_argument(
        "--dry-run",
        dest="global_dry_run",
        action="store_true",
        help=(
            "for actions: print the remote commands that would change a host "
            "instead of running them"
        ),
    )
    parser.add_argument(
        "--theme",
        metavar="NAME",
        help="console colours: dark (default), light, ansi, or a Textual theme",
    )
    parser.add_argument(
        "--record", metavar="FILE", help="write the fleet's state changes as JSONL (see: replay)"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (build, help_text) in COMMANDS.items():
        child = sub.add_parser(name, help=help_text, description=help_text)
        _add_config(child)
        child.set_defaults(handler=build(child))
    return parser


def _add_config(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-c",
        "--config",
        metavar="FILE",
        default=argparse.SUPPRESS,
        help="hosts.yaml to use (default: $SGLCONSOLE_CONFIG, ./hosts.yaml,"
        " ~/.config/sglconsole/hosts.yaml, $XDG_CONFIG_HOME/sglconsole/hosts.yaml)",
    )


def main(argv: list[str] | None = None) -> int:
    if argv is None:  # the program itself: its imports build objects that live until exit, and
        gc.disable()  # collecting while they are built only walks them again (~30 ms of a status)
    code = _main(argv)
    if argv is None:  # the program itself, about to exit: nothing it built needs collecting then
        gc.freeze()  # (the interpreter's exit would walk every object: ~0.1 s of a `status`)
    return code


def _main(argv: list[str] | None) -> int:
    # warnings from the library (e.g. a host with known_hosts: none) reach the operator on every run
    logging.basicConfig(level=logging.WARNING, format="warning: %(message)s", stream=sys.stderr)
    _load_commands(sys.argv[1:] if argv is None else argv)
    parser = _parser()
    if argv is None and "_ARGCOMPLETE" in os.environ:  # the shell asks for completions
        import argcomplete

        argcomplete.autocomplete(parser)  # answers and exits
    args = parser.parse_args(argv)
    if argv is None:  # what was imported lives until exit: out of the collector's way, then on
        gc.freeze()
        gc.enable()
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        from sglconsole.commands.tui import open_console

        handler = open_console
    try:
        code = handler(args)
        sys.stdout.flush()  # here, not at exit: a closed pipe is met where it can be handled
        return code
    except BrokenPipeError:
        return _stdout_closed()
    except ConsoleError as exc:
        for line in str(exc).splitlines():
            stderr().print(f"[red]error:[/red] {_escape(line)}")
        return 2
    except KeyboardInterrupt:
        stderr().print("[yellow]interrupted[/yellow]")
        return 130


def _stdout_closed() -> int:
    """stdout's reader went away (`sglconsole probe --json | head`): stop quietly, like a
    process killed by SIGPIPE (exit 141), and let nothing write to the closed pipe again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return 128 + 13


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


def _load_commands(argv: list[str]) -> None:
    # each module registers its subcommands with @command on import: those the line names
    from sglconsole.commands import load

    load(argv)
