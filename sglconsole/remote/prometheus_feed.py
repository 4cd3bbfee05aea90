"""The fleet read from Prometheus instead of one SSH session per host (hosts.yaml
`source: {prometheus: URL}`): one instant query every few seconds for the `sglconsole_` series
that `sglconsole exporter` serves, published as the hosts' and servers' views.

What Prometheus holds is what the exporter saw: statuses, tok/s, load, drift flags, GPUs. Not
logs, argv or reasons in words (they are no labels): those stay with the exporter's /status and
with the actions, which still reach their host over SSH."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from dataclasses import dataclass, field

import httpx

from sglconsole.core.nvidia_smi import GpuSample
from sglconsole.state.fleet import FleetState
from sglconsole.state.model import Load, ServerState, ServerView, Status

log = logging.getLogger(__name__)

QUERY = '{__name__=~"sglconsole_(host|gpu|server)_.+"}'
MIB = 1024 * 1024
SPARK = 120
SOURCE = "prometheus"


@dataclass
class _Server:
    fields: dict[str, float] = field(default_factory=dict)
    status: str | None = None
    at: float = 0.0


@dataclass
class _Host:
    state: str | None = None
    gpus: dict[int, dict[str, float | str]] = field(default_factory=dict)
    servers: dict[int, _Server] = field(default_factory=dict)


class PrometheusFeed:
    def __init__(self, url: str, fleet: FleetState, *, interval: float = 5.0, timeout=10.0):
        self.url = url.rstrip("/")
        self.fleet = fleet
        self.interval = interval
        self.client = httpx.AsyncClient(timeout=timeout)
        self.answered = False
        """True once a read succeeded or failed: the fleet says what is known."""
        self.error: str | None = None
        self._spark: dict[tuple[str, int], deque[float]] = {}
        for host in fleet.hosts.values():
            host.source = SOURCE

    async def run(self) -> None:
        while True:
            await self.poll()
            await asyncio.sleep(self.interval)

    async def poll(self) -> None:
        try:
            reply = await self.client.get(self.url + "/api/v1/query", params={"query": QUERY})
            reply.raise_for_status()
            body = reply.json()
            if body.get("status") != "success":
                raise ValueError(body.get("error") or "query failed")
            series = body["data"]["result"]
        except (httpx.HTTPError, ValueError, KeyError, TypeError) as exc:
            self.error = f"prometheus {self.url}: {exc or type(exc).__name__}"
            log.warning("%s", self.error)
            self._publish({}, time.time())
        else:
            self.error = None
            self._publish(gather(series), time.time())
        self.answered = True

    async def close(self) -> None:
        await self.client.aclose()

    # -------------------------------------------------------------- publish

    def _publish(self, seen: dict[str, _Host], now: float) -> None:
        self.fleet.generation += 1
        generation = self.fleet.generation
        for name, state in self.fleet.hosts.items():
            found = seen.get(name)
            state.source = SOURCE
            state.reachable = {"reachable": True, "unreachable": False}.get(
                found.state if found else None
            )
            state.error = self._host_error(found)
            state.gpus = _gpus(found) if found and state.reachable else []
            for port in found.servers if found else ():
                if port not in state.servers:  # running there, not in hosts.yaml
                    state.servers[port] = ServerState(name, port, None, None, None)
            for port, server in state.servers.items():
                data = found.servers.get(port) if found else None
                server.view = self._view(server, data, state.error, now, generation)
            self.fleet.changed(name, None)
            for port in state.servers:
                self.fleet.changed(name, port)

    def _host_error(self, found: _Host | None) -> str | None:
        if self.error:
            return self.error
        if found is None or found.state is None:
            return f"not in Prometheus ({self.url}): is the exporter scraped?"
        if found.state == "unreachable":
            return "unreachable from the exporter (its /status says why)"
        return None

    def _view(
        self, server: ServerState, data: _Server | None, error: str | None, now: float, gen: int
    ) -> ServerView:
        if data is None or data.status is None:
            reason = error or "not in Prometheus"
            return ServerView(Status.UNKNOWN, reason, generation=gen, at=now)
        status = Status(data.status) if data.status in Status.__members__ else Status.UNKNOWN
        values = data.fields
        tok_s = values.get("decode_tokens_per_second")
        spark = self._spark.setdefault((server.host, server.port), deque(maxlen=SPARK))
        if tok_s is not None:
            spark.append(tok_s)
        load_values = [
            values.get(k)
            for k in ("accept_length", "running_requests", "queued_requests", "token_usage_ratio")
        ]
        load = None
        if any(v is not None for v in load_values):
            accept, running, queued, usage = load_values
            load = Load(accept, _int(running), _int(queued), usage, SOURCE)
        drift = values.get("drift")
        count = values.get("drift_differences")
        return ServerView(
            status,
            f"as the exporter saw it {max(0.0, now - data.at):.0f} s ago (Prometheus)",
            None,
            values.get("start_time_seconds"),
            tok_s,
            SOURCE if tok_s is not None else None,
            load,
            tuple(spark),
            None if drift is None else bool(drift),
            _int(count),
            gen,
            now,
        )


def gather(series: list[dict]) -> dict[str, _Host]:
    """Prometheus's instant vector -> per host: reachability, GPUs, servers."""
    hosts: dict[str, _Host] = {}
    for one in series:
        labels, (at, text) = one["metric"], one["value"]
        name, host = labels.get("__name__", ""), labels.get("host")
        if host is None:
            continue
        try:
            value = float(text)
        except ValueError:
            continue
        entry = hosts.setdefault(host, _Host())
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
            server = entry.servers.setdefault(int(labels["port"]), _Server())
            server.at = max(server.at, float(at))
            key = name.removeprefix("sglconsole_server_")
            if key == "status":
                if value == 1:
                    server.status = labels.get("status")
            else:
                server.fields[key] = value
    return hosts


def _gpus(found: _Host) -> list[GpuSample]:
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
