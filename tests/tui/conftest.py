"""Fixtures for the console's tests: the simulated fleets of tests/e2e, a state folder, replays."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from sglconsole.tui.replay import Replay, load
from tests.e2e.conftest import demo_fleet, fleet_factory  # noqa: F401  (fixtures shared with the e2e suite)

DATA = Path(__file__).parent / "data"


@pytest.fixture(autouse=True)
def state_dir(tmp_path, monkeypatch) -> Path:
    """Actions write audit and rollback files under XDG_STATE_HOME: never in the real home."""
    folder = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(folder))
    return folder


@pytest.fixture(autouse=True)
def utc_clock(monkeypatch):
    """Times on screen are local times: the same on every machine only in one zone (snapshots)."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def demo_replay() -> Replay:
    """The recorded demo fleet at the end of its recording: fixed data, fixed clock."""
    return Replay(load(DATA / "demo.jsonl"), to_end=True)
