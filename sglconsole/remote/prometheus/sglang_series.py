"""SGLang's own series (`sglang:*`, servers run with `--enable-metrics`), Prometheus's `up` and
dcgm-exporter's GPU series, as Prometheus answers them, grouped by the hosts and ports of
hosts.yaml through `source.labels` (default: the `instance` label, "address:port").

Few queries per read, whatever the fleet's size: one regex on `__name__` per family."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from sglconsole.config import Config
from sglconsole.config.schema import SourceLabels
from sglconsole.core.metrics import NAMES, PREFIX

_SGLANG_NAMES = PREFIX + "(" + "|".join(NAMES) + ")"
SGLANG_QUERY = '{__name__=~"' + _SGLANG_NAMES + '"}'
UP_QUERY = "up"
SGLANG_AND_UP_QUERY = '{__name__=~"' + UP_QUERY + "|" + _SGLANG_NAMES + '"}'
"""Both in one evaluation: asked apart, a scrape that failed between the two answers showed a
server `up` with none of its series (stale then), so UP with its numbers unknown."""
# dcgm-exporter's default counters (etc/default-counters.csv): %, MiB, MiB, C, W, MiB
GPU_FIELDS = {
    "DCGM_FI_DEV_GPU_UTIL": "util",
    "DCGM_FI_DEV_FB_USED": "used_mib",
    "DCGM_FI_DEV_FB_FREE": "free_mib",
    "DCGM_FI_DEV_GPU_TEMP": "temperature",
    "DCGM_FI_DEV_POWER_USAGE": "power",
    "DCGM_FI_DEV_FB_RESERVED": "reserved_mib",  # newer dcgm-exporters: part of the total
}
GPU_QUERY = '{__name__=~"' + "|".join(GPU_FIELDS) + '"}'


def rate_query(window_s: float) -> str:
    """Decode tok/s between each server's last two scrapes (SGLang's `gen_throughput` gauge
    freezes at its last busy figure when idle: never used for tok/s)."""
    return f"irate({PREFIX}generation_tokens_total[{max(1, round(window_s))}s])"


@dataclass
class Scraped:
    """One SGLang server as Prometheus has it."""

    address: str
    """What Prometheus calls it (the host label's value, e.g. "10.0.0.5:30000")."""
    up: bool | None = None
    """Prometheus's last scrape of it answered (None: no `up` series names it)."""
    samples: dict[str, list[float]] = field(default_factory=dict)
    """sglang:NAME -> one value per rank (core.metrics.combine sums them)."""
    rate: float | None = None


@dataclass
class HostReading:
    servers: dict[int, Scraped] = field(default_factory=dict)
    gpus: dict[int, dict[str, float | str]] = field(default_factory=dict)


def split_up(result: list) -> tuple[list, list]:
    """SGLANG_AND_UP_QUERY's answer as (the sglang:* series, the `up` series)."""
    sglang, up = [], []
    for one in result:
        metric = one.get("metric") if isinstance(one, dict) else None
        named = metric.get("__name__") if isinstance(metric, dict) else None
        (up if named == UP_QUERY else sglang).append(one)
    return sglang, up


def host_index(config: Config) -> dict[str, str]:
    """Every name a host goes by in hosts.yaml (its name, address, servers' http_address) ->
    its name; lowercase. A loopback http_address names no host (every host has one)."""
    index: dict[str, str] = {}
    for name, host in config.hosts.items():
        for server in host.servers:
            if not server.http_address.startswith(("127.", "localhost", "::1")):
                index.setdefault(server.http_address.lower(), name)
    for name, host in config.hosts.items():
        index[host.address.lower()] = name
    for name in config.hosts:
        index[name.lower()] = name
    return index


def split_address(value: str) -> tuple[str, int | None]:
    """ "host:port", "[v6]:port" or a bare host -> (host, port or None)."""
    if value.startswith("["):
        host, _, rest = value[1:].partition("]")
        port = rest.removeprefix(":")
        return host, int(port) if port.isdigit() else None
    host, sep, port = value.rpartition(":")
    if sep and port.isdigit() and ":" not in host:
        return host, int(port)
    return value, None


def locate(
    labels: dict[str, str], host_label: str, port_label: str | None, index: dict[str, str]
) -> tuple[str, int | None] | None:
    """(host name in hosts.yaml, port) a series belongs to, or None when no host is named."""
    raw = labels.get(host_label)
    if not raw:
        return None
    address, port = split_address(raw)
    host = index.get(address.lower()) or index.get(raw.lower())
    if host is None:
        return None
    if port_label is not None and port_label != host_label:
        text = labels.get(port_label, "")
        port = split_address(text)[1] if ":" in text else int(text) if text.isdigit() else None
    return host, port


def group(
    config: Config,
    labels: SourceLabels,
    *,
    sglang: list[dict],
    rates: list[dict],
    up: list[dict],
    gpus: list[dict],
) -> tuple[dict[str, HostReading], set[str]]:
    """Per host of hosts.yaml: its SGLang servers and GPUs; and the addresses that name no host."""
    index = host_index(config)
    hosts: dict[str, HostReading] = {}
    unknown: set[str] = set()

    known: dict[tuple[str | None, str | None], Scraped | None] = {}

    def server_of(one: dict) -> Scraped | None:
        metric = one["metric"]
        key = (metric.get(labels.host), metric.get(labels.port))
        if key in known:  # a server has a dozen series: locate it once
            return known[key]
        found = locate(metric, labels.host, labels.port, index)
        if found is None or found[1] is None:
            unknown.add(metric.get(labels.host, "?"))
            known[key] = None
            return None
        reading = hosts.setdefault(found[0], HostReading())
        known[key] = reading.servers.setdefault(found[1], Scraped(key[0] or ""))
        return known[key]

    for one in sglang:
        value = _number(one)
        server = server_of(one) if value is not None else None
        if server is not None:
            name = one["metric"]["__name__"].removeprefix(PREFIX)
            server.samples.setdefault(name, []).append(value)
    for one in rates:
        value = _number(one)
        server = server_of(one) if value is not None else None
        if server is not None:
            server.rate = value + (server.rate or 0.0)  # several ranks or engines: their sum
    for one in up:
        _up(one, hosts, labels, index, config)
    for one in gpus:
        _gpu(one, hosts, labels, index)
    return hosts, unknown - {"?"}


def _up(
    one: dict, hosts: dict[str, HostReading], labels: SourceLabels, index, config: Config
) -> None:
    """`up` of every job: it counts for a port where hosts.yaml has a server or SGLang's series
    were seen (an exporter on the same host is no SGLang server)."""
    found = locate(one["metric"], labels.host, labels.port, index)
    value = _number(one)
    if found is None or found[1] is None or value is None:
        return
    host, port = found
    reading = hosts.get(host)
    configured = any(server.port == port for server in config.hosts[host].servers)
    if not configured and (reading is None or port not in reading.servers):
        return
    reading = hosts.setdefault(host, HostReading())
    server = reading.servers.setdefault(port, Scraped(one["metric"].get(labels.host, "")))
    server.up = bool(value == 1) or bool(server.up)


def _gpu(one: dict, hosts: dict[str, HostReading], labels: SourceLabels, index) -> None:
    metric = one["metric"]
    found = locate(metric, labels.gpu_host, None, index)
    text, value = metric.get(labels.gpu_index, ""), _number(one)
    if found is None or not text.isdigit() or value is None:
        return
    gpu = hosts.setdefault(found[0], HostReading()).gpus.setdefault(int(text), {})
    gpu[GPU_FIELDS[metric["__name__"]]] = value
    for key, label in (("name", "modelName"), ("uuid", "UUID")):
        if metric.get(label):
            gpu[key] = metric[label]


def _number(one: dict) -> float | None:
    try:
        value = float(one["value"][1])
    except (KeyError, IndexError, TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None
