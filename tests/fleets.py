"""Fixtures: simulated fleets behind real SSH (OpenSSH sshd when root, else asyncssh), in
namespaces."""

from __future__ import annotations

import os
import shutil

import pytest

from sglconsole.sim.fleet.scenarios import demo_hosts, demo_profiles
from sglconsole.sim.fleet.start import SimFleet

SSH_MODE = "sshd" if os.geteuid() == 0 and shutil.which("sshd") else "asyncssh"


@pytest.fixture(scope="session")
def demo_fleet(tmp_path_factory):
    """The demo's four hosts, shared by read-only tests (never change it in a test)."""
    fleet = SimFleet(
        tmp_path_factory.mktemp("demo"), demo_hosts(startup_s=1.0), demo_profiles(), ssh=SSH_MODE
    )
    fleet.start()
    fleet.wait_ready()
    yield fleet
    fleet.stop()


@pytest.fixture
def fleet_factory(tmp_path):
    """Fresh fleets for tests that change hosts (kill, restore, faults)."""
    started: list[SimFleet] = []

    def make(hosts, profiles=None, **kwargs) -> SimFleet:
        fleet = SimFleet(
            tmp_path / f"fleet{len(started)}",
            hosts,
            profiles or demo_profiles(),
            ssh=SSH_MODE,
            **kwargs,
        )
        started.append(fleet)
        fleet.start()
        fleet.wait_ready()
        return fleet

    yield make
    for fleet in started:
        fleet.stop()
