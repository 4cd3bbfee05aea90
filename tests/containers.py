"""Fixtures: a simulated host whose SGLang server runs in a real Docker or Podman container
(Debian's docker.io / podman, private to the host: sglconsole/sim/fleet/engines.py), reached
over real sshd. Where this machine cannot run the engine, the tests skip and say why in one line.
"""

from __future__ import annotations

import pytest

from sglconsole.sim.fleet import engines
from sglconsole.sim.fleet.scenarios import container_host, demo_profiles
from sglconsole.sim.fleet.start import SimFleet
from tests.fleets import SSH_MODE

ENGINES = (engines.DOCKER, engines.PODMAN)


def skip_without(kind: str) -> None:
    reason = engines.unavailable(kind)
    if reason:
        pytest.skip(f"no real {kind} here: {reason}")


def start_container_fleet(workdir, kind: str, **kwargs) -> SimFleet:
    """One host (gpu-docker / gpu-podman) with its server in a `kind` container, ready."""
    skip_without(kind)
    fleet = SimFleet(workdir, [container_host(kind, startup_s=1.0)], demo_profiles(), ssh=SSH_MODE)
    fleet.start()
    if fleet.notes:  # installed, but this machine would not run it
        fleet.stop()
        pytest.skip(f"no real {kind} here: {fleet.notes[0]}")
    try:
        fleet.wait_ready(timeout=60)
    except BaseException:
        fleet.stop()
        raise
    return fleet


@pytest.fixture(scope="module", params=ENGINES)
def container_fleet(request, tmp_path_factory):
    """A containerised simulated host per engine, shared by a module's read-only tests."""
    fleet = start_container_fleet(tmp_path_factory.mktemp(f"ct-{request.param}"), request.param)
    yield fleet
    fleet.stop()


@pytest.fixture(params=ENGINES)
def fresh_container_fleet(request, tmp_path):
    """A containerised simulated host per engine, for a test that changes it."""
    fleet = start_container_fleet(tmp_path / f"ct-{request.param}", request.param)
    yield fleet
    fleet.stop()
