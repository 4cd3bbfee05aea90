"""A host's own alert is about its reachability: when it comes back it is "reachable", and the
alert says what its servers are, never "UP" for a host whose only server loops."""

from __future__ import annotations

import asyncio
import time

from sglconsole import config
from sglconsole.alerts.tracker import AlertTracker, sweep
from sglconsole.remote.monitor import FleetMonitor
from sglconsole.sim.fleet.scenarios import demo_hosts
from sglconsole.state.fleet import Status
from tests.e2e.test_status import wait_for


async def test_a_host_back_from_unreachable_says_reachable_and_names_its_looping_server(
    fleet_factory,
):
    (old059,) = [host for host in demo_hosts(startup_s=0.5) if host.name == "old059"]
    fleet = fleet_factory([old059])
    cfg = config.load(fleet.config_path)
    # a status counts once it held 4 s: the rebooted host's server has that long to be seen
    # looping again before the host's recovery is told (1 s was too short on a loaded machine)
    tracker, alerts = AlertTracker(hold_s=4.0), []
    async with FleetMonitor(cfg) as monitor:
        state = monitor.state
        server = state.server("old059", 30000)

        async def sweeping():  # as the console does, all along
            while True:
                for name in state.hosts:
                    state.publish(name)
                alerts.extend(sweep(state, tracker, time.time()))
                await asyncio.sleep(0.2)

        async def until(check, timeout):
            deadline = time.monotonic() + timeout
            while not check():
                assert time.monotonic() < deadline, [(a.target, a.new_word) for a in alerts]
                await asyncio.sleep(0.2)

        sweeper = asyncio.create_task(sweeping())
        try:
            await wait_for(lambda: server.status == Status.LOOPING, timeout=40, state=state)
            await asyncio.sleep(2)  # its first statuses are settled: what comes now is news
            await asyncio.to_thread(fleet.reboot, "old059", 8.0)  # all gone; back in 8 s
            await until(lambda: any(a.new == Status.UNREACHABLE for a in alerts), 40)
            await until(lambda: any(a.port is None and a.new == Status.UP for a in alerts), 60)
        finally:
            sweeper.cancel()
    (back,) = [a for a in alerts if a.port is None and a.new == Status.UP]
    assert back.new_word == "reachable" and back.old == Status.UNREACHABLE
    assert "old059:30000 is LOOPING" in back.reason, back.reason
