"""Rich renderings of fleet state shared by the CLI (and reused by the TUI).

Everything that came from a host (argv, log text, host names, errors) is
wrapped in rich Text, never interpreted as markup, and stripped of control
characters, so a hostile log line cannot restyle or drive the terminal.
"""

from __future__ import annotations

import re
import time

from rich.console import Group
from rich.table import Table
from rich.text import Text

from sglconsole.fleet import FleetState, HostState, ServerState, Status

STATUS_STYLE = {
    Status.UP: "bold green",
    Status.STARTING: "bold cyan",
    Status.DOWN: "bold red",
    Status.DRIFT: "bold yellow",
    Status.SLOW: "bold magenta",
    Status.DEGENERATE: "bold white on red",
    Status.LOOPING: "bold red",
    Status.UNMANAGED: "bold blue",
    Status.UNREACHABLE: "bold white on red",
    Status.UNKNOWN: "dim",
}

_CONTROL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]|[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean(value: object) -> str:
    """Text from a host, safe to put on the terminal: escape sequences and control characters removed."""
    return _CONTROL.sub("", str(value))


def safe(value: object, style: str = "") -> Text:
    return Text(clean(value), style=style)


def badge(status: Status) -> Text:
    return Text(f" {status.value} ", style=STATUS_STYLE.get(status, ""))


def fmt_num(value: float | None, digits: int = 1, unit: str = "") -> str:
    return "-" if value is None else f"{value:.{digits}f}{unit}"


def fmt_duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    seconds = int(max(0, seconds))
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d{hours:02d}h"
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s"


def gpu_table(host: HostState, holders: dict[int, str] | None = None) -> Table:
    table = Table(box=None, pad_edge=False, show_edge=False, expand=False)
    for column, justify in (("GPU", "right"), ("name", "left"), ("util", "right"), ("memory", "right"),
                            ("temp", "right"), ("power", "right"), ("held by", "left")):
        table.add_column(column, justify=justify)
    holders = holders or gpu_holders(host)
    for gpu in host.gpus:
        memory = f"{(gpu.mem_used_mib or 0) / 1024:.1f}/{(gpu.mem_total_mib or 0) / 1024:.0f} GiB"
        power = "-" if gpu.power_draw_w is None else f"{gpu.power_draw_w:.0f}/{gpu.power_limit_w or 0:.0f} W"
        table.add_row(
            str(gpu.index), safe(gpu.name or "?"), fmt_num(gpu.util_gpu, 0, "%"), memory,
            fmt_num(gpu.temperature_c, 0, "C"), power, safe(holders.get(gpu.index, "")),
        )
    return table


def gpu_holders(host: HostState) -> dict[int, str]:
    holders: dict[int, list[str]] = {}
    for server in host.servers.values():
        if server.process is not None:
            for index in server.process.gpus:
                holders.setdefault(index, []).append(f":{server.port}")
    if host.view is not None:
        uuid_to_index = {g.uuid: g.index for g in host.gpus}
        for app in host.view.unaccounted:
            index = uuid_to_index.get(app.gpu_uuid)
            if index is not None:
                holders.setdefault(index, []).append(f"pid {app.pid} (no server)")
        for orphan in host.view.orphans:
            holders.setdefault(-1, []).append(f"orphan {orphan.pid}")
    return {k: ", ".join(v) for k, v in holders.items()}


def server_table(host: HostState, now: float | None = None) -> Table:
    now = now or time.time()
    table = Table(box=None, pad_edge=False, show_edge=False)
    for column, justify in (("port", "right"), ("status", "left"), ("profile", "left"), ("pid", "right"),
                            ("tok/s", "right"), ("accept", "right"), ("run/queue", "right"), ("uptime", "right"),
                            ("why", "left")):
        table.add_column(column, justify=justify, overflow="fold" if column == "why" else "ellipsis")
    for server in sorted(host.servers.values(), key=lambda s: s.port):
        table.add_row(*server_row(server, now))
    return table


def server_row(server: ServerState, now: float) -> list:
    load = server.load()
    pid = str(server.process.main.pid) if server.process else "-"
    run_queue = "-" if load is None else f"{load.running_req or 0}/{load.queue_req or 0}"
    return [
        str(server.port), badge(server.status), safe(server.profile_name or "(unmanaged)"), pid,
        fmt_num(server.tok_s()), fmt_num(load.accept_len if load else None, 2), run_queue,
        fmt_duration(server.uptime(now)), safe(server.reason, "dim"),
    ]


def host_title(host: HostState) -> Text:
    title = Text(clean(host.name), style="bold")
    if host.reachable is False:
        title.append("  UNREACHABLE ", style=STATUS_STYLE[Status.UNREACHABLE])
        title.append(" " + clean(host.error or ""), style="red")
    elif host.gpus:
        title.append(f"  {len(host.gpus)}x {clean(host.gpus[0].name or 'GPU')}", style="dim")
    if host.gpu_error:
        title.append("  nvidia-smi: " + clean(host.gpu_error), style="yellow")
    return title


def fleet_view(fleet: FleetState, now: float | None = None) -> Group:
    parts = []
    for host in fleet.hosts.values():
        parts.append(host_title(host))
        if host.reachable is not False:
            if host.gpus:
                parts.append(gpu_table(host))
            if host.servers:
                parts.append(server_table(host, now))
            for note in host.view.notes if host.view else ():
                parts.append(Text("note: " + clean(note), style="dim"))
            for orphan in host.view.orphans if host.view else ():
                parts.append(Text(f"ORPHAN pid {orphan.pid} ({clean(orphan.title)}) ppid {orphan.ppid}: its server is gone", style="bold red"))
            for app in host.view.unaccounted if host.view else ():
                parts.append(Text(f"GPU memory held by pid {app.pid} ({clean(app.process_name)}, {app.used_mib} MiB) that no server accounts for", style="yellow"))
        parts.append(Text(""))
    return Group(*parts)
