"""Labels of the fleet tree: one line per host and per server."""

from __future__ import annotations

from rich.text import Text

from sglconsole.core.text import clean
from sglconsole.state.fleet import HostState, ServerState, Status, worst
from sglconsole.tui.paint.labels import gpu_summary, shorten, tok_s
from sglconsole.tui.paint.palette import Palette
from sglconsole.tui.paint.router import tree_mark

STALE_S = 10.0  # no GPU sample for this long from a reachable host: what we show is old


def stale_for(host: HostState, now: float) -> float | None:
    """Seconds since the last GPU sample of a host that still counts as reachable, when too long."""
    if host.reachable and host.gpu_time is not None and now - host.gpu_time > STALE_S:
        return now - host.gpu_time
    return None


def host_status(host: HostState) -> Status:
    if host.reachable is False:
        return Status.UNREACHABLE
    if host.reachable is None:
        return Status.UNKNOWN
    return worst(server.status for server in host.servers.values())


def retry_in(host: HostState, now: float) -> str:
    left = None if host.retry_at is None else int(host.retry_at - now)
    return "retrying" if left is None or left <= 0 else f"retry {left}s"


def _retry_forms(host: HostState, now: float) -> list[str]:
    stale = stale_for(host, now)
    if stale is not None:
        return [f" stale {stale:.0f}s", " ⚠"]
    if host.reachable is not False:
        return []
    long = f" {retry_in(host, now)}"
    return [long, " ↻" + long.split()[-1]] if long != " retrying" else [long, " ↻"]


def host_label(host: HostState, palette: Palette, now: float, width: int) -> Text:
    """Name and problem badge always; then the retry countdown, then the GPUs, as room allows."""
    status = host_status(host)
    if status == Status.UNKNOWN:
        return Text.assemble((clean(host.name), "bold"), (" connecting…", palette.muted))
    badge = palette.badge(status) if status != Status.UP else Text("")
    name = shorten(clean(host.name), max(6, width - badge.cell_len - 1))
    gpus = f" {gpu_summary(host)}" if host.gpus else ""
    room = width - len(name) - badge.cell_len - 1
    retry = next((form for form in _retry_forms(host, now) if len(form) <= room), "")
    gpus = gpus if len(gpus) <= room - len(retry) else ""
    return Text.assemble(
        (name, "bold"),
        (gpus, palette.muted),
        " ",
        badge,
        (retry, palette.warn if stale_for(host, now) else palette.muted),
    )


def server_label(server: ServerState, palette: Palette, width: int, signs: str = "") -> Text:
    """`signs`: the marks of the signs before an outage that hit it (paint.precursors)."""
    text = Text.assemble((f":{server.port}", "bold"))
    text.append(f" {tok_s(server.view.tok_s):>5} ")
    text.append_text(palette.badge(server.status))
    mark = tree_mark(server)
    if mark:  # whole when it fits (the pane says it whole anyway)
        fits = len(mark) + 1 <= width - text.cell_len
        text.append(f" {mark if fits else '⇄!'}", style=palette.bad)
    if signs and len(signs) + 1 <= width - text.cell_len:
        text.append(f" {signs}", style=palette.bad)
    room = width - text.cell_len - 1
    name = clean(server.profile_name) if server.profile_name else "(unmanaged)"
    if server.container is not None:  # which servers run in Docker/Podman, seen in the tree
        name = f"{server.container.engine}: {name}"
    if room >= 4:
        text.append(" " + shorten(name, room), style=palette.muted)
    return text
