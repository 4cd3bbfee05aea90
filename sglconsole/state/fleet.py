"""Fleet state: the live model every view reads, with one writer (the monitor, plus actions marking
what they do). Every change calls the subscribers with (host, port|None) so a UI can batch its
refreshes; `refresh_status` publishes the derived views (state.snapshot) first.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

from sglconsole.config import Config
from sglconsole.config.routers import routes_of
from sglconsole.core.sglang_log_record import LogRecord
from sglconsole.state.model import (  # noqa: F401 - the names every view imports from here
    HISTORY,
    IDLE_GAP_S,
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
from sglconsole.state.snapshot import derive_view

Listener = Callable[[str, int | None], None]


class FleetState:
    def __init__(self, config: Config, stops: StopLookup = no_stops):
        """stops: the operator's last stop of a server, if any (the audit log, read above)."""
        self.config = config
        self.stops = stops
        self.hosts: dict[str, HostState] = {}
        self._listeners: list[Listener] = []
        self.generation = 0
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
        for host, port in ((h, s.port) for h, c in config.hosts.items() for s in c.servers):
            for route in routes_of(config, host, port):
                self.routers[route.router].worker_urls[f"{host}:{port}"] = route.worker_url

    # ------------------------------------------------------------ listeners

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def changed(self, host: str, port: int | None = None) -> None:
        for listener in list(self._listeners):
            listener(host, port)

    # --------------------------------------------------------------- access

    def server(self, host: str, port: int) -> ServerState | None:
        state = self.hosts.get(host)
        return state.servers.get(port) if state else None

    def all_servers(self) -> list[ServerState]:
        return [s for h in self.hosts.values() for s in h.servers.values()]

    def worst(self) -> Status:
        return worst(s.status for s in self.all_servers())

    # ------------------------------------------------------------- updating

    def refresh_status(self, host: str, now: float | None = None, port: int | None = None) -> None:
        """Publish what every view shows of this host's servers: derived once, here, per update.
        `port`: only that server changed (a server's view depends on it and its host alone, so
        a decode line re-derives one view, not every server's of the host)."""
        now = now or time.time()
        hstate = self.hosts[host]
        self.generation += 1
        if hstate.source is not None:  # its views come from elsewhere (remote.prometheus_feed)
            for server in hstate.servers.values():  # but its routers are read here too
                routes = derive_routes(server, hstate, self.routers, server.view.routes, now)
                if routes != server.view.routes:
                    server.view = replace(server.view, routes=routes, generation=self.generation)
            return
        one = hstate.servers.get(port) if port is not None else None
        for server in (one,) if one is not None else hstate.servers.values():
            server.stopped = self.stops(host, server.port) if server.process is None else None
            server.view = derive_view(server, hstate, now, self.generation, self.routers)

    def routed_hosts(self, router: str) -> set[str]:
        """The hosts whose servers ROUTER fronts: their views change with its worker list."""
        state = self.routers.get(router)
        return {key.rsplit(":", 1)[0] for key in state.worker_urls} if state else set()


def record_decode(server: ServerState, record: LogRecord, now: float) -> None:
    previous = server.last_decode
    gap = None if server.last_decode_at is None else now - server.last_decode_at
    if record.time is not None and previous is not None and previous.time is not None:
        gap = (record.time - previous.time).total_seconds()
    after_idle = (
        previous is None
        or (previous.running_req or 0) == 0
        or (gap is not None and gap > IDLE_GAP_S)
    )
    when = record.time.timestamp() if record.time is not None else now
    server.history.append(
        Sample(
            when,
            record.gen_throughput,
            record.accept_len,
            record.accept_rate,
            record.running_req,
            record.queue_req,
            record.token_usage,
            after_idle,
            server.log_pid,
        )
    )
    server.last_decode = record
    server.last_decode_at = now


def gpu_holders(host: HostState) -> dict[int, str]:
    """GPU index -> who holds it (":30000", "pid N (no server)"; -1: orphans)."""
    holders: dict[int, list[str]] = {}
    for server in host.servers.values():
        if server.process is not None:
            for index in server.process.gpus:
                holders.setdefault(index, []).append(f":{server.port}")
    if host.view is not None:
        uuid_to_index = {g.uuid: g.index for g in host.gpus}
        for app in host.view.unaccounted:
            index = uuid_to_index.get(app.gpu_uuid)
            if index is not None:
                holders.setdefault(index, []).append(f"pid {app.pid} (no server)")
        for orphan in host.view.orphans:
            holders.setdefault(-1, []).append(f"orphan {orphan.pid}")
    return {k: ", ".join(v) for k, v in holders.items()}
