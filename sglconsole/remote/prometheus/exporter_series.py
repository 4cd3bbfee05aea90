"""What `sglconsole exporter` publishes, read back from Prometheus: its `sglconsole_*` series per
host (reachability, GPUs, servers with their status, drift and numbers). When they are there they
win over SGLang's own series: the exporter saw argv (drift), logs (SLOW, LOOPING) and probes."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from sglconsole.core.nvidia_smi import GpuSample
from sglconsole.state.model import Load, ServerState, ServerView, Status

QUERY = '{__name__=~"sglconsole_(host|gpu|server)_.+"}'
MIB = 1024 * 1024
SOURCE = "prometheus"


@dataclass
class ExporterServer:
    fields: dict[str, float] = field(default_factory=dict)
    status: str | None = None
    sampled_at: float = 0.0


@dataclass
class ExporterHost:
    state: str | None = None
    gpus: dict[int, dict[str, float | str]] = field(default_factory=dict)
    servers: dict[int, ExporterServer] = field(default_factory=dict)


def exporter_view(
    server: ServerState, data: ExporterServer, spark: deque[float], now: float, gen: int
) -> ServerView:
    """The exporter's view of a server, as it published it."""
    status = Status(data.status) if data.status in Status.__members__ else Status.UNKNOWN
    values = data.fields
    tok_s = values.get("decode_tokens_per_second")
    if tok_s is not None:
        spark.append(tok_s)
    load_values = [
        values.get(name)
        for name in ("accept_length", "running_requests", "queued_requests", "token_usage_ratio")
    ]
    load = None
    if any(value is not None for value in load_values):
        accept, running, queued, usage = load_values
        load = Load(
            accept_len=accept,
            running_req=_int(running),
            queue_req=_int(queued),
            token_usage=usage,
            source=SOURCE,
        )
    drift = values.get("drift")
    count = values.get("drift_differences")
    return ServerView(
        status,
        f"as the exporter saw it {max(0.0, now - data.sampled_at):.0f} s ago (Prometheus)",
        started=values.get("start_time_seconds"),
        tok_s=tok_s,
        tok_s_source=SOURCE if tok_s is not None else None,
        load=load,
        throughput=tuple(spark),
        drift_differs=None if drift is None else bool(drift),
        drift_count=_int(count),
        generation=gen,
        at=now,
    )


def gather(series: list[dict]) -> dict[str, ExporterHost]:
    """Prometheus's instant vector -> per host: reachability, GPUs, servers."""
    hosts: dict[str, ExporterHost] = {}
    for one in series:
        labels, (sampled_at, text) = one["metric"], one["value"]
        name, host = labels.get("__name__", ""), labels.get("host")
        if host is None:
            continue
        try:
            value = float(text)
        except ValueError:
            continue
        entry = hosts.setdefault(host, ExporterHost())
        if name == "sglconsole_host_reachable":
            if value == 1:
                entry.state = labels.get("state")
        elif name.startswith("sglconsole_gpu_") and labels.get("gpu", "").isdigit():
            gpu = entry.gpus.setdefault(int(labels["gpu"]), {})
            if name == "sglconsole_gpu_info":
                gpu["name"] = labels.get("name", "")
            else:
                gpu[name.removeprefix("sglconsole_gpu_")] = value
        elif name.startswith("sglconsole_server_") and labels.get("port", "").isdigit():
            server = entry.servers.setdefault(int(labels["port"]), ExporterServer())
            server.sampled_at = max(server.sampled_at, float(sampled_at))
            key = name.removeprefix("sglconsole_server_")
            if key == "status":
                if value == 1:
                    server.status = labels.get("status")
            else:
                server.fields[key] = value
    return hosts


def exporter_gpus(found: ExporterHost) -> list[GpuSample]:
    out = []
    for index, values in sorted(found.gpus.items()):

        def number(key: str, scale: float = 1.0, values=values) -> float | None:
            value = values.get(key)
            return None if not isinstance(value, float) else value * scale

        util = number("utilization_ratio", 100)
        used, total = number("memory_used_bytes", 1 / MIB), number("memory_total_bytes", 1 / MIB)
        temp = number("temperature_celsius")
        name = values.get("name")
        out.append(
            GpuSample(
                index,
                name=name if isinstance(name, str) else None,
                util_gpu=_int(util),
                mem_used_mib=_int(used),
                mem_total_mib=_int(total),
                temperature_c=_int(temp),
                power_draw_w=number("power_watts"),
            )
        )
    return out


def _int(value: float | None) -> int | None:
    return None if value is None else round(value)
