"""A server's place in its router, derived from the router's list and the server's own state
(state.routing), and the alerts on it (alerts.routes): pure, no router needed (the real router's
tests are tests/tui/test_router_view.py)."""

from __future__ import annotations

import dataclasses

from sglconsole.alerts.routes import BREAKER_GRACE_S, GRACE_S
from sglconsole.alerts.tracker import AlertTracker, sweep
from sglconsole.config.load import parse
from sglconsole.config.schema import Config
from sglconsole.core.processes import ProcInfo, ServerProcess
from sglconsole.remote.router.feed import RouterFeed
from sglconsole.remote.ssh.connection import SshFleet
from sglconsole.state.fleet import FleetState
from sglconsole.state.routing import RouterWorker, Routing

HOSTS = """
hosts:
  r1:
    address: 127.0.0.1
    servers: [{port: 30000, profile: p}, {port: 30001, profile: p}]
profiles:
  p: {args: "--model-path /m"}
routers:
  front: {host: r1, port: 39000, servers: ["r1:30000", "r1:30001"]}
"""


URL = "http://127.0.0.1:{}"


def fleet() -> FleetState:
    state = FleetState(Config(parse(HOSTS), None))
    host = state.hosts["r1"]
    host.reachable = True
    for server in host.servers.values():
        server.process = running(server.port)
        server.health = "ok"
    return state


def running(port: int) -> ServerProcess:
    argv = ("python3", "-m", "sglang.launch_server", "--port", str(port))
    main = ProcInfo(port, 1, port, port, "S", "python3", argv, 0.0, 0, main=True)
    return ServerProcess(main, port, (), (0,), 1000)


def listed(state: FleetState, *ports: int, at: float, healthy: bool = True) -> None:
    router = state.routers["front"]
    router.reachable, router.asked_at = True, at
    router.workers = [RouterWorker(f"http://127.0.0.1:{p}", str(p), healthy, 0) for p in ports]
    state.publish("r1", now=at)


def routing(state: FleetState, port: int) -> Routing:
    return state.server("r1", port).view.routes[0].routing


def test_each_server_gets_its_place_in_the_router():
    state = fleet()
    assert state.routers["front"].worker_urls == {
        "r1:30000": "http://127.0.0.1:30000",
        "r1:30001": "http://127.0.0.1:30001",
    }
    state.publish("r1", now=1.0)
    assert routing(state, 30000) == Routing.UNKNOWN  # the router was not read yet
    listed(state, 30000, at=2.0)
    assert routing(state, 30000) == Routing.SERVING
    assert routing(state, 30001) == Routing.SERVING_NOBODY
    listed(state, 30000, 30001, at=2.5, healthy=False)  # re-added, its health check not passed
    assert routing(state, 30001) == Routing.UNHEALTHY
    assert not state.server("r1", 30001).view.routes[0].problem
    state.server("r1", 30000).health = "503"
    listed(state, 30000, at=3.0)
    assert routing(state, 30000) == Routing.IN_ROUTER_DOWN
    state.server("r1", 30001).process = None
    listed(state, 30000, at=4.0)
    assert routing(state, 30001) == Routing.OUT  # stopped and out: consistent, not a problem
    state.routers["front"].reachable = False
    state.publish("r1", now=5.0)
    assert routing(state, 30000) == Routing.ROUTER_UNREACHABLE


def test_an_action_takes_its_worker_out_on_purpose_until_the_router_is_read_again():
    state = fleet()
    server = state.server("r1", 30001)
    server.action = "restoring"
    listed(state, 30000, at=10.0)
    assert routing(state, 30001) == Routing.ACTION
    server.action, server.action_ended = None, 20.0
    state.publish("r1", now=25.0)  # the list was read before the action ended: stale
    assert routing(state, 30001) == Routing.ACTION
    listed(state, 30000, at=30.0)  # read after, still out: now it is news
    assert routing(state, 30001) == Routing.SERVING_NOBODY


def test_serving_nobody_alerts_after_the_grace_period_and_its_end_once():
    state = fleet()
    tracker = AlertTracker()
    t0 = 1000.0
    listed(state, 30000, at=t0)
    assert sweep(state, tracker, t0 + 1) == []
    assert state.server("r1", 30001).view.routes[0].since == t0
    listed(state, 30000, at=t0 + GRACE_S - 1)
    assert state.server("r1", 30001).view.routes[0].since == t0  # the same problem goes on
    assert sweep(state, tracker, t0 + GRACE_S - 1) == []
    listed(state, 30000, at=t0 + GRACE_S + 1)
    [alert] = sweep(state, tracker, t0 + GRACE_S + 1)
    assert alert.problem and alert.router == "front" and alert.routing == "serving nobody"
    assert alert.target == "r1:30001" and "serving nobody" in alert.reason
    assert alert.to_json()["router"] == "front" and alert.to_json()["event"] == "problem"
    assert sweep(state, tracker, t0 + GRACE_S + 2) == []  # told once
    listed(state, 30000, 30001, at=t0 + GRACE_S + 3)
    [back] = sweep(state, tracker, t0 + GRACE_S + 3)
    assert not back.problem and back.routing == "in router"
    assert dataclasses.replace(back, router=None).problem is False  # UP is no problem either


def test_an_open_breaker_is_a_problem_of_an_up_server_alerted_within_seconds():
    """The SMG gateway lists r1:30001 healthy and the server answers, but its breaker is open:
    the gateway sends it nothing. No drain opens a breaker, so the alert waits seconds, not 90."""
    state = fleet()
    tracker = AlertTracker()
    t0 = 1000.0

    def gauged(breaker: str, at: float) -> None:
        router = state.routers["front"]
        router.reachable, router.asked_at = True, at
        router.workers = [
            RouterWorker(URL.format(30000), "a", True, 0, breaker="closed", inflight=2),
            RouterWorker(URL.format(30001), "b", True, 0, breaker=breaker, inflight=0),
        ]
        state.publish("r1", now=at)

    gauged("closed", t0)
    route = state.server("r1", 30001).view.routes[0]
    assert route.routing == Routing.SERVING and not route.problem
    assert route.describe() == "router front: in router, router load 0, 0 in flight"
    assert sweep(state, tracker, t0) == []
    gauged("open", t0 + 1)
    route = state.server("r1", 30001).view.routes[0]
    assert route.routing == Routing.BREAKER_OPEN and route.problem and route.breaker == "open"
    assert routing(state, 30000) == Routing.SERVING
    assert sweep(state, tracker, t0 + 1) == []
    [alert] = sweep(state, tracker, t0 + 1 + BREAKER_GRACE_S)
    assert alert.problem and alert.routing == "in router, breaker open" and alert.port == 30001
    gauged("half-open", t0 + 20)  # the gateway tries it again: no longer a problem
    [back] = sweep(state, tracker, t0 + 20)
    assert not back.problem and back.routing == "in router"
    assert "breaker half-open" in state.server("r1", 30001).view.routes[0].describe()
    state.server("r1", 30001).health = "503"  # down too: that is what the operator must know
    gauged("open", t0 + 30)
    assert routing(state, 30001) == Routing.IN_ROUTER_DOWN


def test_a_worker_its_router_keeps_unhealthy_while_it_answers_is_alerted_after_the_grace():
    """A gateway that stopped probing a worker that failed once (smg PR #2468) keeps it listed
    unhealthy though the server answers again: not a problem at once (a re-added worker is
    unhealthy until its first check), but news once it lasted the grace period."""
    state = fleet()
    tracker = AlertTracker()
    t0 = 1000.0
    listed(state, 30000, 30001, at=t0)
    assert sweep(state, tracker, t0) == []
    listed(state, 30000, 30001, at=t0 + 1, healthy=False)
    assert routing(state, 30001) == Routing.UNHEALTHY
    assert not state.server("r1", 30001).view.routes[0].problem  # no tree mark, `n` skips it
    assert sweep(state, tracker, t0 + 1 + GRACE_S - 1) == []
    alerts = sweep(state, tracker, t0 + 2 + GRACE_S)
    assert {(alert.port, alert.routing) for alert in alerts} == {
        (30000, "in router, unhealthy"),
        (30001, "in router, unhealthy"),
    }
    assert all(alert.problem and alert.to_json()["event"] == "problem" for alert in alerts)
    listed(state, 30000, 30001, at=t0 + 200)  # it took them back
    assert {alert.routing for alert in sweep(state, tracker, t0 + 200)} == {"in router"}


async def test_a_router_on_an_unreachable_host_is_unreachable_without_a_second_connection():
    state = fleet()
    state.hosts["r1"].reachable, state.hosts["r1"].error = False, "connection refused"
    ssh = SshFleet(state.config.hosts)
    feed = RouterFeed(state.config, ssh, state)
    await feed.poll("front")
    router = state.routers["front"]
    assert router.reachable is False
    assert router.error == "its host r1 is unreachable: connection refused"
    assert ssh["r1"]._conn is None  # nothing was dialled: the host's monitor does that
    assert routing(state, 30000) == Routing.ROUTER_UNREACHABLE
