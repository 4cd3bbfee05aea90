"""The fleet as Prometheus metrics: a custom collector that reads the published views at scrape
time (nothing is copied between scrapes, so a scrape says what `status --json` says now).

Labels stay few and bounded: host, port, profile, GPU index, a status or verdict from a fixed
set, and who holds a GPU ("host:port", "free" or "other"). Never a PID, an argv or an error
text (those change with every restart; they are in /status)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

from prometheus_client.core import GaugeMetricFamily, InfoMetricFamily, Metric
from prometheus_client.registry import Collector

from sglconsole import __version__
from sglconsole.exporter.canary import canary_metrics, router_canary_metrics
from sglconsole.exporter.precursors import precursor_metrics
from sglconsole.state.fleet import FleetState, HostState, ServerState, Status

PREFIX = "sglconsole_"
MIB = 1024 * 1024
PROBE_VERDICTS = ("OK", "WRONG", "DEGENERATE", "SLOW", "ERROR")
SERVER_LABELS = ["host", "port", "profile"]
GPU_LABELS = ["host", "gpu"]

RestoreTimes = Callable[[], dict[tuple[str, int], float]]
"""(host, port) -> when its last restore ended well (epoch seconds), as far as known here."""


def _gauge(name: str, doc: str, labels: list[str], unit: str = "") -> GaugeMetricFamily:
    return GaugeMetricFamily(PREFIX + name, doc, labels=labels, unit=unit)


def server_labels(server: ServerState) -> list[str]:
    return [server.host, str(server.port), server.profile_name or ""]


class FleetCollector(Collector):
    def __init__(
        self,
        fleet: FleetState,
        *,
        clock: Callable[[], float] = time.time,
        restores: RestoreTimes | None = None,
    ):
        self.fleet = fleet
        self.clock = clock
        self.restores = restores or dict

    def describe(self) -> list[Metric]:
        return []  # the families depend on the fleet: registering must not run a collection

    def collect(self) -> Iterator[Metric]:
        began = time.perf_counter()
        now = self.clock()
        hosts = list(self.fleet.hosts.values())
        yield from self._hosts(hosts)
        yield from self._gpus(hosts)
        servers = [server for host in hosts for server in host.servers.values()]
        yield from self._servers(servers, now)
        yield from self._routes(servers)
        yield from canary_metrics(servers, server_labels, SERVER_LABELS, now)
        yield from router_canary_metrics(self.fleet.routers.values(), now)
        yield from precursor_metrics(hosts, now)  # the signs before an outage (its own module)
        info = InfoMetricFamily(PREFIX + "exporter", "The sglconsole exporter's version")
        info.add_metric([], {"version": __version__})
        yield info
        took = _gauge(
            "exporter_collect_seconds",
            "How long this scrape took to read the fleet's published views",
            [],
        )
        took.add_metric([], time.perf_counter() - began)
        yield took

    # ---------------------------------------------------------------- hosts

    def _hosts(self, hosts: list[HostState]) -> Iterator[Metric]:
        host_up = _gauge(
            "host_up", "1 when the console's SSH session to the host is up, else 0", ["host"]
        )
        reach = _gauge(
            "host_reachable",
            "The host's reachability as a state set: reachable, unreachable or connecting "
            "(1 for the current one)",
            ["host", "state"],
        )
        error = _gauge(
            "host_error",
            "1 while the host's connection has an error (its text is in /status), else 0",
            ["host"],
        )
        gpu_error = _gauge(
            "host_gpu_error", "1 while nvidia-smi on the host fails (text in /status)", ["host"]
        )
        since = _gauge(
            "host_state_change_timestamp_seconds",
            "When the host last became reachable or unreachable (or changed its error)",
            ["host"],
        )
        for host in hosts:
            state = {True: "reachable", False: "unreachable"}.get(host.reachable, "connecting")
            host_up.add_metric([host.name], 1.0 if host.reachable else 0.0)
            for option in ("reachable", "unreachable", "connecting"):
                reach.add_metric([host.name, option], float(option == state))
            error.add_metric([host.name], float(bool(host.error)))
            gpu_error.add_metric([host.name], float(bool(host.gpu_error)))
            if host.since is not None:
                since.add_metric([host.name], host.since)
        yield from (host_up, reach, error, gpu_error, since)

    # ----------------------------------------------------------------- GPUs

    def _gpus(self, hosts: list[HostState]) -> Iterator[Metric]:
        util = _gauge("gpu_utilization_ratio", "GPU utilisation (nvidia-smi), 0 to 1", GPU_LABELS)
        used = _gauge("gpu_memory_used_bytes", "GPU memory in use", GPU_LABELS)
        total = _gauge("gpu_memory_total_bytes", "GPU memory in all", GPU_LABELS)
        temp = _gauge("gpu_temperature_celsius", "GPU temperature", GPU_LABELS)
        power = _gauge("gpu_power_watts", "GPU power draw", GPU_LABELS)
        info = InfoMetricFamily(PREFIX + "gpu", "The GPU's model name", labels=GPU_LABELS)
        held = _gauge(
            "gpu_held_by",
            'Who holds the GPU: server="host:port" of a server, "other" (a process no server '
            'accounts for), or "free"',
            [*GPU_LABELS, "server"],
        )
        for host in hosts:
            if not host.reachable:
                continue  # the last numbers of a host we cannot see are not now
            holders = gpu_holders(host)
            for gpu in host.gpus:
                labels = [host.name, str(gpu.index)]
                for family, value in (
                    (util, None if gpu.util_gpu is None else gpu.util_gpu / 100),
                    (used, None if gpu.mem_used_mib is None else gpu.mem_used_mib * MIB),
                    (total, None if gpu.mem_total_mib is None else gpu.mem_total_mib * MIB),
                    (temp, gpu.temperature_c),
                    (power, gpu.power_draw_w),
                ):
                    if value is not None:
                        family.add_metric(labels, float(value))
                if gpu.name:
                    info.add_metric(labels, {"name": gpu.name})
                for holder in sorted(holders.get(gpu.index, {"free"})):
                    held.add_metric([*labels, holder], 1.0)
        yield from (util, used, total, temp, power, info, held)

    # -------------------------------------------------------------- servers

    def _servers(self, servers: list[ServerState], now: float) -> Iterator[Metric]:
        status = _gauge(
            "server_status",
            "The server's status as a state set (1 for the current one): "
            + ", ".join(state.value for state in Status),
            [*SERVER_LABELS, "status"],
        )
        tok_s = _gauge(
            "server_decode_tokens_per_second",
            "Decode tok/s of the current process (its newest busy decode line, else /metrics)",
            SERVER_LABELS,
        )
        accept = _gauge(
            "server_accept_length", "Speculative decoding's accept length", SERVER_LABELS
        )
        running = _gauge("server_running_requests", "Requests being decoded", SERVER_LABELS)
        queued = _gauge("server_queued_requests", "Requests waiting in the queue", SERVER_LABELS)
        usage = _gauge("server_token_usage_ratio", "KV cache token usage, 0 to 1", SERVER_LABELS)
        drift = _gauge(
            "server_drift",
            "1 when the running argv/env differs from the profile, 0 when it matches "
            "(absent until compared)",
            SERVER_LABELS,
        )
        differences = _gauge(
            "server_drift_differences",
            "How many flags or environment variables differ from the profile",
            SERVER_LABELS,
        )
        probe = _gauge(
            "server_probe_verdict",
            "The last probe's verdict of the current process as a state set: "
            + ", ".join(PROBE_VERDICTS),
            [*SERVER_LABELS, "verdict"],
        )
        started = _gauge(
            "server_start_time_seconds",
            "When the server's current process started (epoch seconds)",
            SERVER_LABELS,
        )
        restored = _gauge(
            "server_seconds_since_restore",
            "Seconds since the last successful restore of this server (from this machine's audit "
            "log; absent when none is known)",
            SERVER_LABELS,
        )
        managed = _gauge(
            "server_managed",
            "1 for a server configured in hosts.yaml, 0 for one found running",
            SERVER_LABELS,
        )
        restores = self.restores()
        for server in servers:
            labels = server_labels(server)
            view, load = server.view, server.view.load
            for option in Status:
                status.add_metric([*labels, option.value], float(option == view.status))
            managed.add_metric(labels, float(server.managed))
            for family, value in (
                (tok_s, view.tok_s),
                (accept, load.accept_len if load else None),
                (running, load.running_req if load else None),
                (queued, load.queue_req if load else None),
                (usage, load.token_usage if load else None),
                (started, view.started),
                (differences, view.drift_count),
                (drift, None if view.drift_differs is None else float(view.drift_differs)),
            ):
                if value is not None:
                    family.add_metric(labels, float(value))
            verdict = probe_verdict(server)
            if verdict is not None:
                for option in PROBE_VERDICTS:
                    probe.add_metric([*labels, option], float(option == verdict))
            when = restores.get((server.host, server.port))
            if when is not None:
                restored.add_metric(labels, max(0.0, now - when))
        yield from (status, managed, tok_s, accept, running, queued, usage, drift, differences)
        yield from (probe, started, restored)

    # --------------------------------------------------------------- routes

    def _routes(self, servers: list[ServerState]) -> Iterator[Metric]:
        """A server's place in each router in front of it, as its published view says."""
        labels = [*SERVER_LABELS, "router"]
        problem = _gauge(
            "server_route_problem",
            "1 while the server's place in this router is a problem (serving nobody, in router"
            " but down, breaker open), else 0; the `routing` label says which",
            [*labels, "routing"],
        )
        breaker = _gauge(
            "server_router_breaker_open",
            "1 while the SMG gateway's circuit breaker for this server is open (it sends it"
            " nothing), 0 closed or half-open; absent when not known (no metrics_port)",
            labels,
        )
        inflight = _gauge(
            "server_router_inflight_requests",
            "Requests in flight to this server as the SMG gateway's /metrics counts them",
            labels,
        )
        for server in servers:
            for route in server.view.routes:
                row = [*server_labels(server), route.router]
                problem.add_metric([*row, route.routing.value], float(route.problem))
                if route.breaker is not None:
                    breaker.add_metric(row, float(route.breaker == "open"))
                if route.inflight is not None:
                    inflight.add_metric(row, float(route.inflight))
        yield from (problem, breaker, inflight)


def gpu_holders(host: HostState) -> dict[int, set[str]]:
    """GPU index -> "host:port" of the servers using it, "other" for processes none accounts for."""
    holders: dict[int, set[str]] = {}
    for server in host.servers.values():
        if server.process is not None:
            for index in server.process.gpus:
                holders.setdefault(index, set()).add(f"{host.name}:{server.port}")
    if host.view is not None:
        by_uuid = {gpu.uuid: gpu.index for gpu in host.gpus if gpu.uuid}
        for app in host.view.unaccounted:
            index = by_uuid.get(app.gpu_uuid)
            if index is not None:
                holders.setdefault(index, set()).add("other")
    return holders


def probe_verdict(server: ServerState) -> str | None:
    """The last probe's verdict, if it judged the process that runs now."""
    probe, process = server.probe, server.process
    if probe is None or probe.verdict not in PROBE_VERDICTS or process is None:
        return None
    return probe.verdict if probe.pid is None or probe.pid == process.main.pid else None
