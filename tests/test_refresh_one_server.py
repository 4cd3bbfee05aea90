"""A change of one server (its decode line, its /metrics page) re-derives that server's view
only; a change of the host (GPUs, connection) re-derives every server's."""

from __future__ import annotations

from sglconsole import config
from sglconsole.state.fleet import FleetState


def two_servers(tmp_path) -> FleetState:
    path = tmp_path / "hosts.yaml"
    path.write_text(
        "profiles: {p: {args: [--model-path, /m]}}\n"
        "hosts: {h: {address: 127.0.0.1, servers: [{port: 30000, profile: p},"
        " {port: 30001, profile: p}]}}\n"
    )
    return FleetState(config.load(path))


def test_a_servers_change_rederives_its_view_alone(tmp_path):
    fleet = two_servers(tmp_path)
    servers = fleet.hosts["h"].servers
    heard: list[tuple[str, int | None]] = []
    fleet.subscribe(lambda host, port: heard.append((host, port)))
    fleet.publish("h", 100.0)
    assert servers[30000].view.generation == servers[30001].view.generation == fleet.generation
    other = servers[30001].view
    fleet.publish("h", 101.0, port=30000)
    assert servers[30000].view.generation == fleet.generation and servers[30000].view.at == 101.0
    assert servers[30001].view is other  # untouched: nothing of it changed
    fleet.publish("h", 102.0)
    assert servers[30001].view.at == 102.0  # a host-wide change reaches every server
    fleet.publish("h", 103.0, port=31234)  # a port hosts.yaml lacks: all, to be safe
    assert servers[30000].view.at == servers[30001].view.at == 103.0
    # the subscribers hear what was published: one server, or the whole host (None)
    assert heard == [("h", None), ("h", 30000), ("h", None), ("h", None)]
