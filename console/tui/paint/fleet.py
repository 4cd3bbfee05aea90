"""Labels of the fleet tree: one line per host and per server."""

from __future__ import annotations

from rich.text import Text

from console.fleet import HostState, ServerState, Status, worst
from console.render import clean
from console.tui.paint.labels import gpu_summary, shorten, tok_s
from console.tui.paint.palette import Palette


def host_status(host: HostState) -> Status:
    if host.reachable is False:
        return Status.UNREACHABLE
    if host.reachable is None:
        return Status.UNKNOWN
    return worst(s.status for s in host.servers.values())


def retry_in(host: HostState, now: float) -> str:
    if host.retry_at is None:
        return "retrying"
    return f"retry {max(0, int(host.retry_at - now))}s"


def host_label(host: HostState, palette: Palette, now: float, width: int) -> Text:
    text = Text.assemble((clean(host.name), "bold"))
    status = host_status(host)
    if status == Status.UNKNOWN:
        text.append(" connecting…", style=palette.muted)
        return text
    text.append(f" {gpu_summary(host)}", style=palette.muted)
    if status != Status.UP:
        text.append(" ")
        text.append_text(palette.badge(status))
    if host.reachable is False:
        text.append(f" {retry_in(host, now)}", style=palette.muted)
    text.truncate(width, overflow="ellipsis")
    return text


def server_label(server: ServerState, palette: Palette, width: int) -> Text:
    text = Text.assemble((f":{server.port}", "bold"))
    text.append(f" {tok_s(server.tok_s()):>5} ")
    text.append_text(palette.badge(server.status))
    room = width - text.cell_len - 1
    name = clean(server.profile_name) if server.profile_name else "(unmanaged)"
    if room >= 4:
        text.append(" " + shorten(name, room), style=palette.muted)
    return text
