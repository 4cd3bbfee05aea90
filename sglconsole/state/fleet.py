"""Fleet state: the live model every view reads, with one writer (the monitor, plus actions marking
what they do). One door publishes what the views show: `FleetState.publish` derives each server's
view (state.server_view, or the host's source's own deriver: Prometheus, a recording), counts the
generation and calls the subscribers with (host, port|None) so a UI can batch its refreshes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

from sglconsole.config import Config
from sglconsole.config.routers import routes_of
from sglconsole.core.sglang_log.record import LogRecord
from sglconsole.state.canary import AnswerBook
from sglconsole.state.model import (  # noqa: F401 - the names every view imports from here
    HISTORY,
    LOG_LINES,
    SEVERITY,
    HostState,
    Load,
    Sample,
    ServerState,
    ServerView,
    Status,
    StopLookup,
    no_stops,
    worst,
)
from sglconsole.state.routing import RouterState, derive_routes
from sglconsole.state.server_view import derive_view

Listener = Callable[[str, int | None], None]
"""Told (host, port) after a publication: port None when every server of the host may differ."""
Deriver = Callable[[ServerState, HostState, float, int], ServerView]
"""(server, its host, now, generation) -> the view to publish for it."""


class FleetState:
    def __init__(self, config: Config, stops: StopLookup = no_stops):
        """stops: the operator's last stop of a server, if any (the audit log, read above)."""
        self.config = config
        self.stops = stops
        self.hosts: dict[str, HostState] = {}
        self._listeners: list[Listener] = []
        self.generation = 0
        self.answers = AnswerBook()
        """The first greedy canary answer per (profile, prompt) (state.canary)."""
        for name, host in config.hosts.items():
            state = HostState(name)
            for server in host.servers:
                state.servers[server.port] = ServerState(
                    name,
                    server.port,
                    server,
                    config.profiles.get(server.profile),
                    server.profile,
                    log_path=server.log,
                )
            self.hosts[name] = state
        self.routers: dict[str, RouterState] = {
            name: RouterState(name, router.url or f"{router.host}:{router.port}", {})
            for name, router in config.routers.items()
        }
        for host, port in (
            (name, server.port)
            for name, host_config in config.hosts.items()
            for server in host_config.servers
        ):
            for route in routes_of(config, host, port):
                self.routers[route.router].worker_urls[f"{host}:{port}"] = route.worker_url

    # ------------------------------------------------------------ listeners

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def _notify(self, host: str, port: int | None) -> None:
        for listener in list(self._listeners):
            listener(host, port)

    # --------------------------------------------------------------- access

    def server(self, host: str, port: int) -> ServerState | None:
        state = self.hosts.get(host)
        return state.servers.get(port) if state else None

    def all_servers(self) -> list[ServerState]:
        return [server for state in self.hosts.values() for server in state.servers.values()]

    def worst(self) -> Status:
        return worst(server.status for server in self.all_servers())

    # ------------------------------------------------------------- updating

    def publish(
        self,
        host: str,
        now: float | None = None,
        port: int | None = None,
        *,
        derive: Deriver | None = None,
    ) -> None:
        """The one door through which the views change: derive what every view shows of this
        host's servers, once, here, count a generation, and tell the subscribers.

        `port`: only that server changed (a server's view depends on it and its host alone, so a
        decode line re-derives one view, not every server's of the host); a port the host lacks
        re-derives them all. `derive`: where the views come from when not from this console's own
        reading of the host (the Prometheus source, a recording); without it, a host whose
        `source` publishes its views keeps them, its routes re-read (the routers are read here)."""
        now = time.time() if now is None else now
        hstate = self.hosts[host]
        self.generation += 1
        one = hstate.servers.get(port) if port is not None else None
        if derive is None:
            derive = self._routes_only if hstate.source is not None else self._derive
        for server in (one,) if one is not None else tuple(hstate.servers.values()):
            server.view = derive(server, hstate, now, self.generation)
        self._notify(host, port if one is not None else None)

    def _derive(
        self, server: ServerState, host: HostState, now: float, generation: int
    ) -> ServerView:
        server.stopped = self.stops(host.name, server.port) if server.process is None else None
        return derive_view(server, host, now, generation, self.routers)

    def _routes_only(
        self, server: ServerState, host: HostState, now: float, generation: int
    ) -> ServerView:
        routes = derive_routes(server, host, self.routers, server.view.routes, now)
        if routes == server.view.routes:
            return server.view
        return replace(server.view, routes=routes, generation=generation)

    def routed_hosts(self, router: str) -> set[str]:
        """The hosts whose servers ROUTER fronts: their views change with its worker list."""
        state = self.routers.get(router)
        return {key.rsplit(":", 1)[0] for key in state.worker_urls} if state else set()


def record_decode(server: ServerState, record: LogRecord, now: float) -> None:
    """One decode line of the server's log, read at `now`: a sample (core.decode_lines says
    whether it follows idle, by its rank's previous line)."""
    if server.log_pid in server.replaced_pids:
        return  # the old start's last lines, read late: its numbers are gone with it
    when = record.time.timestamp() if record.time is not None else now
    after_idle = server.decode_watch.feed(record, when)
    server.history.append(
        Sample(
            time=when,
            gen_throughput=record.gen_throughput,
            accept_len=record.accept_len,
            accept_rate=record.accept_rate,
            running_req=record.running_req,
            queue_req=record.queue_req,
            token_usage=record.token_usage,
            after_idle=after_idle,
            pid=server.log_pid,
        )
    )


def gpu_holders(host: HostState) -> dict[int, str]:
    """GPU index -> who holds it (":30000", "pid N (no server)"; -1: orphans)."""
    holders: dict[int, list[str]] = {}
    for server in host.servers.values():
        if server.process is not None:
            for index in server.process.gpus:
                holders.setdefault(index, []).append(f":{server.port}")
    if host.view is not None:
        uuid_to_index = {gpu.uuid: gpu.index for gpu in host.gpus}
        for app in host.view.unaccounted:
            index = uuid_to_index.get(app.gpu_uuid)
            if index is not None:
                holders.setdefault(index, []).append(f"pid {app.pid} (no server)")
        for cache in host.view.weight_caches:
            for index in cache.gpus:
                holders.setdefault(index, []).append(f"weight cache {cache.main.pid}")
        for orphan in host.view.orphans:
            holders.setdefault(-1, []).append(f"orphan {orphan.pid}")
    return {index: ", ".join(names) for index, names in holders.items()}
