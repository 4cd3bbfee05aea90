"""demo: start the simulated fleet and open the console on it."""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import tempfile
import threading
from pathlib import Path

from rich.markup import escape

from sglconsole.commands.registry import command, stderr, stdout


@command("demo", "start a simulated 4-host GPU fleet (no GPU needed) and open the console on it")
def _demo(parser: argparse.ArgumentParser):
    parser.add_argument(
        "--no-ui",
        action="store_true",
        help="keep the fleet up and print its hosts.yaml path (Ctrl-C stops it)",
    )
    parser.add_argument(
        "--dir", type=Path, help="where the simulated hosts live (default: a new temporary folder)"
    )
    parser.add_argument(
        "--startup",
        type=float,
        default=3.0,
        help="seconds a simulated server takes to start (default 3)",
    )
    parser.add_argument(
        "--ssh",
        choices=("asyncssh", "sshd", "auto"),
        default="asyncssh",
        help="SSH server of the simulated hosts (sshd needs root)",
    )

    def handle(args: argparse.Namespace) -> int:
        from sglconsole.sim.fleet.scenarios import demo_fleet_hosts, demo_profiles
        from sglconsole.sim.fleet.start import SimFleet

        problem = ssh_problem(args.ssh)
        if problem:
            stderr().print(f"[red]error:[/red] {escape(problem)}")
            return 2
        workdir = args.dir or Path(tempfile.mkdtemp(prefix="sglconsole-demo-"))
        hosts, no_containers = demo_fleet_hosts(args.startup)
        fleet = SimFleet(workdir, hosts, demo_profiles(), ssh=args.ssh)
        try:
            try:
                path = fleet.start()
            except RuntimeError as exc:  # SimFleet stopped every host it had started
                stderr().print(f"[red]error:[/red] {escape(str(exc))}")
                return 2
            if fleet.warning:
                stderr().print(f"[yellow]note:[/yellow] {escape(fleet.warning)}")
            for note in [no_containers, *fleet.notes]:
                if note:
                    stderr().print(f"[yellow]note:[/yellow] {escape(note)}")
            if args.no_ui:
                return _serve(path)
            from sglconsole.commands.tui import run_console

            return run_console(
                path,
                read_only=getattr(args, "read_only", False),
                theme=getattr(args, "theme", None),
                record=getattr(args, "record", None),
            )
        finally:
            fleet.stop()
            if args.dir is None:
                shutil.rmtree(workdir, ignore_errors=True)

    return handle


def ssh_problem(mode: str) -> str | None:
    """Why `--ssh sshd` cannot work here, in one line with the fix (None: nothing in the way)."""
    if mode != "sshd":
        return None
    if os.geteuid() != 0:
        return (
            "--ssh sshd needs root (OpenSSH's sshd -i runs as root): "
            "run as root, or use --ssh asyncssh"
        )
    if not (shutil.which("sshd") or os.path.exists("/usr/sbin/sshd")):
        return (
            "--ssh sshd needs OpenSSH's server: "
            "apt-get install openssh-server (or use --ssh asyncssh)"
        )
    return None


def _serve(path: Path) -> int:
    out = stdout()
    out.print(str(path), soft_wrap=True)
    out.print(
        "[dim]simulated fleet is up; try: "
        f"sglconsole status -c {escape(str(path))}  (Ctrl-C stops it)[/dim]"
    )
    done = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: done.set())
    while not done.wait(1):
        pass
    return 0
