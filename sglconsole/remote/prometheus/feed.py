"""The fleet read from Prometheus instead of one SSH session per host (hosts.yaml
`source: {prometheus: URL}`): every `interval` seconds a handful of instant queries, whatever the
fleet's size, published as the hosts' and servers' views through the fleet's one door
(FleetState.publish, with this source's deriver), as the SSH monitor publishes its own.

Two kinds of series, both optional:
- SGLang's own (`sglang:*` of servers run with `--enable-metrics`, `up`, dcgm-exporter's GPUs):
  fed into the state as the SSH monitor feeds it (remote.prom_sglang), statuses derived by
  state.server_view: UP, DOWN (Prometheus cannot scrape it), UNMANAGED, tok/s, load, GPUs;
- `sglconsole exporter`'s (remote.prom_exporter): where a server has them, its status, drift and
  numbers are the exporter's (it saw argv, logs and probes).
Prometheus unreachable: every view keeps its last numbers, marked stale since the last good read,
with the error as the reason and the status UNKNOWN — never silently old."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from dataclasses import replace
from functools import partial

from sglconsole.config.schema import Source
from sglconsole.core.processes import ProcessView
from sglconsole.remote.prometheus import exporter_series as prom_exporter
from sglconsole.remote.prometheus import sglang_series as prom_series
from sglconsole.remote.prometheus.api import PrometheusApi, PrometheusError
from sglconsole.remote.prometheus.exporter_series import (
    SOURCE,
    ExporterHost,
    exporter_gpus,
    exporter_view,
)
from sglconsole.remote.prometheus.sglang_feed import dcgm_gpus, feed_server
from sglconsole.remote.prometheus.sglang_series import HostReading
from sglconsole.state.fleet import FleetState
from sglconsole.state.model import HostState, ServerState, ServerView, Status
from sglconsole.state.routing import derive_routes
from sglconsole.state.server_view import derive_view

log = logging.getLogger(__name__)

SPARK = 120


class PrometheusFeed:
    def __init__(self, source: Source, fleet: FleetState, *, timeout: float = 10.0):
        self.source = source
        self.url = source.prometheus.rstrip("/")
        self.fleet = fleet
        self.interval = source.interval
        self.api = PrometheusApi(self.url, timeout=timeout)
        self.queries = (
            prom_exporter.QUERY,
            prom_series.SGLANG_AND_UP_QUERY,
            prom_series.rate_query(source.rate_window),
            prom_series.GPU_QUERY,
        )
        self.answered = False
        """True once a read succeeded or failed: the fleet says what is known."""
        self.error: str | None = None
        self.read_at: float | None = None
        """When Prometheus last answered every query."""
        self.unknown_addresses: set[str] = set()
        """Addresses in SGLang's series that name no host of hosts.yaml (not shown)."""
        self._spark: dict[tuple[str, int], deque[float]] = {}
        self._good: dict[tuple[str, int], ServerView] = {}
        self._note = (
            f"read from Prometheus ({self.url}): no process table, argv or log without SSH",
        )
        for host in fleet.hosts.values():
            host.source = SOURCE

    async def run(self) -> None:
        while True:
            began = time.monotonic()
            await self.poll()
            await asyncio.sleep(self.wait_after(time.monotonic() - began))

    def wait_after(self, took: float) -> float:
        """Reads START `interval` apart: a read that took long (1,000 servers, a busy Prometheus)
        does not push every later one back, nor delay what the next scrape brought."""
        return max(0.0, self.interval - took)

    async def poll(self) -> None:
        now = time.time()
        try:
            answers = await asyncio.gather(*(self.api.query(query) for query in self.queries))
        except PrometheusError as exc:
            if self.error != str(exc):
                log.warning("%s", exc)
            self.error = str(exc)
            self._stale(now)
        else:
            exported, sglang_and_up, rates, gpus = answers
            sglang, up_series = prom_series.split_up(sglang_and_up)
            readings, unknown = prom_series.group(
                self.fleet.config,
                self.source.labels,
                sglang=sglang,
                rates=rates,
                up=up_series,
                gpus=gpus,
            )
            if unknown - self.unknown_addresses:  # said once, not every read
                log.info("SGLang series of hosts not in hosts.yaml, not shown: %s", sorted(unknown))
            self.unknown_addresses = unknown
            self.error, self.read_at = None, now
            self._publish(prom_exporter.gather(exported), readings, now)
        self.answered = True

    async def close(self) -> None:
        await self.api.close()

    # -------------------------------------------------------------- publish

    def _publish(
        self, exported: dict[str, ExporterHost], readings: dict[str, HostReading], now: float
    ) -> None:
        for name, state in self.fleet.hosts.items():
            if state.source != SOURCE:
                continue  # watched over SSH while it is looked at (remote.ssh_on_demand)
            by_exporter = exported.get(name)
            if by_exporter is not None and by_exporter.state is None:
                by_exporter = None
            reading = readings.get(name)
            self._host(state, by_exporter, reading, now)
            for port in {
                *(by_exporter.servers if by_exporter else ()),
                *(reading or _NONE).servers,
            }:
                if port not in state.servers:  # running there, not in hosts.yaml: UNMANAGED
                    state.servers[port] = ServerState(name, port, None, None, None)
            for port, server in state.servers.items():
                feed_server(server, reading.servers.get(port) if reading else None, now, self.url)
            self.fleet.publish(name, now, derive=partial(self._view, by_exporter))
            for port, server in state.servers.items():
                self._good[(name, port)] = server.view

    def _view(
        self,
        exported: ExporterHost | None,
        server: ServerState,
        host: HostState,
        now: float,
        generation: int,
    ) -> ServerView:
        """A server's view as read: the exporter's where it has one, else derived from SGLang's
        series like an SSH-read server's (state.server_view)."""
        data = exported.servers.get(server.port) if exported else None
        if data is None or data.status is None:
            return derive_view(server, host, now, generation, self.fleet.routers)
        spark = self._spark.setdefault((host.name, server.port), deque(maxlen=SPARK))
        view = exporter_view(server, data, spark, now, generation)
        routes = derive_routes(server, host, self.fleet.routers, server.view.routes, now)
        return replace(view, routes=routes)

    def _host(
        self, state: HostState, exported: ExporterHost | None, reading: HostReading | None, now
    ) -> None:
        if state.view is None:
            state.view = ProcessView((), (), (), False, self._note)
        if exported is not None:  # the exporter watches it over SSH: its word
            state.reachable = {"reachable": True, "unreachable": False}.get(exported.state)
            state.error = {
                "unreachable": "unreachable from the exporter (its /status says why)",
                "connecting": "the exporter is connecting to it",
            }.get(exported.state or "")
            state.gpus = exporter_gpus(exported) if state.reachable else []
        else:
            # Prometheus scrapes it (its scrapes may fail: those servers are DOWN, with why)
            seen = reading is not None and bool(reading.gpus or reading.servers)
            state.reachable = True if seen else None
            state.error = None if seen else self._missing()
            state.gpus = dcgm_gpus(reading) if reading is not None else []
        if state.reachable:
            state.gpu_time = now

    def _missing(self) -> str:
        return (
            f"no series name it in Prometheus ({self.url}): is it scraped (SGLang's "
            "--enable-metrics, dcgm-exporter or sglconsole exporter), with labels as "
            "hosts.yaml's source.labels say?"
        )

    def _stale(self, now: float) -> None:
        """Prometheus did not answer: the last numbers stay, marked stale, the status UNKNOWN."""
        for name, state in self.fleet.hosts.items():
            if state.source != SOURCE:
                continue
            state.error = self.error
            self.fleet.publish(name, now, derive=self._stale_view)

    def _stale_view(
        self, server: ServerState, host: HostState, now: float, generation: int
    ) -> ServerView:
        good = self._good.get((host.name, server.port))
        routes = server.view.routes  # the routers are read apart (remote.router_feed)
        if good is None or self.read_at is None:
            reason = self.error or "Prometheus did not answer"
            return ServerView(Status.UNKNOWN, reason, generation=generation, at=now, routes=routes)
        return replace(
            good,
            routes=routes,
            status=Status.UNKNOWN,
            reason=f"{self.error}; shown: what it said {now - self.read_at:.0f} s ago "
            f"({good.status.value}: {good.reason})",
            stale_since=self.read_at,
            generation=generation,
            at=now,
        )


_NONE = HostReading()
