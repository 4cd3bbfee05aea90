"""`upgrade` behind the REAL SGLang router (the sglang-router wheel): the server is taken out of
the router and drained before the old process stops, the canary is probed and A/B benched while
out, and put back once it passed (the router's own worker list says so)."""

from __future__ import annotations

import asyncio
import dataclasses
import json

import pytest

from bench.router_restore import HOST, ROUTER_PORT, routed_host, routers_yaml, start_router
from sglconsole import config
from sglconsole.remote.router.workers import RouterClient, router_endpoint
from sglconsole.remote.ssh.connection import SshFleet
from tests.cli import cli

pytestmark = pytest.mark.slow


@pytest.fixture
def state_dir(tmp_path, monkeypatch):
    folder = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(folder))
    return folder


def healthy(path, start: bool = False) -> set[str]:
    """The router's healthy workers (START: launch the router first, once both are healthy)."""

    async def ask() -> set[str]:
        ssh = SshFleet(config.load(path).hosts)
        try:
            if start:
                client = await start_router(ssh, 2)
            else:
                endpoint = await router_endpoint(ssh, config.Router(host=HOST, port=ROUTER_PORT))
                client = RouterClient("front", endpoint)
            return {worker["url"] for worker in await client.workers() if worker["is_healthy"]}
        finally:
            await ssh.close()

    return asyncio.run(ask())


def test_upgrade_behind_the_router_drains_first_and_puts_the_canary_back(fleet_factory, state_dir):
    host = dataclasses.replace(routed_host(2), sglang_version="0.5.22")
    fleet = fleet_factory([host], extra_config=routers_yaml(2))
    path = fleet.config_path
    both = {"http://127.0.0.1:30000", "http://127.0.0.1:30001"}
    assert healthy(path, start=True) == both
    result = cli("upgrade", "-c", str(path), f"{HOST}:30000", "--to", "0.5.23", "--yes", "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["verdict"] == "promoted", report["summary"]
    names = [stage["name"] for stage in report["stages"]]
    assert names[1:3] == ["router out", "drain"] and names.index("drain") < names.index("stop")
    assert names[-3:] == ["a/b", "router in", "promote"], names  # benched while out
    assert healthy(path) == both
    assert config.load(path).server(HOST, 30000).profile == "qwen8b-tp1-sglang-0.5.23"


def test_a_failed_canary_behind_the_router_is_rolled_back_and_put_back(fleet_factory, state_dir):
    host = dataclasses.replace(routed_host(2, degenerate=["0.5.23"]), sglang_version="0.5.22")
    fleet = fleet_factory([host], extra_config=routers_yaml(2))
    path = fleet.config_path
    both = {"http://127.0.0.1:30000", "http://127.0.0.1:30001"}
    assert healthy(path, start=True) == both
    result = cli("upgrade", "-c", str(path), f"{HOST}:30000", "--to", "0.5.23", "--yes", "--json")
    assert result.returncode == 1, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["verdict"] == "rolled_back" and "DEGENERATE" in report["reason"], report
    assert f"{HOST}:30000 in router front" in report["summary"], report["summary"]
    assert healthy(path) == both  # the old server serves again, through the router
    assert config.load(path).server(HOST, 30000).profile == "qwen8b-tp1"
