"""The Prometheus source reads at a fixed rate: `interval` is from one read's start to the next."""

from __future__ import annotations

from sglconsole import config
from sglconsole.remote.prometheus.feed import PrometheusFeed
from sglconsole.state.fleet import FleetState


def feed(tmp_path, interval: float) -> PrometheusFeed:
    path = tmp_path / "hosts.yaml"
    path.write_text(
        f"source: {{prometheus: 'http://127.0.0.1:9', interval: {interval}}}\n"
        "profiles: {p: {args: [--model-path, /m]}}\n"
        "hosts: {h1: {address: h1.example, servers: [{port: 30000, profile: p}]}}\n"
    )
    cfg = config.load(path)
    return PrometheusFeed(cfg.model.source, FleetState(cfg))


def test_a_slow_read_is_not_added_to_the_interval(tmp_path):
    every_second = feed(tmp_path, 1.0)
    assert every_second.wait_after(0.25) == 0.75
    assert every_second.wait_after(0.0) == 1.0
    assert every_second.wait_after(1.5) == 0.0  # slower than the interval: the next one at once
