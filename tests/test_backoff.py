"""Reconnect backoff has jitter: a fleet that lost its bastion at once does not come back in
lockstep, and every delay stays within [base, cap]."""

from __future__ import annotations

import asyncio
import random
import socket
import time

import pytest

from sglconsole.config import Config, Host, HostsFile
from sglconsole.remote.feeds.backoff import BASE_S, MAX_BACKOFF_S, Backoff
from sglconsole.remote.monitor import FleetMonitor


def test_delays_stay_within_bounds_and_grow_no_faster_than_exponential():
    for seed in range(200):
        backoff = Backoff(rng=random.Random(seed))
        for attempt in range(1, 30):
            delay = backoff.next()
            assert BASE_S <= delay <= MAX_BACKOFF_S
            assert delay <= min(MAX_BACKOFF_S, BASE_S * 3**attempt)
        backoff.reset()
        assert BASE_S <= backoff.next() <= 3 * BASE_S  # a success starts over


def test_hosts_that_failed_together_spread_out():
    hosts = [Backoff() for _ in range(50)]
    for _attempt in range(8):
        delays = [h.next() for h in hosts]
        below_cap = [d for d in delays if d < MAX_BACKOFF_S]
        assert len({round(d, 6) for d in below_cap}) == len(below_cap)  # no two in lockstep
        assert len(below_cap) >= len(delays) / 4  # the cap holds only some of them
        assert max(delays) - min(delays) > 0.5 * BASE_S
    # still a backoff: on average the delays have grown well past the first ones
    assert sum(delays) / len(delays) > 6 * BASE_S


def test_nonsense_bounds_are_refused():
    with pytest.raises(ValueError):
        Backoff(base=0)
    with pytest.raises(ValueError):
        Backoff(base=5, cap=1)


async def test_a_fleet_behind_a_dead_bastion_schedules_its_retries_apart():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = sock.getsockname()[1]  # closed once we leave: connections are refused
    hosts = {"bastion": Host(address="127.0.0.1", port=dead, connect_timeout=2, ssh_config="none")}
    for index in range(12):
        hosts[f"gpu{index:02d}"] = Host(
            address=f"10.0.0.{index + 1}", jump="bastion", connect_timeout=2, ssh_config="none"
        )
    cfg = Config(HostsFile(hosts=hosts), None)
    async with FleetMonitor(cfg) as monitor:
        deadline = time.monotonic() + 15
        states = [monitor.state.hosts[name] for name in hosts if name != "bastion"]
        while any(s.retry_at is None for s in states) and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        assert all(s.retry_at is not None for s in states), [s.error for s in states]
        assert all("bastion" in (s.error or "") for s in states), [s.error for s in states]
        delays = [s.retry_at - s.since for s in states]
    assert all(BASE_S <= d <= 3 * BASE_S + 0.5 for d in delays), delays
    # no two in lockstep: each delay its own draw. Not to the millisecond: 12 draws from [1 s, 3 s]
    # share a millisecond by chance once in ~30 runs (the birthday problem); to the microsecond,
    # once in ~30,000
    assert len({round(d, 6) for d in delays}) == len(delays), delays
