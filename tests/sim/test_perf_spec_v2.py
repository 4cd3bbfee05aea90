"""The simulator's speed model treats SGLANG_ENABLE_SPEC_V2 as each release does (its env
table, from its own sglang/srt/environ.py): 0.5.9 default off (=1 selects the faster V2),
0.5.12 default on (only =0 selects V1), 0.5.23 does not read it (V2 is the only worker)."""

from __future__ import annotations

from sglconsole.sim.server import perf

ARGS = {"speculative_algorithm": "NEXTN", "speculative_num_steps": 3, "tp_size": 2}


def step(version: str, env: dict) -> float:
    return perf.build(ARGS, env, "A6000", 27.0, version=version).step_time(1)


def test_0_5_23_does_not_read_the_switch():
    assert step("0.5.23", {}) == step("0.5.23", {"SGLANG_ENABLE_SPEC_V2": "0"})
    assert step("0.5.23", {}) == step("0.5.23", {"SGLANG_ENABLE_SPEC_V2": "1"})


def test_0_5_12_is_on_by_default_and_only_0_is_slower():
    assert step("0.5.12", {}) == step("0.5.12", {"SGLANG_ENABLE_SPEC_V2": "1"})
    assert step("0.5.12", {"SGLANG_ENABLE_SPEC_V2": "0"}) > step("0.5.12", {})


def test_0_5_9_is_off_by_default():
    assert step("0.5.9", {}) > step("0.5.9", {"SGLANG_ENABLE_SPEC_V2": "1"})
    assert step("0.5.9", {"SGLANG_ENABLE_SPEC_V2": "1"}) == step("0.5.23", {})
