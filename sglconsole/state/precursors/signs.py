"""A host's signs that come before an outage, mapped to the servers they will hit: its memory
and each server's RSS with their trend, the kernel's OOM kills and GPU Xid lines, the GPUs' ECC
and row-remap counters. One home: the feeds write `HostSigns` (remote.feeds), every view and the
alerts read `findings()`.

Numbers belong to one process: a server's RSS series starts again with a new pid. An answer that
cannot be read is unknown (None), never 0. A kernel event names the server(s) it hit: by the pid
in the line (the OOM killer's victim, the process on the GPU of an Xid) among the pids this
console saw in the server's process tree, else by the GPU of the Xid's PCI bus.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sglconsole.core.kernel_log import KernelEvent, bus_key
from sglconsole.core.memory_trend import NO_TREND, Trend, eta_words, trend
from sglconsole.core.nvidia_smi.health import GpuHealth

if TYPE_CHECKING:
    from sglconsole.state.model import HostState

MEMORY_SAMPLES = 400  # at the default 10 s, about an hour: the trend's window is half of it
RECENT_S = 3600.0  # a kernel event is news for an hour after it was logged
OOM_WARN_S = 3600.0  # "out of memory in ~N min" is a finding under an hour ...
OOM_CLEAR_S = 5400.0  # ... and stays one until the estimate is past 90 min (hysteresis)
KERNEL_EVENTS = 50
PID_MEMORY = 4096  # pids remembered with their server (a killed pid is gone from the next scan)
PID_START_SLACK_S = 2.0  # the kernel log's clock and a start time (boot + ticks) may differ
KIB_PER_MIB = 1024
UNIT = re.compile(r"/(?P<unit>[^/]+\.service)$")


@dataclass(frozen=True, kw_only=True)
class HitEvent:
    """A kernel event and the servers it hit (ports on this host; empty: none that we know)."""

    event: KernelEvent
    ports: tuple[int, ...]
    read_at: float


@dataclass
class HostSigns:
    memory: deque[tuple[float, float]] = field(default_factory=lambda: deque(maxlen=MEMORY_SAMPLES))
    """(time, MemAvailable kB) read on the host, oldest first."""
    total_kb: int | None = None
    memory_error: str | None = None
    rss: dict[int, deque[tuple[float, float]]] = field(default_factory=dict)
    """port -> (time, RSS kB of the server's whole process tree) of its current process."""
    rss_pid: dict[int, int] = field(default_factory=dict)
    """port -> the main pid its RSS series belongs to."""
    pids: dict[int, tuple[int, float]] = field(default_factory=dict)
    """pid -> (port, the process's start time): every pid seen in a server's process tree, the
    newest PID_MEMORY."""
    kernel: deque[HitEvent] = field(default_factory=lambda: deque(maxlen=KERNEL_EVENTS))
    kernel_seen: set[tuple] = field(default_factory=set)
    memcg: dict[int, str] = field(default_factory=dict)
    """pid -> its cgroup, from the OOM killer's line before the kill."""
    kernel_source: str | None = None
    """'dmesg' or 'journalctl -k' while followed; None: not (yet) read."""
    kernel_error: str | None = None
    """Why the kernel log is not read (the login may not: what the tools said)."""
    health: dict[int, GpuHealth] = field(default_factory=dict)
    health_first: dict[int, GpuHealth] = field(default_factory=dict)
    """Each GPU's counters when this console first read them: a rise is news."""
    health_at: float | None = None
    health_error: str | None = None
    trends: dict[int | None, tuple[tuple, Trend]] = field(default_factory=dict)
    """The host's (None) and each port's trend, with the reading it was computed at."""


@dataclass(frozen=True, kw_only=True)
class Finding:
    kind: str
    """'host_memory', 'oom_kill', 'xid' or 'ecc'."""
    port: int | None
    """The server it hits (None: the host, no server known)."""
    text: str
    time: float | None = None


def take_memory(host: HostState, message: dict, now: float) -> None:
    """The watcher's {"t": "mem"} report: MemAvailable and each server tree's RSS."""
    signs = host.signs
    avail, total = message.get("avail_kb"), message.get("total_kb")
    when = message.get("time") if isinstance(message.get("time"), (int, float)) else now
    signs.total_kb = total if isinstance(total, int) else None
    if isinstance(avail, int):
        signs.memory.append((when, float(avail)))
        signs.memory_error = None
    else:
        signs.memory_error = "the host's /proc/meminfo gives no MemAvailable"
    rss = message.get("rss") if isinstance(message.get("rss"), dict) else {}
    for server in host.servers.values():
        process = server.process
        if process is None:
            signs.rss.pop(server.port, None)
            continue
        tree = (process.main, *process.children)
        for member in tree:
            _remember_pid(signs, member.pid, server.port, member.start)
        values = [rss.get(str(member.pid)) for member in tree]
        if not isinstance(values[0], int):
            continue  # the main process unread: unknown, never a smaller number
        if signs.rss_pid.get(server.port) != process.main.pid:
            signs.rss[server.port] = deque(maxlen=MEMORY_SAMPLES)
            signs.rss_pid[server.port] = process.main.pid
        total_kb = sum(value for value in values if isinstance(value, int))
        signs.rss[server.port].append((when, float(total_kb)))


def _remember_pid(signs: HostSigns, pid: int, port: int, start: float) -> None:
    signs.pids.pop(pid, None)
    signs.pids[pid] = (port, start)
    while len(signs.pids) > PID_MEMORY:
        signs.pids.pop(next(iter(signs.pids)))


def take_kernel_event(host: HostState, event: KernelEvent, now: float) -> HitEvent | None:
    """A precursor line of the kernel log, attributed; None when it was read before."""
    signs = host.signs
    if event.key in signs.kernel_seen:
        return None
    signs.kernel_seen.add(event.key)
    if event.kind == "oom_context":  # not an event: who the next kill's victim belongs to
        signs.memcg[event.pid] = event.memcg or ""
        return None
    hit = HitEvent(event=event, ports=attribute(host, event), read_at=now)
    signs.kernel.append(hit)
    return hit


def attribute(host: HostState, event: KernelEvent) -> tuple[int, ...]:
    """The servers an event hit: the pid's server, else (an Xid) the servers on that GPU. A pid
    counts only for a process that had started by the event's time: a pid is reused, and a kill
    logged before the console started may name a number a newer process holds now."""
    for server in host.servers.values():  # pids of the live trees first (the freshest)
        process = server.process
        tree = (process.main, *process.children) if process else ()
        if any(member.pid == event.pid and _before(member.start, event) for member in tree):
            return (server.port,)
    if event.pid is not None and event.pid in host.signs.pids:
        port, start = host.signs.pids[event.pid]
        if _before(start, event):
            return (port,)
    unit = UNIT.search(host.signs.memcg.get(event.pid, "")) if event.pid is not None else None
    if unit is not None:  # a gone pid, in the cgroup of a server's systemd unit
        for server in host.servers.values():
            named = server.config.systemd_unit if server.config else None
            if unit.group("unit") in (named, f"{named}.service", f"sglang-{server.port}.service"):
                return (server.port,)
    if event.kind == "xid" and event.bus:
        gpus = [gpu.index for gpu in host.gpus if bus_key(gpu.bus_id) == event.bus]
        return servers_on(host, gpus)
    return ()


def _before(start: float, event: KernelEvent) -> bool:
    """Whether a process that started at `start` could be the one the event names (an event
    without a time: it may be)."""
    return event.time is None or start <= event.time + PID_START_SLACK_S


def servers_on(host: HostState, gpus: list[int]) -> tuple[int, ...]:
    return tuple(
        sorted(
            server.port
            for server in host.servers.values()
            if server.process is not None and set(server.process.gpus) & set(gpus)
        )
    )


def take_health(host: HostState, readings: list[GpuHealth], now: float) -> None:
    signs = host.signs
    signs.health = {reading.index: reading for reading in readings}
    for reading in readings:
        signs.health_first.setdefault(reading.index, reading)
    signs.health_at, signs.health_error = now, None


def memory_trend(host: HostState) -> Trend:
    return _trend(host.signs, None, host.signs.memory)


def rss_trend(host: HostState, port: int) -> Trend:
    return _trend(host.signs, port, host.signs.rss.get(port))


def _trend(signs: HostSigns, key: int | None, series: deque | None) -> Trend:
    """A series' trend, computed once per new reading: every view, sweep and scrape asks."""
    if not series:
        return NO_TREND
    marker = (len(series), series[-1])
    held = signs.trends.get(key)
    if held is None or held[0] != marker:
        held = signs.trends[key] = (marker, trend(list(series)))
    return held[1]


def rss_kb(host: HostState, port: int) -> float | None:
    series = host.signs.rss.get(port)
    return series[-1][1] if series else None


def ecc_problems(host: HostState, index: int) -> list[str]:
    """What is wrong with one GPU's memory now, in words (empty: nothing)."""
    now, first = host.signs.health.get(index), host.signs.health_first.get(index)
    if now is None:
        return []
    said = []
    for name, value in now.counters().items():
        before = first.counters()[name] if first else None
        if value is not None and before is not None and value > before:
            said.append(f"{name.replace('_', ' ')} {before}->{value}")
    if now.ecc_uncorrected and not any(text.startswith("ecc uncorrected") for text in said):
        said.append(f"ecc uncorrected {now.ecc_uncorrected}")
    if now.remap_pending:
        said.append("row remap pending (reset the GPU)")
    if now.remap_failure:
        said.append("row remap failed (no spare rows)")
    return said


GROWING_MIB_MIN = 1.0
"""A server's RSS trend under this (MiB per minute) is noise, not the leak: it is not named."""


def findings(host: HostState, now: float, keep: frozenset[tuple] = frozenset()) -> list[Finding]:
    """Every sign on the host now, one per server it hits (port None: the host's own).
    `keep`: (kind, port) already alerted, held to the looser threshold (hysteresis)."""
    found: list[Finding] = []
    host_trend = memory_trend(host)
    eta = host_trend.eta_s
    limit = OOM_CLEAR_S if ("host_memory", None) in keep else OOM_WARN_S
    if eta is not None and eta < limit:
        growing = [
            (rss_trend(host, port).slope_kb_s or 0.0, port)
            for port in host.signs.rss
            if rss_trend(host, port).steady
        ]
        growing = sorted(
            (slope, port) for slope, port in growing if slope * 60 / KIB_PER_MIB >= GROWING_MIB_MIN
        )[::-1]
        words = ", ".join(
            f":{port} +{slope * 60 / KIB_PER_MIB:.0f} MiB/min" for slope, port in growing
        )
        falling = -(host_trend.slope_kb_s or 0) * 60 / KIB_PER_MIB
        text = (
            f"host {eta_words(eta)} (MemAvailable {host.signs.memory[-1][1] / KIB_PER_MIB**2:.1f}"
            f" GiB, falling {falling:.0f} MiB/min)" + (f"; growing: {words}" if words else "")
        )
        found.append(Finding(kind="host_memory", port=None, text=text, time=now))
    for hit in host.signs.kernel:
        when = hit.event.time if hit.event.time is not None else hit.read_at
        if hit.event.kind == "nvrm" or now - when > RECENT_S:
            continue
        for port in hit.ports or (None,):
            found.append(Finding(kind=hit.event.kind, port=port, text=describe(hit), time=when))
    for index in sorted(host.signs.health):
        problems = ecc_problems(host, index)
        for port in servers_on(host, [index]) or (None,):
            if problems:
                text = f"GPU {index}: " + "; ".join(problems)
                found.append(Finding(kind="ecc", port=port, text=text, time=host.signs.health_at))
    return found


def describe(hit: HitEvent) -> str:
    event = hit.event
    if event.kind == "oom_kill":
        rss = f", {event.rss_kb / KIB_PER_MIB:,.0f} MiB resident" if event.rss_kb else ""
        unknown = (
            "" if hit.ports else "; whose it was is not known (gone before this console saw it)"
        )
        return f"OOM killer killed pid {event.pid} ({event.comm}{rss}){unknown}"
    if event.kind == "xid":
        return f"GPU Xid {event.xid} on PCI {event.bus}: {event.text.split(', ', 3)[-1]}"
    return event.text
