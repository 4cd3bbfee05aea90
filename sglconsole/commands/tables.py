"""Rich tables of the fleet state for the CLI (status, watch)."""

from __future__ import annotations

import time

from rich.console import Group
from rich.table import Table
from rich.text import Text

from sglconsole.core.containers import describe, engine_problem
from sglconsole.core.text import clean, fmt_duration, fmt_num, safe
from sglconsole.state import canary
from sglconsole.state.fleet import FleetState, HostState, ServerState, Status, gpu_holders
from sglconsole.state.precursors import findings
from sglconsole.state.statuses import STATUSES

STATUS_STYLE = {record.status: record.style for record in STATUSES}


def badge(status: Status) -> Text:
    return Text(f" {status.value} ", style=STATUS_STYLE.get(status, ""))


def gpu_table(host: HostState, holders: dict[int, str] | None = None) -> Table:
    table = Table(box=None, pad_edge=False, show_edge=False, expand=False)
    for column, justify in (
        ("GPU", "right"),
        ("name", "left"),
        ("util", "right"),
        ("memory", "right"),
        ("temp", "right"),
        ("power", "right"),
        ("held by", "left"),
    ):
        table.add_column(column, justify=justify)
    holders = holders or gpu_holders(host)
    for gpu in host.gpus:
        memory = f"{(gpu.mem_used_mib or 0) / 1024:.1f}/{(gpu.mem_total_mib or 0) / 1024:.0f} GiB"
        power = (
            "-"
            if gpu.power_draw_w is None
            else f"{gpu.power_draw_w:.0f}/{gpu.power_limit_w or 0:.0f} W"
        )
        table.add_row(
            str(gpu.index),
            safe(gpu.name or "?"),
            fmt_num(gpu.util_gpu, 0, "%"),
            memory,
            fmt_num(gpu.temperature_c, 0, "C"),
            power,
            safe(holders.get(gpu.index, "")),
        )
    return table


def server_table(host: HostState, now: float | None = None) -> Table:
    now = now or time.time()
    table = Table(box=None, pad_edge=False, show_edge=False)
    # the canary's column once it has run on one of them (a one-shot status runs none)
    asked = any(server.canary.runs or server.canary.skipped for server in host.servers.values())
    for column, justify in (
        ("port", "right"),
        ("status", "left"),
        ("profile", "left"),
        ("pid", "right"),
        ("tok/s", "right"),
        ("accept", "right"),
        ("run/queue", "right"),
        ("uptime", "right"),
        *((("canary", "left"),) if asked else ()),
        ("why", "left"),
    ):
        table.add_column(
            column, justify=justify, overflow="fold" if column == "why" else "ellipsis"
        )
    for server in sorted(host.servers.values(), key=lambda server: server.port):
        row = server_row(server, now)
        table.add_row(*(row if asked else row[:-2] + row[-1:]))
    return table


def server_row(server: ServerState, now: float) -> list:
    view = server.view
    load = view.load
    pid = str(view.pid) if view.pid is not None else "-"
    run_queue = "-" if load is None else f"{load.running_req or 0}/{load.queue_req or 0}"
    canary_text, canary_ok = canary.cell(server.canary, view.pid)
    run = server.canary.current(view.pid)
    finding = run.finding if run is not None else None
    why = view.reason if finding is None else f"{view.reason}; {finding}"
    return [
        str(server.port),
        badge(view.status),
        safe(server.profile_name or "(unmanaged)"),
        pid,
        fmt_num(view.tok_s),
        fmt_num(load.accept_len if load else None, 2),
        run_queue,
        fmt_duration(view.uptime(now)),
        Text(canary_text, style={True: "green", False: "bold red"}.get(canary_ok, "dim")),
        safe(why, "dim"),
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
            parts += container_lines(host)
            parts += sign_lines(host, time.time() if now is None else now)
            for note in host.view.notes if host.view else ():
                parts.append(Text("note: " + clean(note), style="dim"))
            for orphan in host.view.orphans if host.view else ():
                parts.append(
                    Text(
                        f"ORPHAN pid {orphan.pid} ({clean(orphan.title)}) ppid {orphan.ppid}: "
                        "its server is gone",
                        style="bold red",
                    )
                )
            for cache in host.view.weight_caches if host.view else ():
                parts.append(Text(clean(cache.describe()), style="dim"))
            for app in host.view.unaccounted if host.view else ():
                parts.append(
                    Text(
                        f"GPU memory held by pid {app.pid} ({clean(app.process_name)}, "
                        f"{app.used_mib} MiB) that no server accounts for",
                        style="yellow",
                    )
                )
        parts.append(Text(""))
    parts += router_lines(fleet)
    return Group(*parts)


def container_lines(host: HostState) -> list[Text]:
    """The container each server runs in, and an engine the host has but cannot use."""
    lines = []
    for server in sorted(host.servers.values(), key=lambda server: server.port):
        if server.container is not None and server.process is not None:
            where = describe(server.container, server.container_version)
            lines.append(Text(f":{server.port} runs in {clean(where)}", style="dim"))
    for engine, (state, detail) in sorted(host.engines.items()):
        problem = engine_problem(engine, state, detail)
        if problem:
            lines.append(Text(clean(problem), style="yellow"))
    return lines


def sign_lines(host: HostState, now: float) -> list[Text]:
    """The signs before an outage (state.precursors): memory, a kernel log this login may not
    read, and each sign with the server it hits."""
    signs, lines = host.signs, []
    if signs.memory:
        text = Text(f"memory: {signs.memory[-1][1] / 2**20:,.1f} GiB available", style="dim")
        if signs.total_kb:
            text.append(f" of {signs.total_kb / 2**20:,.1f} GiB", style="dim")
        lines.append(text)
    if signs.kernel_error:
        lines.append(Text(clean(signs.kernel_error), style="yellow"))
    for found in findings(host, now):
        where = "the host" if found.port is None else f"{host.name}:{found.port}"
        lines.append(Text(f"before an outage, {where}: {clean(found.text)}", style="bold red"))
    return lines


def router_lines(fleet: FleetState) -> list[Text]:
    """Each router: reachable or why not, then each server's place in it (state.routing)."""
    lines = []
    for router in getattr(fleet, "routers", {}).values():
        title = Text(f"router {clean(router.name)}", style="bold")
        title.append(f"  {clean(router.where)}", style="dim")
        if router.reachable is False:
            title.append("  UNREACHABLE ", style=STATUS_STYLE[Status.UNREACHABLE])
            title.append(" " + clean(router.error or ""), style="red")
        elif router.reachable:
            healthy = sum(1 for worker in router.workers if worker.healthy)
            title.append(f"  {healthy}/{len(router.workers)} workers healthy", style="dim")
        run = router.canary.runs[-1] if router.canary.runs else None
        if run is not None:  # the canary asked through it (state.canary)
            marks = router.canary.marks(None)[-canary.MARKS_SHOWN :]
            title.append(f"  canary {run.verdict} {marks}", style="green" if run.ok else "bold red")
            if run.finding:
                title.append(f" {clean(run.finding)}", style="red")
        lines.append(title)
        for key in router.worker_urls:
            host, _, port = key.rpartition(":")
            server = fleet.server(host, int(port))
            route = next(
                (
                    candidate
                    for candidate in (server.view.routes if server else ())
                    if candidate.router == router.name
                ),
                None,
            )
            if route is not None:
                style = "bold red" if route.problem else "dim"
                lines.append(Text(f"  {clean(key)}: {clean(route.describe())}", style=style))
        lines.append(Text(""))
    return lines
