"""Routers as the console sees them, and each routed server's place in its router.

One home for router facts: the router feed (remote.router_feed) writes what each router's
``GET /workers`` said into `RouterState`; `derive_routes` turns that, with the server's own
state, into one `RouteView` per router in front of the server, published in its ServerView with
its status (state.server_view), so the tree, the detail pane and `status --json` say the same.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from sglconsole.state.canary import CanaryLog
from sglconsole.state.model import HostState, ServerState


@dataclass(frozen=True)
class RouterWorker:
    """One row of the router's ``GET /workers``, with its gauges from the router's /metrics."""

    url: str
    id: str | None
    healthy: bool
    load: int | None
    """The router's own count of requests in flight to this worker; sglang-router counts only
    under its cache_aware policy (its default), so other policies show 0."""
    breaker: str | None = None
    """Its circuit breaker as the router's /metrics says (closed, open, half-open); None: not
    read (no metrics_port) or not published: unknown, never closed."""
    inflight: int | None = None
    """Requests in flight to it as the router's /metrics counts them (None: not read)."""


@dataclass
class RouterState:
    name: str
    where: str
    """How it is reached: `host:port` (through SSH) or its URL."""
    worker_urls: dict[str, str]
    """HOST:PORT -> the URL this router knows that server by (config.routers.worker_url)."""
    reachable: bool | None = None
    error: str | None = None
    workers: list[RouterWorker] = field(default_factory=list)
    asked_at: float | None = None
    """When the worker list in `workers` was asked for (not when it came)."""
    since: float | None = None
    """When `reachable` last changed."""
    canary: CanaryLog = field(default_factory=CanaryLog)
    """The canary asked through the router (remote.router.feed), its runs without a pid."""
    kind: str | None = None
    """sglang-router or smg: as hosts.yaml says, else as its worker rows tell (None: not yet)."""

    def worker(self, url: str) -> RouterWorker | None:
        return next((worker for worker in self.workers if same_url(worker.url, url)), None)

    def server_of(self, url: str) -> str | None:
        """The configured HOST:PORT a worker URL is, or None (a worker hosts.yaml does not name)."""
        return next((key for key, known in self.worker_urls.items() if same_url(known, url)), None)


class Routing(StrEnum):
    SERVING = "in router"
    """Listed, healthy in the router, and the server answers."""
    SERVING_NOBODY = "serving nobody"
    """The server is up and answers, but its router does not list it: it gets no request."""
    IN_ROUTER_DOWN = "in router but down"
    """Listed, but the server is down, unreachable or not answering: the router may send it
    requests that fail."""
    UNHEALTHY = "in router, unhealthy"
    """Listed and the server answers us, but the router's health check has not passed (yet)."""
    OUT = "out of router"
    """Not listed and not running: consistent (a stopped server)."""
    ACTION = "out for an action"
    """Not listed while this console's action works on it (router out, drain, act, probe)."""
    BREAKER_OPEN = "in router, breaker open"
    """Listed and the server answers, but the gateway's circuit breaker for it is open: it sends
    it nothing (client errors opened it on a fleet: sglang#25811)."""
    ROUTER_UNREACHABLE = "router unreachable"
    UNKNOWN = "not known yet"


PROBLEMS = frozenset({Routing.SERVING_NOBODY, Routing.IN_ROUTER_DOWN, Routing.BREAKER_OPEN})
"""What the operator must act on: the tree marks it, `n` finds it, alerts tell it."""
ALERTED = PROBLEMS | {Routing.UNHEALTHY}
"""What the alerts tell once it lasted their grace: the problems, and a worker its router keeps
unhealthy while the server answers us: the router does not take it back (a gateway that stopped
probing a worker that failed once, smg PR #2468). Briefly unhealthy is only a re-add's start."""


@dataclass(frozen=True)
class RouteView:
    router: str
    url: str
    """The URL the router knows this server by."""
    routing: Routing
    healthy: bool | None = None
    """The router's is_healthy for it (None: not listed)."""
    load: int | None = None
    since: float | None = None
    """When this server entered `routing` (as far as this console has watched)."""
    breaker: str | None = None
    """The gateway's circuit breaker for it (closed, open, half-open; None: not known)."""
    inflight: int | None = None
    """Requests in flight to it, as the gateway's /metrics counts them (None: not known)."""

    @property
    def problem(self) -> bool:
        return self.routing in PROBLEMS

    def describe(self) -> str:
        """One line for every view: 'router front: serving nobody (http://...:30001 not listed)'."""
        text = f"router {self.router}: {self.routing.value}"
        if self.routing == Routing.SERVING_NOBODY:
            return f"{text} (up, but the router does not list {self.url})"
        if self.routing == Routing.IN_ROUTER_DOWN:
            return f"{text} (listed as {self.url}, the server does not answer)"
        if self.routing == Routing.BREAKER_OPEN:
            return f"{text} (the gateway sends {self.url} nothing until it closes)"
        if self.routing in (Routing.SERVING, Routing.UNHEALTHY):
            if self.load is not None:
                text += f", router load {self.load}"
            if self.inflight is not None:
                text += f", {self.inflight} in flight"
            if self.breaker not in (None, "closed"):
                text += f", breaker {self.breaker}"
        return text


def answering(server: ServerState, host: HostState) -> bool:
    """Up and answering us: the host is reachable, a process runs, its health check says ok."""
    return host.reachable is True and server.process is not None and server.health == "ok"


def derive_routes(
    server: ServerState,
    host: HostState,
    routers: dict[str, RouterState],
    previous: tuple[RouteView, ...],
    now: float,
) -> tuple[RouteView, ...]:
    views = []
    for router in routers.values():
        url = router.worker_urls.get(server.key)
        if url is None:
            continue
        routing, worker = _routing(server, host, router, url)
        before = next((route for route in previous if route.router == router.name), None)
        since = before.since if before is not None and before.routing == routing else now
        views.append(
            RouteView(
                router.name,
                url,
                routing,
                None if worker is None else worker.healthy,
                None if worker is None else worker.load,
                since,
                None if worker is None else worker.breaker,
                None if worker is None else worker.inflight,
            )
        )
    return tuple(views)


def _routing(
    server: ServerState, host: HostState, router: RouterState, url: str
) -> tuple[Routing, RouterWorker | None]:
    if router.reachable is False:
        return Routing.ROUTER_UNREACHABLE, None
    if router.reachable is None or router.asked_at is None:
        return Routing.UNKNOWN, None
    worker = router.worker(url)
    if host.reachable is None:
        return Routing.UNKNOWN, worker
    answers = answering(server, host)
    if worker is None:
        if not answers:
            return Routing.OUT, None
        # an action takes its worker out on purpose (router out, drain, act, probe); a list read
        # before the action ended may still show it out: not news until the next read
        if server.action or (server.action_ended or 0) > router.asked_at:
            return Routing.ACTION, None
        return Routing.SERVING_NOBODY, None
    if not answers:
        return Routing.IN_ROUTER_DOWN, worker
    if worker.breaker == "open":
        return Routing.BREAKER_OPEN, worker
    return (Routing.SERVING if worker.healthy else Routing.UNHEALTHY), worker


def same_url(left: str, right: str) -> bool:
    return left.rstrip("/") == right.rstrip("/")
