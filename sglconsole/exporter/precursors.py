"""The signs before an outage as Prometheus series (state.precursors): host memory and its
out-of-memory estimate, each server's RSS, kernel events of the last hour (Xid, OOM kill) per
host and per server they hit, GPU ECC and row-remap counters, and one series per sign now.

Labels stay bounded like the rest (collector.py): host, port, profile, GPU index, a kind from a
fixed set. A number that could not be read is absent, never 0."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import GaugeMetricFamily, Metric

from sglconsole.state.fleet import HostState
from sglconsole.state.precursors import (
    RECENT_S,
    findings,
    memory_trend,
    rss_kb,
    rss_trend,
)

PREFIX = "sglconsole_"
KINDS = ("xid", "oom_kill", "nvrm")
BYTES_PER_KB = 1024


def _gauge(name: str, doc: str, labels: list[str]) -> GaugeMetricFamily:
    return GaugeMetricFamily(PREFIX + name, doc, labels=labels)


def precursor_metrics(hosts: list[HostState], now: float) -> Iterator[Metric]:
    available = _gauge("host_memory_available_bytes", "The host's MemAvailable", ["host"])
    total = _gauge("host_memory_total_bytes", "The host's MemTotal", ["host"])
    slope = _gauge(
        "host_memory_available_slope_bytes_per_second",
        "MemAvailable's trend (negative: falling), present only while steady",
        ["host"],
    )
    eta = _gauge(
        "host_oom_eta_seconds",
        "Seconds until MemAvailable reaches 0 at its steady fall (absent: no such trend)",
        ["host"],
    )
    rss = _gauge(
        "server_rss_bytes",
        "Resident memory of the server's process tree (ranks and children)",
        ["host", "port", "profile"],
    )
    rss_slope = _gauge(
        "server_rss_slope_bytes_per_second",
        "The trend of the server's RSS, present only while steady",
        ["host", "port", "profile"],
    )
    readable = _gauge(
        "host_kernel_log_readable",
        "1 while the kernel log is followed, 0 when this login may not read it (absent: not known)",
        ["host"],
    )
    events = _gauge(
        "host_kernel_events_recent",
        f"Kernel log events of the last {RECENT_S / 60:.0f} min by kind (xid, oom_kill, nvrm)",
        ["host", "kind"],
    )
    hits = _gauge(
        "server_kernel_events_recent",
        f"Xid and OOM-kill events of the last {RECENT_S / 60:.0f} min that hit the server",
        ["host", "port", "kind"],
    )
    ecc = _gauge(
        "gpu_ecc_errors", "Volatile ECC error counts (nvidia-smi)", ["host", "gpu", "type"]
    )
    remapped = _gauge("gpu_remapped_rows", "Remapped memory rows", ["host", "gpu", "type"])
    remap_state = _gauge(
        "gpu_remap_state", "1 when a row remap is pending or has failed", ["host", "gpu", "state"]
    )
    sign = _gauge(
        "sign_active",
        "1 for each sign before an outage now (kind: host_memory, oom_kill, xid, ecc) and the "
        'server it hits (server="" for the host)',
        ["host", "server", "kind"],
    )
    for host in hosts:
        if not host.reachable:
            continue  # the last numbers of a host we cannot see are not now
        _memory(host, available, total, slope, eta, rss, rss_slope)
        signs = host.signs
        if signs.kernel_source or signs.kernel_error:
            readable.add_metric([host.name], float(signs.kernel_error is None))
        recent = [hit for hit in signs.kernel if now - (hit.event.time or hit.read_at) <= RECENT_S]
        for kind in KINDS:
            count = sum(1 for hit in recent if hit.event.kind == kind)
            events.add_metric([host.name, kind], float(count))
        per_server: dict[tuple[int, str], int] = {}
        for hit in recent:
            for port in hit.ports:
                key = (port, hit.event.kind)
                per_server[key] = per_server.get(key, 0) + 1
        for (port, kind), count in sorted(per_server.items()):
            hits.add_metric([host.name, str(port), kind], float(count))
        for index, reading in sorted(signs.health.items()):
            gpu = [host.name, str(index)]
            for family, kind, value in (
                (ecc, "corrected", reading.ecc_corrected),
                (ecc, "uncorrected", reading.ecc_uncorrected),
                (remapped, "correctable", reading.remapped_correctable),
                (remapped, "uncorrectable", reading.remapped_uncorrectable),
                (remap_state, "pending", reading.remap_pending),
                (remap_state, "failure", reading.remap_failure),
            ):
                if value is not None:
                    family.add_metric([*gpu, kind], float(value))
        told = set()
        for found in findings(host, now):
            where = "" if found.port is None else f"{host.name}:{found.port}"
            if (where, found.kind) not in told:
                told.add((where, found.kind))
                sign.add_metric([host.name, where, found.kind], 1.0)
    yield from (available, total, slope, eta, rss, rss_slope, readable, events, hits)
    yield from (ecc, remapped, remap_state, sign)


def _memory(host: HostState, available, total, slope, eta, rss, rss_slope) -> None:
    signs = host.signs
    if signs.memory:
        available.add_metric([host.name], signs.memory[-1][1] * BYTES_PER_KB)
    if signs.total_kb is not None:
        total.add_metric([host.name], signs.total_kb * BYTES_PER_KB)
    trend = memory_trend(host)
    if trend.steady and trend.slope_kb_s is not None:
        slope.add_metric([host.name], trend.slope_kb_s * BYTES_PER_KB)
    if trend.eta_s is not None:
        eta.add_metric([host.name], trend.eta_s)
    for server in host.servers.values():
        labels = [host.name, str(server.port), server.profile_name or ""]
        value = rss_kb(host, server.port)
        if value is not None:
            rss.add_metric(labels, value * BYTES_PER_KB)
        server_trend = rss_trend(host, server.port)
        if server_trend.steady and server_trend.slope_kb_s is not None:
            rss_slope.add_metric(labels, server_trend.slope_kb_s * BYTES_PER_KB)
