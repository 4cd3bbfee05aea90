"""With a Prometheus source the console opens SSH only for the host looked at (real sshd, the
demo's simulated hosts): full monitoring while it is looked at, let go `ssh_idle` seconds after,
at most `ssh_hosts` at once; an action's connection is closed once idle."""

from __future__ import annotations

import asyncio
import time

import pytest
import yaml

from sglconsole import config
from sglconsole.remote.monitor import FleetMonitor
from sglconsole.state.model import Status
from tests.prometheus import free_port

pytestmark = pytest.mark.slow


def on_prometheus(demo_fleet, tmp_path, **source):
    """The demo's hosts.yaml (SSH works) reading from a Prometheus that is not there: what a
    host shows beyond "Prometheus unreachable" came over SSH."""
    document = yaml.safe_load(demo_fleet.config_path.read_text())
    url = f"http://127.0.0.1:{free_port()}"
    document["source"] = {"prometheus": url, "interval": 1, **source}
    path = tmp_path / "hosts.yaml"
    path.write_text(yaml.safe_dump(document))
    return config.load(path)


async def until(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.1)


async def test_ssh_for_the_host_looked_at_only(demo_fleet, tmp_path):
    cfg = on_prometheus(demo_fleet, tmp_path, ssh_hosts=2, ssh_idle=1)
    async with FleetMonitor(cfg) as monitor:
        fleet, on_demand = monitor.state, monitor.on_demand
        await until(lambda: monitor.prometheus.answered, 10, "a first read")
        assert on_demand.open_connections() == 0 and monitor.ssh["h200x4"].connected is False
        server = fleet.server("h200x4", 30000)
        assert server.status == Status.UNKNOWN and "unreachable" in server.reason
        monitor.look_at("h200x4")
        await until(
            lambda: (
                server.status == Status.UP
                and server.view.pid
                and server.log_lines
                and fleet.hosts["h200x4"].gpus
            ),
            30,
            "h200x4 over SSH: pid, log, GPUs, UP",
        )
        assert server.process.main.argv  # what only SSH gives
        assert fleet.server("ct129", 30000).status == Status.UNKNOWN  # not looked at
        assert on_demand.open_connections() == 1
        monitor.look_at("ct129")
        monitor.look_at("old059")  # two at most: h200x4, looked at longest ago, is let go
        assert set(on_demand.watched) == {"ct129", "old059"}
        await until(lambda: not monitor.ssh["h200x4"].connected, 10, "h200x4's SSH closed")
        await until(lambda: server.status == Status.UNKNOWN, 10, "h200x4 back on Prometheus")
        assert server.view.pid is None and "prometheus" in server.reason
        monitor.look_at(None)
        began = time.monotonic()
        await until(lambda: on_demand.open_connections() == 0, 10, "every SSH connection closed")
        print(f"\nlet go {time.monotonic() - began:.1f} s after nothing was looked at (ssh_idle 1)")
        assert on_demand.watched == {}
        # an action's connection (here a plain command) is closed once idle
        result = await monitor.ssh["h200x4"].run(["true"])
        assert result.ok and monitor.ssh["h200x4"].connected
        await until(lambda: not monitor.ssh["h200x4"].connected, 10, "the idle connection closed")
        # ... unless an action runs there
        on_demand.busy = lambda host: host == "h200x4"
        await monitor.ssh["h200x4"].run(["true"])
        await asyncio.sleep(3)
        assert monitor.ssh["h200x4"].connected


async def test_the_console_opens_ssh_for_what_the_operator_looks_at(demo_fleet, tmp_path):
    from sglconsole.tui.app import make_app
    from tests.tui.helpers import shown
    from tests.tui.helpers import until as ui_until

    app = make_app(on_prometheus(demo_fleet, tmp_path, ssh_idle=1))
    async with app.run_test(size=(160, 48)) as pilot:
        monitor = app.monitor
        await ui_until(pilot, lambda: app.main.selected is not None, 10, "a first selection")
        app.main.selected = ("h200x4", 30001)
        server = app.session.fleet.server("h200x4", 30001)
        await ui_until(
            pilot,
            lambda: server.log_lines and "pid " in shown(app, "#server-header"),
            30,
            "h200x4:30001's log and pid, over SSH",
        )
        assert "h200x4" in monitor.on_demand.watched
        assert not monitor.ssh["old059"].connected  # never looked at
        app.main.selected = ("old059", None)
        await ui_until(
            pilot, lambda: not monitor.ssh["h200x4"].connected, 10, "h200x4 let go once idle"
        )
