"""status, log-stats, parse-log: read-only views of the fleet and of logs."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time

from rich.live import Live

from sglconsole import config
from sglconsole.commands.registry import command, config_path, run_async, stdout
from sglconsole.commands.tables import fleet_view
from sglconsole.remote.monitor import FleetMonitor
from sglconsole.state.fleet import FleetState, Status


@command("status", "one table per host: GPUs and servers; exit 0 when every configured server is UP")
def _status(parser: argparse.ArgumentParser):
    parser.add_argument("--json", action="store_true", help="print the state as JSON")
    parser.add_argument("--watch", action="store_true", help="keep the table updating until Ctrl-C")
    parser.add_argument("--timeout", type=float, default=None, help="seconds to wait for every host (default: connect timeout + 5)")

    def handle(args: argparse.Namespace) -> int:
        cfg = config.load(config_path(args))
        timeout = args.timeout or max([h.connect_timeout for h in cfg.hosts.values()] + [1]) + 5
        return run_async(_run(cfg, args.json, args.watch, timeout))

    return handle


async def _run(cfg: config.Config, as_json: bool, watch: bool, timeout: float) -> int:
    async with FleetMonitor(cfg) as monitor:
        await monitor.wait_settled(timeout)
        for host in monitor.state.hosts:
            monitor.state.refresh_status(host)
        if watch:
            with Live(fleet_view(monitor.state), console=stdout(), refresh_per_second=2) as live:
                try:
                    while True:
                        await asyncio.sleep(1)
                        for host in monitor.state.hosts:
                            monitor.state.refresh_status(host)
                        live.update(fleet_view(monitor.state))
                except asyncio.CancelledError:
                    pass
        elif as_json:
            print(json.dumps(state_json(monitor.state), indent=2))
        else:
            stdout().print(fleet_view(monitor.state))
        return exit_code(monitor.state)


def exit_code(fleet: FleetState) -> int:
    configured = [s for s in fleet.all_servers() if s.managed]
    return 0 if configured and all(s.status == Status.UP for s in configured) else 1


def state_json(fleet: FleetState) -> dict:
    from sglconsole.core.secrets import mask_argv, mask_env

    now = time.time()
    hosts = {}
    for name, host in fleet.hosts.items():
        servers = []
        for server in sorted(host.servers.values(), key=lambda s: s.port):
            load = server.load()
            process = server.process
            servers.append({
                "port": server.port,
                "profile": server.profile_name,
                "managed": server.managed,
                "status": server.status.value,
                "reason": server.reason,
                "pid": process.main.pid if process else None,
                "argv": mask_argv(list(process.main.argv)) if process else None,
                "env": mask_env(process.main.env or {}) if process else None,
                "gpus": list(process.gpus) if process else None,
                "children": [{"pid": c.pid, "title": c.title, "state": c.state} for c in process.children] if process else [],
                "tok_s": server.tok_s(),
                "accept_len": load.accept_len if load else None,
                "running_req": load.running_req if load else None,
                "queue_req": load.queue_req if load else None,
                "load_source": load.source if load else None,
                "metrics": server.metrics.as_dict() if server.metrics is not None else None,
                "uptime_s": server.uptime(now),
                "version": server.version,
                "health": server.health,
                "log": server.log_path,
            })
        hosts[name] = {
            "reachable": host.reachable,
            "error": host.error,
            "gpu_error": host.gpu_error,
            "gpus": [
                {"index": g.index, "name": g.name, "uuid": g.uuid, "util": g.util_gpu, "mem_used_mib": g.mem_used_mib,
                 "mem_total_mib": g.mem_total_mib, "temperature_c": g.temperature_c, "power_w": g.power_draw_w}
                for g in host.gpus
            ],
            "servers": servers,
            "orphans": [{"pid": p.pid, "ppid": p.ppid, "title": p.title} for p in (host.view.orphans if host.view else ())],
            "unaccounted_gpu_pids": [a.pid for a in (host.view.unaccounted if host.view else ())],
            "notes": list(host.view.notes) if host.view else [],
        }
    return {"hosts": hosts, "worst": fleet.worst().value}


@command("log-stats", "summarise a local SGLang log: counts, tok/s and accept length percentiles, errors")
def _log_stats(parser: argparse.ArgumentParser):
    parser.add_argument("file")
    parser.add_argument("--json", action="store_true")

    def handle(args: argparse.Namespace) -> int:
        from sglconsole.core.log_stats import summarize

        with _open(args.file) as fh:
            stats = summarize(fh)
        if args.json:
            print(json.dumps(stats.to_dict(), indent=2))
        else:
            _print_stats(stats.to_dict())
        return 0

    return handle


def _print_stats(data: dict) -> None:
    from rich.table import Table

    from sglconsole.core.text import safe

    out = stdout()
    counts = ", ".join(f"{k}: {v}" for k, v in (data.get("counts") or {}).items())
    out.print(f"lines by kind: {counts}")
    table = Table("metric", "median", "p5", "p95", "n")
    for key in ("gen_throughput", "accept_len"):
        stat = data.get(key) or {}
        table.add_row(key, *(f"{stat.get(k):.2f}" if stat.get(k) is not None else "-" for k in ("median", "p5", "p95")), str(stat.get("n", 0)))
    out.print(table)
    if data.get("time_to_ready_s") is not None:
        out.print(f"time to ready: {data['time_to_ready_s']:.1f} s")
    for error in data.get("errors") or []:
        out.print(safe(f"line {error.get('lineno')}: {error.get('message')}", "red"))


@command("parse-log", "print one JSON record per recognised line of an SGLang log (FILE or - for stdin)")
def _parse_log(parser: argparse.ArgumentParser):
    parser.add_argument("file")
    parser.add_argument("--jsonl", action="store_true", help="JSON lines output (the default and only format)")

    def handle(args: argparse.Namespace) -> int:
        from sglconsole.core.sglang_log import iter_records

        with _open(args.file) as fh:
            for lineno, record in iter_records(fh):
                print(json.dumps({**record.to_dict(), "lineno": lineno}))
        return 0

    return handle


def _open(path: str):
    if path == "-":
        return _Stdin()
    try:
        return open(path, encoding="utf-8", errors="replace")
    except OSError as exc:
        from sglconsole.errors import UsageError

        raise UsageError(f"{path}: {exc.strerror or exc}") from None


class _Stdin:
    def __enter__(self):
        return sys.stdin

    def __exit__(self, *exc):
        return False
