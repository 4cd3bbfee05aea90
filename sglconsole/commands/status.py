"""status, log-stats, parse-log: read-only views of the fleet and of logs."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import TYPE_CHECKING

from sglconsole import config
from sglconsole.commands.output import print_json
from sglconsole.commands.registry import command, config_path, run_async, stdout
from sglconsole.remote.ssh.connection import SshFleet
from sglconsole.remote.ssh.target import connect_timeout

if TYPE_CHECKING:
    from sglconsole.state.fleet import FleetState
    from sglconsole.state.model import OperatorStop, StopLookup


@command(
    "status", "one table per host: GPUs and servers; exit 0 when every configured server is UP"
)
def _status(parser: argparse.ArgumentParser):
    parser.add_argument(
        "hosts", nargs="*", metavar="HOST", help="only these hosts (default: every host)"
    )
    parser.add_argument("--json", action="store_true", help="print the state as JSON")
    parser.add_argument(
        "--watch",
        action="store_true",
        help="keep the table updating until Ctrl-C (with --json: one JSON object per line"
        " per refresh, JSON Lines)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=None,
        help="seconds to wait for every host (default: connect timeout + 5)",
    )
    parser.add_argument(
        "--drift-timeout",
        type=float,
        default=60.0,
        metavar="S",
        help="seconds to wait for the hosts' SGLang to judge drift (default 60; a real host "
        "imports SGLang and torch for it, ~12 s, once per launch: then it is cached)",
    )

    def handle(args: argparse.Namespace) -> int:
        cfg = config.load(config_path(args))
        if args.hosts:
            cfg = cfg.only(args.hosts)
        slowest = max([connect_timeout(host) for host in cfg.hosts.values()] + [1])
        timeout = args.timeout or slowest + 5
        return run_async(_run(cfg, args.json, args.watch, timeout, args.drift_timeout))

    return handle


def operator_stops() -> StopLookup:
    """The audit log's stops (actions.audit), read at the first lookup: the action modules are
    imported once the hosts answer, not before the connections start."""
    found: list[StopLookup] = []

    def lookup(host: str, port: int) -> OperatorStop | None:
        if not found:
            from sglconsole.actions.audit import AuditStops

            found.append(AuditStops())
        return found[0](host, port)

    return lookup


async def _run(
    cfg: config.Config, as_json: bool, watch: bool, timeout: float, drift_timeout: float
) -> int:
    ssh = SshFleet(cfg.hosts)
    if cfg.model.source is None:  # over SSH: every host (a jump host's tunnel opens with it)
        for host in ssh.hosts.values():
            if not host.host.jump:
                host.connect_soon()
    # the connections are under way before what reads the hosts, and what prints, is imported:
    # a host that never answers is waited for its connect timeout from here, not from later
    await asyncio.sleep(0)
    from rich.markup import escape

    from sglconsole.commands.tables import fleet_view
    from sglconsole.remote.monitor import FleetMonitor, drift_pending
    from sglconsole.state.model import GENERATE_BOUND_S

    # the canary asks only a watching status (remote.feeds.canary): a one-shot shows none
    async with FleetMonitor(cfg, ssh=ssh, stops=operator_stops(), canaries=watch) as monitor:
        await monitor.wait_settled(timeout)
        unjudged = await monitor.wait_drift(
            drift_timeout
        )  # a one-shot status is not UP before that
        await monitor.wait_liveness(GENERATE_BOUND_S + 1)  # nor before its scheduler answered
        for host in monitor.state.hosts:
            monitor.state.publish(host)
        if watch and as_json:  # JSON Lines: one `status --json` object per refresh
            # until Ctrl-C: its cancellation goes through, so the command exits 130 (interrupted)
            while True:
                print(json.dumps(_status_json(monitor.state, unjudged)), flush=True)
                await asyncio.sleep(1)
                for host in monitor.state.hosts:
                    monitor.state.publish(host)
                unjudged = [
                    server.key for server in monitor.state.all_servers() if drift_pending(server)
                ]
        elif watch:
            from rich.live import Live  # only a watching status updates its table in place

            with Live(fleet_view(monitor.state), console=stdout(), refresh_per_second=2) as live:
                while True:  # until Ctrl-C, as above
                    await asyncio.sleep(1)
                    for host in monitor.state.hosts:
                        monitor.state.publish(host)
                    live.update(fleet_view(monitor.state))
        elif as_json:
            print(json.dumps(_status_json(monitor.state, unjudged), indent=2))
        else:
            stdout().print(fleet_view(monitor.state))
            for key in unjudged:
                stdout().print(
                    f"[yellow]drift: not known yet[/yellow] for {escape(key)} "
                    f"(the host's SGLang did not answer within {drift_timeout:g} s)"
                )
        return exit_code(monitor.state)


def _status_json(fleet: FleetState, unjudged: list[str]) -> dict:
    from sglconsole.state.json_view import fleet_json

    return {**fleet_json(fleet), "drift_not_known": unjudged}


def exit_code(fleet: FleetState) -> int:
    from sglconsole.state.statuses import INFO

    configured = [server for server in fleet.all_servers() if server.managed]
    return 0 if configured and all(INFO[server.status].healthy for server in configured) else 1


@command(
    "log-stats", "summarise a local SGLang log: counts, tok/s and accept length percentiles, errors"
)
def _log_stats(parser: argparse.ArgumentParser):
    parser.add_argument("file")
    parser.add_argument("--json", action="store_true")

    def handle(args: argparse.Namespace) -> int:
        from sglconsole.core.log_stats import summarize

        with _open(args.file) as file:
            stats = summarize(file)
        if stats.records == 0:
            print(
                f"{args.file}: not an SGLang log (in {stats.lines} lines, not one that SGLang "
                "writes: no decode, prefill, start-up or error line)",
                file=sys.stderr,
            )
            return 1
        if args.json:
            print_json(stats.to_dict())
        else:
            _print_stats(stats.to_dict())
        return 0

    return handle


def _print_stats(data: dict) -> None:
    from rich.table import Table

    from sglconsole.core.text import safe

    out = stdout()
    runs = data.get("runs") or []
    # a relaunch appends to the same log: each server lifetime is summarised on its own
    parts = runs if len(runs) > 1 else [data]
    if len(runs) > 1:
        out.print(f"{len(runs)} server runs in {data['lines']} lines")
    for number, part in enumerate(parts, 1):
        if len(runs) > 1:
            pid = f", pid {part['pid']}" if part.get("pid") else ""
            out.print(
                f"\n[bold]run {number}[/]: lines {part['first_line']}-{part['last_line']}{pid}"
            )
        counts = ", ".join(f"{kind}: {count}" for kind, count in (part.get("counts") or {}).items())
        out.print(f"lines by kind: {counts}")
        table = Table("metric", "median", "p5", "p95", "n")
        for key in ("gen_throughput", "accept_len"):
            stat = part.get(key) or {}
            table.add_row(
                key,
                *(
                    f"{stat.get(column):.2f}" if stat.get(column) is not None else "-"
                    for column in ("median", "p5", "p95")
                ),
                str(stat.get("n", 0)),
            )
        out.print(table)
        if part.get("time_to_ready_s") is not None:
            out.print(f"time to ready: {part['time_to_ready_s']:.1f} s")
        for error in part.get("errors") or []:
            out.print(safe(f"line {error['line']}: {error['message']}", "red"))


@command(
    "parse-log", "print one JSON record per recognised line of an SGLang log (FILE or - for stdin)"
)
def _parse_log(parser: argparse.ArgumentParser):
    parser.add_argument("file")
    parser.add_argument(
        "--jsonl", action="store_true", help="JSON lines output (the default and only format)"
    )

    def handle(args: argparse.Namespace) -> int:
        from sglconsole.core.sglang_log import iter_records

        with _open(args.file) as file:
            for lineno, record in iter_records(file):
                print(json.dumps({**record.to_dict(), "lineno": lineno}))
        return 0

    return handle


def _open(path: str):
    if path == "-":
        return _Stdin()
    try:
        # lines end at \n only: progress bars write \r, and line numbers must match an editor's
        return open(path, encoding="utf-8", errors="replace", newline="\n")
    except OSError as exc:
        from sglconsole.errors import UsageError

        raise UsageError(f"{path}: {exc.strerror or exc}") from None


class _Stdin:
    def __enter__(self):
        return sys.stdin

    def __exit__(self, *exc):
        return False
