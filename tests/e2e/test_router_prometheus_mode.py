"""Routers are read in Prometheus mode too: a router's worker list is in no series the console
reads there, so the console asks the router itself (real sglang-router, through an SSH forward),
and the idle sweep that closes unused SSH connections in that mode keeps the router's open."""

from __future__ import annotations

import asyncio

import pytest

from bench.router_restore import HOST, routed_host, routers_yaml, start_router
from sglconsole import config
from sglconsole.remote.monitor import FleetMonitor
from sglconsole.remote.ssh.connection import SshFleet
from tests.prometheus import free_port

pytestmark = pytest.mark.slow

URL = "http://127.0.0.1:{}"


async def until(predicate, timeout: float, what: str) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.1)


async def test_routers_are_read_and_their_link_kept_in_prometheus_mode(fleet_factory):
    nobody = f"http://127.0.0.1:{free_port()}"  # a Prometheus that never answers: routers still do
    source = {"prometheus": nobody, "interval": 1, "ssh_idle": 0.5}
    fleet = fleet_factory([routed_host(2)], extra_config={**routers_yaml(2), "source": source})
    cfg = config.load(fleet.config_path)
    ssh = SshFleet(cfg.hosts)
    try:
        router = await start_router(ssh, 2)
        async with FleetMonitor(cfg) as monitor:
            front = monitor.state.routers["front"]
            await until(lambda: front.reachable and len(front.workers) == 2, 30, "the router")

            def route(port: int):
                server = monitor.state.server(HOST, port)
                return next((r for r in server.view.routes if r.router == "front"), None)

            await until(lambda: route(30000) and route(30001), 10, "routes in the views")
            assert route(30001).healthy is True
            # the sweep runs every second: past ssh_idle, the router's link must still be the same
            link = monitor.ssh[HOST]
            for _ in range(30):
                assert link.connected, "the idle sweep closed the router's SSH connection"
                await asyncio.sleep(0.1)

            assert await router.remove(URL.format(30001))
            await until(lambda: route(30001).healthy is None, 10, "30001 no longer listed")
            assert route(30000).healthy is True
    finally:
        await ssh.close()
