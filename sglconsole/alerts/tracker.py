"""Alerts on status changes, with hysteresis: a status must hold before it counts, and a
server that flaps alerts once per quiet period (unless it gets worse)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from sglconsole.alerts.canary import CanaryWatch, canary_news, router_canary_news
from sglconsole.alerts.precursors import SignWatch, sign_news
from sglconsole.alerts.routes import RouteWatch, route_news
from sglconsole.state.fleet import SEVERITY, FleetState, HostState, Status
from sglconsole.state.routing import ALERTED as ROUTE_ALERTED
from sglconsole.state.statuses import PROBLEMS

HOLD_S = 5.0
QUIET_S = 300.0
SILENT_FROM = {Status.UNKNOWN}  # the first real status after connecting is not news


def rank(status: Status) -> int:
    return len(SEVERITY) - SEVERITY.index(status)


@dataclass(frozen=True)
class Alert:
    host: str
    port: int | None
    old: Status
    new: Status
    reason: str
    time: float
    router: str | None = None
    """Set for news about the server's place in this router (alerts.routes), not its status."""
    routing: str | None = None
    canary: str | None = None
    """Set for news of the canary (alerts.canary): its verdict, "OK" when it is over."""
    signal: str | None = None
    """With `canary`: the SGLang warning line it is about (kv_canary, nan_logits), if one."""
    sign: str | None = None
    """Set for news about a sign before an outage (alerts.precursors): host_memory, oom_kill,
    xid or ecc; `sign_on` says whether it began (a problem) or is over."""
    sign_on: bool = False

    @property
    def problem(self) -> bool:
        if self.canary is not None:
            return self.canary != "OK"
        if self.router is not None:
            return self.routing in ROUTE_ALERTED
        if self.sign is not None:
            return self.sign_on
        return self.new in PROBLEMS

    @property
    def what(self) -> str:
        """What changed, in words: its place in a router, its canary, a sign, or its status."""
        if self.canary is not None and self.signal is not None:
            return f"SGLang warned: {self.signal}" if self.problem else f"no {self.signal} line"
        if self.canary is not None:
            return f"canary {self.canary}"
        if self.sign is not None:  # a sign before an outage: its kind
            return self.sign
        return self.routing if self.router else self.new_word

    @property
    def target(self) -> str:
        return self.host if self.port is None else f"{self.host}:{self.port}"

    @property
    def new_word(self) -> str:
        """What it became, in words: a host's own track is its reachability, so a host that came
        back is "reachable", never "UP" (its servers may be anything but)."""
        if self.port is None and self.router is None and self.new == Status.UP:
            return "reachable"
        return self.new.value

    def to_json(self) -> dict:
        return {
            "event": "problem" if self.problem else "recovered",
            "host": self.host,
            "port": self.port,
            "from": self.old.value,
            "to": self.new.value,
            "reason": self.reason,
            "time": self.time,
            **({"router": self.router, "routing": self.routing} if self.router else {}),
            **({"canary": self.canary} if self.canary is not None else {}),
            **({"signal": self.signal} if self.signal is not None else {}),
            **({"sign": self.sign} if self.sign else {}),
        }


@dataclass
class _Track:
    settled: Status
    pending: Status | None = None
    since: float = 0.0
    alerted_at: float | None = None
    alerted: Status | None = None
    """The last problem alerted."""
    recovery_told: bool = False
    """Whether the recovery from `alerted` was alerted (once per quiet period)."""


@dataclass
class AlertTracker:
    hold_s: float = HOLD_S
    quiet_s: float = QUIET_S
    announce_first: bool = False
    """Tell the problems found at start too (after the hold), as news from UNKNOWN: a service
    with no screen (the exporter) that restarts must not forget what was firing. The console
    keeps them quiet: the operator sees the fleet."""
    _tracks: dict[tuple[str, int | None], _Track] = field(default_factory=dict)
    routes: RouteWatch = field(default_factory=RouteWatch)
    canaries: CanaryWatch = field(default_factory=CanaryWatch)
    signs: SignWatch = field(default_factory=SignWatch)

    def observe(
        self, host: str, port: int | None, status: Status, reason: str, now: float
    ) -> Alert | None:
        """Feed the current status of a host (port None: its reachability) or a server."""
        key = (host, port)
        track = self._tracks.get(key)
        if track is None:
            if not self.announce_first:
                self._tracks[key] = _Track(status)
                return None
            track = self._tracks[key] = _Track(Status.UNKNOWN)
        if status == track.settled:
            track.pending = None
            return None
        if status != track.pending:
            track.pending, track.since = status, now
        if now - track.since < self.hold_s:
            return None
        return self._settle(track, key, status, reason, now)

    def settled(self, host: str, port: int | None) -> Status | None:
        """The status that held long enough to count for HOST (port None) or HOST:PORT: what its
        next change is news against (None: not observed yet)."""
        track = self._tracks.get((host, port))
        return track.settled if track is not None else None

    def _settle(
        self, track: _Track, key: tuple[str, int | None], status: Status, reason: str, now: float
    ) -> Alert | None:
        old, track.settled, track.pending = track.settled, status, None
        silent = old in SILENT_FROM and not self.announce_first
        if silent or (old == Status.STARTING and status not in PROBLEMS):
            return None
        if status not in PROBLEMS and old not in PROBLEMS:
            return None
        if self._quiet(track, status, now):
            return None
        if status in PROBLEMS:
            track.alerted_at, track.alerted, track.recovery_told = now, status, False
        else:
            track.recovery_told = True
        return Alert(*key, old, status, reason, now)

    def _quiet(self, track: _Track, status: Status, now: float) -> bool:
        """Within the quiet period only a worse problem than the one alerted gets through, and
        the first recovery from it (whoever was told of a problem is told when it is over)."""
        if track.alerted_at is None or now - track.alerted_at >= self.quiet_s:
            return False
        if status not in PROBLEMS:
            return track.recovery_told
        return not (track.alerted is not None and rank(status) > rank(track.alerted))


def back_again(host: HostState) -> str:
    """A host's recovery, with what its servers are now: reachable is not the same as fine."""
    problems = [server for server in host.servers.values() if server.status in PROBLEMS]
    said = "; ".join(f"{server.host}:{server.port} is {server.status.value}" for server in problems)
    return f"reachable again; {said}" if said else "reachable again"


def sweep(fleet: FleetState, tracker: AlertTracker, now: float) -> list[Alert]:
    """Feed every host's reachability and every reachable host's servers; return what became
    news."""
    found = []
    for host in fleet.hosts.values():
        reach = {False: Status.UNREACHABLE, None: Status.UNKNOWN}.get(host.reachable, Status.UP)
        back = tracker.observe(host.name, None, reach, host.error or "", now)
        if back is not None and back.new == Status.UP:
            back = replace(back, reason=back_again(host))
        found.append(back)
        if host.reachable:
            # while an action works on a server, its passing states are not news: the alert
            # ("recovered", "DOWN") waits for the state the action ends in, after its checks
            found += [
                tracker.observe(host.name, server.port, server.status, server.reason, now)
                for server in host.servers.values()
                if not server.action
            ]
    found += route_news(
        fleet,
        tracker.routes,
        now,
        lambda host, server, reason, route: Alert(
            host.name,
            server.port,
            server.status,
            server.status,
            reason,
            now,
            route.router,
            route.routing.value,
        ),
    )
    found += canary_news(
        fleet,
        tracker.canaries,
        lambda host, server, verdict, reason, signal=None: Alert(
            host.name,
            server.port,
            server.status,
            server.status,
            reason,
            now,
            canary=verdict,
            signal=signal,
        ),
    )
    # a router's canary is news of the router (its name in host, no port): nothing of one server
    found += router_canary_news(
        fleet,
        tracker.canaries,
        lambda name, verdict, reason: Alert(
            name, None, Status.UP, Status.UP, reason, now, router=name, canary=verdict
        ),
    )
    found += sign_news(fleet, tracker.signs, tracker.hold_s, now, _sign_alert(now))
    return [alert for alert in found if alert is not None]


def _sign_alert(now: float):
    """An Alert for a sign before an outage (alerts.precursors): from/to are the status of what
    it hits (the server, or the host's reachability), unchanged."""

    def make(host: HostState, port: int | None, kind: str, text: str, began: bool) -> Alert:
        server = host.servers.get(port) if port is not None else None
        status = server.status if server is not None else Status.UP
        return Alert(host.name, port, status, status, text, now, sign=kind, sign_on=began)

    return make
