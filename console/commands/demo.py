"""demo: start the simulated fleet and open the console on it."""

from __future__ import annotations

import argparse
import shutil
import signal
import tempfile
import threading
from pathlib import Path

from rich.markup import escape

from console.cli import command, stderr, stdout


@command("demo", "start a simulated 3-host GPU fleet (no GPU needed) and open the console on it")
def _demo(parser: argparse.ArgumentParser):
    parser.add_argument("--no-ui", action="store_true", help="keep the fleet up and print its hosts.yaml path (Ctrl-C stops it)")
    parser.add_argument("--dir", type=Path, help="where the simulated hosts live (default: a new temporary folder)")
    parser.add_argument("--startup", type=float, default=3.0, help="seconds a simulated server takes to start (default 3)")
    parser.add_argument("--ssh", choices=("asyncssh", "sshd", "auto"), default="asyncssh",
                        help="SSH server of the simulated hosts (sshd needs root)")

    def handle(args: argparse.Namespace) -> int:
        from console.sim.fleet import SimFleet
        from console.sim.scenarios import demo_hosts, demo_profiles

        workdir = args.dir or Path(tempfile.mkdtemp(prefix="sglconsole-demo-"))
        fleet = SimFleet(workdir, demo_hosts(args.startup), demo_profiles(), ssh=args.ssh)
        try:
            path = fleet.start()
            if fleet.warning:
                stderr().print(f"[yellow]note:[/yellow] {escape(fleet.warning)}")
            if args.no_ui:
                return _serve(path)
            from console.commands.tui import run_console

            return run_console(path, read_only=getattr(args, "read_only", False), theme=getattr(args, "theme", None),
                               record=getattr(args, "record", None))
        finally:
            fleet.stop()
            if args.dir is None:
                shutil.rmtree(workdir, ignore_errors=True)

    return handle


def _serve(path: Path) -> int:
    out = stdout()
    out.print(str(path), soft_wrap=True)
    out.print(f"[dim]simulated fleet is up; try: sglconsole status -c {escape(str(path))}  (Ctrl-C stops it)[/dim]")
    done = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: done.set())
    while not done.wait(1):
        pass
    return 0
