"""Alerts on a server's place in its router: serving nobody, in its router but down, in an SMG
gateway whose circuit breaker for it is open, or kept unhealthy there while it answers us.

Neither is a status of the server (an UP server can serve nobody), so they are watched apart from
the status tracker, from the same published views (state.routing). A problem must last GRACE_S
before it is news: a router's list is read every few seconds, an operator's own curl or another
console's drain takes the worker out on purpose for a while, and this console's actions are
never flagged at all (their worker is 'out for an action'). Its end is news once, like a recovery.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sglconsole.state.fleet import FleetState
from sglconsole.state.routing import ALERTED, Routing

GRACE_S = 90.0
"""Longer than the default drain (60 s) of another console's or the CLI's action."""
BREAKER_GRACE_S = 5.0
"""An open breaker is the gateway's own verdict, not a drain in progress (no action opens one):
news once two reads of its /metrics (2 s apart) agree."""


@dataclass
class RouteWatch:
    grace_s: float = GRACE_S
    breaker_grace_s: float = BREAKER_GRACE_S
    told: dict[tuple[str, int, str], str] = field(default_factory=dict)
    """(host, port, router) -> the problem alerted and not yet over."""


def route_news(fleet: FleetState, watch: RouteWatch, now: float, make_alert) -> list:
    """Alerts (built by `make_alert(host, port, status, reason, now, router, routing)`) for route
    problems that lasted the grace period, and for the end of each one alerted."""
    found = []
    for host in fleet.hosts.values():
        for server in host.servers.values():
            for route in server.view.routes:
                key = (host.name, server.port, route.router)
                told = watch.told.get(key)
                grace = (
                    watch.breaker_grace_s
                    if route.routing == Routing.BREAKER_OPEN
                    else watch.grace_s
                )
                lasted = route.since is not None and now - route.since >= grace
                if route.routing in ALERTED and lasted and told != route.routing.value:
                    watch.told[key] = route.routing.value
                    reason = f"{route.describe()} for {now - route.since:.0f} s"
                    found.append(make_alert(host, server, reason, route))
                elif told is not None and route.routing not in ALERTED and not server.action:
                    del watch.told[key]
                    found.append(make_alert(host, server, route.describe(), route))
    return found
