"""The signs before an outage on screen: the host pane's "Before an outage" section, a server's
mark in the host's server rows and its lines in the server's header. Renders what
state.precursors holds and finds; nothing is derived here."""

from __future__ import annotations

import time

from rich.text import Text

from sglconsole.core.text import clean, fmt_duration
from sglconsole.state.fleet import HostState
from sglconsole.state.precursors import (
    KIB_PER_MIB,
    Finding,
    findings,
    memory_trend,
    rss_kb,
    rss_trend,
)
from sglconsole.tui.paint.palette import Palette

MARK = {"host_memory": "mem", "oom_kill": "OOM", "xid": "Xid", "ecc": "ECC"}
"""A sign's short word in a server's row (the pane says it whole)."""


def _gib(value_kb: float) -> str:
    return f"{value_kb / KIB_PER_MIB**2:,.1f} GiB"


def _per_min(slope_kb_s: float) -> str:
    return f"{slope_kb_s * 60 / KIB_PER_MIB:+,.0f} MiB/min"


def memory_line(host: HostState, palette: Palette) -> Text:
    signs = host.signs
    if not signs.memory:
        said = signs.memory_error or "not read yet (memory_interval 0 turns it off)"
        return Text(f"memory: {clean(said)}", style=palette.muted)
    available = signs.memory[-1][1]
    text = Text(f"memory: {_gib(available)} available")
    if signs.total_kb:
        text.append(f" of {_gib(signs.total_kb)}")
    trend = memory_trend(host)
    if trend.steady and trend.slope_kb_s is not None:
        text.append(f", {_per_min(trend.slope_kb_s)}", style=palette.muted)
    if trend.eta_s is not None:
        minutes = f"~{trend.eta_s / 60:,.0f} min" if trend.eta_s >= 60 else "<1 min"
        text.append(f" · host out of memory in {minutes}", style=palette.bad)
    return text


def kernel_line(host: HostState, palette: Palette) -> Text:
    signs = host.signs
    if signs.kernel_error:
        return Text(
            f"{clean(signs.kernel_error)}: OOM kills and GPU Xid lines are not seen here",
            style=palette.warn,
        )
    if signs.kernel_source is None:
        return Text(
            "kernel log: not read yet (kernel_log: false turns it off)", style=palette.muted
        )
    return Text(f"kernel log: following {signs.kernel_source}", style=palette.muted)


def sign_lines(host: HostState, palette: Palette, now: float) -> list[Text]:
    """One line per sign, with the server it hits and when."""
    lines = []
    for found in findings(host, now):
        where = "host" if found.port is None else f":{found.port}"
        ago = f" ({fmt_duration(now - found.time)} ago)" if found.time else ""
        lines.append(
            Text.assemble(
                (f"{MARK[found.kind]} ", "bold"),
                (f"{where}: ", "bold"),
                (clean(found.text), palette.bad),
                (ago if found.kind in ("oom_kill", "xid") else "", palette.muted),
            )
        )
    return lines


def rss_lines(host: HostState, palette: Palette) -> list[Text]:
    lines = []
    for port in sorted(host.servers):
        value = rss_kb(host, port)
        if value is None:
            continue
        trend = rss_trend(host, port)
        slope = f", {_per_min(trend.slope_kb_s)}" if trend.steady and trend.slope_kb_s else ""
        lines.append(Text(f"  :{port} RSS {_gib(value)}{slope}", style=palette.muted))
    return lines


def host_section(host: HostState, palette: Palette, now: float | None = None) -> list[Text]:
    """The host pane's section: memory (with each server's RSS), kernel log, GPU counters."""
    now = time.time() if now is None else now
    signs = host.signs
    if not (signs.memory or signs.kernel_source or signs.kernel_error or signs.health):
        return []  # nothing read (a recording, a Prometheus source, all turned off)
    lines = [memory_line(host, palette), *rss_lines(host, palette), kernel_line(host, palette)]
    if host.signs.health_error:
        lines.append(Text(f"ECC counters: {clean(host.signs.health_error)}", style=palette.muted))
    lines += sign_lines(host, palette, now)
    return [Text("\nBefore an outage", style="bold underline"), *lines]


def server_marks(host: HostState, now: float) -> dict[int, str]:
    """port -> 'Xid OOM': the signs that hit each server (the host's memory hits them all)."""
    found = findings(host, now)
    marks = {}
    for port in host.servers:
        kinds = []
        for sign in found:
            if (sign.port == port or sign.kind == "host_memory") and MARK[sign.kind] not in kinds:
                kinds.append(MARK[sign.kind])
        marks[port] = " ".join(kinds)
    return marks


def server_sign_lines(host: HostState, port: int, palette: Palette, now: float) -> list[Text]:
    """A server's header: the signs that hit it."""
    hits: list[Finding] = [
        found for found in findings(host, now) if found.port == port or found.kind == "host_memory"
    ]
    return [
        Text.assemble(("before an outage: ", "bold"), (clean(found.text), palette.bad))
        for found in hits
    ]
