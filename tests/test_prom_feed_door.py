"""The Prometheus source publishes through the fleet's one door (FleetState.publish), as an SSH
update does: each host's publication counts one generation, stamps its views with it and tells the
subscribers (host, None) once, whether Prometheus answered (a real Prometheus scraping one target
that answers and one that does not) or not (stopped: the last numbers, stale)."""

from __future__ import annotations

import time

from sglconsole import config
from sglconsole.remote.feeds.host_link import HostLink
from sglconsole.remote.prometheus.feed import PrometheusFeed
from sglconsole.remote.ssh.connection import SshFleet
from sglconsole.state.fleet import FleetState
from sglconsole.state.model import Status
from tests.prometheus import Prometheus, free_port


def fleet_of(tmp_path, url: str, scraped: int, closed: int) -> FleetState:
    path = tmp_path / "hosts.yaml"
    path.write_text(
        f"source: {{prometheus: '{url}', interval: 1}}\n"
        "profiles: {p: {args: [--model-path, /m]}}\n"
        f"hosts:\n"
        f"  h1: {{address: 127.0.0.1, port: {free_port()}, servers: [{{port: {scraped}, "
        f"profile: p}}, {{port: {closed}, profile: p}}]}}\n"
        f"  h2: {{address: 127.0.0.2, port: {free_port()}, servers: [{{port: 30000, "
        "profile: p}]}\n"
    )
    return FleetState(config.load(path))


def told(fleet: FleetState) -> list[tuple[str, int | None, int, dict[int, int]]]:
    """What the subscribers hear: (host, port, the fleet's generation then, its views' generations
    then)."""
    heard: list[tuple[str, int | None, int, dict[int, int]]] = []

    def listener(host: str, port: int | None) -> None:
        views = {p: s.view.generation for p, s in fleet.hosts[host].servers.items()}
        heard.append((host, port, fleet.generation, views))

    fleet.subscribe(listener)
    return heard


async def test_prometheus_reads_publish_through_the_door_as_ssh_updates_do(tmp_path):
    own, closed = free_port(), free_port()  # Prometheus's own /metrics answers; nothing on closed
    prometheus = Prometheus(
        tmp_path / "prometheus", {"sglang": [f"127.0.0.1:{own}", f"127.0.0.1:{closed}"]}, own
    )
    try:
        deadline = time.monotonic() + 30
        while len(prometheus.query("up")) < 2:  # both scraped once: one up, one down
            assert time.monotonic() < deadline, prometheus.query("up")
            time.sleep(0.3)
        fleet = fleet_of(tmp_path, prometheus.url, own, closed)
        heard = told(fleet)
        feed = PrometheusFeed(fleet.config.model.source, fleet, timeout=2.0)
        await feed.poll()
    finally:
        prometheus.stop()
    assert feed.error is None, feed.error
    servers = fleet.hosts["h1"].servers
    assert servers[closed].status is Status.DOWN, servers[closed].reason
    assert servers[own].status is not Status.DOWN, servers[own].reason
    assert heard == [("h1", None, 1, {own: 1, closed: 1}), ("h2", None, 2, {30000: 2})]

    # a host read over SSH is heard the same way: one generation, its views stamped, once
    over_ssh = FleetState(fleet.config)
    heard_ssh = told(over_ssh)
    HostLink(
        "h1", over_ssh.config.host("h1"), SshFleet(over_ssh.config.hosts)["h1"], over_ssh
    ).publish()
    assert heard_ssh == [heard[0]]

    # Prometheus gone: the stale views go through the same door
    heard.clear()
    await feed.poll()
    await feed.close()
    assert feed.error is not None
    assert heard == [("h1", None, 3, {own: 3, closed: 3}), ("h2", None, 4, {30000: 4})]
    assert all(s.status is Status.UNKNOWN for s in servers.values())
    assert servers[closed].view.stale_since is not None  # the last numbers, said to be old
