"""A host at a glance: its GPUs, all its servers, and what nobody accounts for."""

from __future__ import annotations

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from sglconsole.core.containers import engine_problem
from sglconsole.core.text import clean, fmt_duration, fmt_num
from sglconsole.state import canary
from sglconsole.state.fleet import HostState, ServerState
from sglconsole.tui.paint.fleet import host_status, retry_in, stale_for
from sglconsole.tui.paint.gpus import WIDE, gpu_lines
from sglconsole.tui.paint.labels import tok_s, uptime
from sglconsole.tui.paint.palette import Palette
from sglconsole.tui.paint.precursors import host_section, server_marks

SECTIONS = ("head", "gpus", "servers", "signs", "notes")
"""The host pane's sections, top to bottom: each is drawn by a widget of its own, so a change
(a GPU sample, a server's uptime) lays out and repaints its section alone."""


def host_sections(
    host: HostState, palette: Palette, now: float, width: int
) -> dict[str, list[RenderableType]]:
    """SECTIONS' parts (an empty list: the section shows nothing)."""
    head: list[RenderableType] = [title(host, palette)]
    if host.reachable is False:
        head += unreachable(host, palette, now)
    head += warnings(host, palette, now)
    return {
        "head": head,
        "gpus": [section("GPUs"), *gpu_lines(host, palette, width)],
        "servers": [section("Servers"), server_table(host, palette, now, width)],
        "signs": host_section(host, palette, now),  # the signs before an outage (paint.precursors)
        "notes": problems(host, palette),
    }


def section(name: str) -> Text:
    return Text(f"\n{name}", style="bold underline")


def title(host: HostState, palette: Palette) -> Text:
    text = Text.assemble((clean(host.name), "bold"), " ")
    text.append_text(palette.badge(host_status(host)))
    if host.gpus:
        text.append(f"  {len(host.gpus)}× {clean(host.gpu_model or 'GPU')}", style=palette.muted)
    return text


def warnings(host: HostState, palette: Palette, now: float) -> list[Text]:
    lines = []
    stale = stale_for(host, now)
    if stale is not None:
        lines.append(
            Text(
                f"no GPU sample for {fmt_duration(stale)}: "
                "the host may be frozen; what follows is old",
                style=palette.warn,
            )
        )
    if host.gpu_error and host.gpus:
        lines.append(Text(f"nvidia-smi: {clean(host.gpu_error)}", style=palette.warn))
    for engine, (state, detail) in sorted(host.engines.items()):
        problem = engine_problem(engine, state, detail)  # a container engine it cannot use
        if problem:
            lines.append(Text(clean(problem), style=palette.warn))
    return lines


def unreachable(host: HostState, palette: Palette, now: float) -> list[Text]:
    since = f" for {fmt_duration(now - host.since)}" if host.since else ""
    return [
        Text(f"unreachable{since}: {clean(host.error or 'no answer')}", style=palette.bad),
        Text(f"{retry_in(host, now)} · what follows is the last state seen", style=palette.muted),
    ]


def server_table(host: HostState, palette: Palette, now: float, width: int) -> Table | Text:
    if not host.servers:
        return Text("no servers configured or found", style=palette.muted)
    wide = width >= WIDE
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    # the canary's column once a canary has run on one of them (state.canary)
    asked = any(server.canary.runs or server.canary.skipped for server in host.servers.values())
    names = (
        ["port", "status", "tok/s", "run/q"]
        + (["accept", "pid", "uptime", "profile"] if wide else [])
        + (["canary"] if asked else [])
        + ["why"]
    )
    for name in names:
        table.add_column(
            name,
            justify="left" if name in ("status", "profile", "why") else "right",
            overflow="fold" if name == "why" else "ellipsis",
            no_wrap=name != "why",
        )
    marks = server_marks(host, now)  # the signs before an outage that hit each
    for server in sorted(host.servers.values(), key=lambda server: server.port):
        row = server_row(server, palette, now, wide, marks.get(server.port, ""))
        if asked:
            row.insert(-1, canary_cell(server, palette, wide))
        table.add_row(*row)
    return table


def canary_cell(server: ServerState, palette: Palette, wide: bool) -> Text:
    """Its verdict and newest runs (✓ ✗); narrow: the runs alone."""
    text, passed = canary.cell(server.canary, server.view.pid)
    if not wide and " " in text:
        text = text.split(" ", 1)[1][-4:]
    style = {True: palette.good, False: palette.bad}.get(passed, palette.muted)
    return Text(text, style=style)


def server_row(
    server: ServerState, palette: Palette, now: float, wide: bool, marks: str = ""
) -> list:
    view = server.view
    load = view.load
    run_q = "-" if load is None else f"{load.running_req or 0}/{load.queue_req or 0}"
    row: list = [str(server.port), palette.badge(view.status), tok_s(view.tok_s), run_q]
    if wide:
        pid = str(view.pid) if view.pid is not None else "-"
        row += [
            fmt_num(load.accept_len if load else None, 2),
            pid,
            uptime(view.uptime(now)),
            clean(server.profile_name or "(unmanaged)"),
        ]
    if marks:  # the signs before an outage that hit it (paint.precursors)
        return row + [
            Text.assemble((f"{marks} ", palette.bad), (clean(view.reason), palette.muted))
        ]
    return row + [Text(clean(view.reason), style=palette.muted)]


def problems(host: HostState, palette: Palette) -> list[Text]:
    view = host.view
    lines: list[Text] = []
    for orphan in view.orphans if view else ():
        lines.append(
            Text(
                f"ORPHAN pid {orphan.pid} {clean(orphan.title)} (ppid {orphan.ppid}): "
                "its server is gone",
                style=palette.bad,
            )
        )
    for app in view.unaccounted if view else ():
        lines.append(
            Text(
                f"GPU memory nobody accounts for: pid {app.pid} {clean(app.process_name)} "
                f"holds {app.used_mib or 0} MiB",
                style=palette.warn,
            )
        )
    for cache in view.weight_caches if view else ():
        lines.append(Text(clean(cache.describe()), style=palette.muted))
    for note in view.notes if view else ():
        lines.append(Text("note: " + clean(note), style=palette.muted))
    if host.watcher_error:
        lines.append(Text("watcher: " + clean(host.watcher_error), style=palette.warn))
    if not lines:
        return []
    urgent = bool(view and (view.orphans or view.unaccounted)) or bool(host.watcher_error)
    return [section("Attention" if urgent else "Notes")] + lines
