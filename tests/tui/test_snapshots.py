"""Pixel snapshots of the main screens from a recorded fleet (fixed data, fixed clock).

Update after an intended change with: pytest tests/tui/test_snapshots.py --snapshot-update
"""

from __future__ import annotations

import pytest

from sglconsole.actions import Plan
from sglconsole.tui.app import make_app
from sglconsole.tui.coalesce import router_key
from sglconsole.tui.replay import Replay, load
from sglconsole.tui.screens.confirm import ConfirmScreen
from tests.tui.conftest import DATA

SMALL, LARGE = (80, 24), (160, 48)

RESTORE_PLAN = Plan(
    "restore",
    "ct129:30000",
    [
        "host ct129, port 30000, profile qwen27b-tp2-mtp",
        "stop: pid 9 (/srv/ml-env/bin/python3 -m sglang.launch_server "
        "--model-path /srv/models/Qwen3.6-27B "
        "--tp-size 2 --speculative-algo NEXTN --speculative-num-draft-tokens 2 "
        "--speculative-num-steps 1)",
        "launch (nohup): CUDA_VISIBLE_DEVICES=0,1 "
        "/srv/ml-env/bin/python3 -m "
        "sglang.launch_server --model-path /srv/models/Qwen3.6-27B --port 30000 --tp-size 2 "
        "--speculative-algorithm NEXTN --speculative-num-steps 3 --speculative-num-draft-tokens 4",
        "log: /srv/logs/sglang-30000.log",
        "preflight runs first; if it fails nothing is touched",
        "then: wait for ready, probe, compare with the baseline",
    ],
)


def select(key, *keys):
    async def run_before(pilot):
        pilot.app.main.tree.select(key)
        await pilot.pause()
        await pilot.press(*keys)
        await pilot.pause(0.2)

    return run_before


@pytest.mark.parametrize("size", [SMALL, LARGE], ids=["80x24", "160x48"])
def test_fleet_overview(snap_compare, demo_replay, size):
    assert snap_compare(
        make_app(None, replay=demo_replay), terminal_size=size, run_before=select(("h200x4", None))
    )


@pytest.mark.parametrize("size", [SMALL, LARGE], ids=["80x24", "160x48"])
def test_server_detail_with_drift(snap_compare, demo_replay, size):
    app = make_app(None, replay=demo_replay)
    assert snap_compare(app, terminal_size=size, run_before=select(("ct129", 30000), "d"))


def test_log_view(snap_compare, demo_replay):
    app = make_app(None, replay=demo_replay)
    assert snap_compare(app, terminal_size=SMALL, run_before=select(("ct129", 30000), "l"))


def test_confirmation_dialog(snap_compare, demo_replay):
    async def run_before(pilot):
        pilot.app.main.tree.select(("ct129", 30000))
        pilot.app.push_screen(ConfirmScreen(RESTORE_PLAN))
        await pilot.pause(0.2)

    assert snap_compare(
        make_app(None, replay=demo_replay), terminal_size=SMALL, run_before=run_before
    )


def test_help(snap_compare, demo_replay):
    assert snap_compare(
        make_app(None, replay=demo_replay),
        terminal_size=LARGE,
        run_before=select(("ct129", None), "question_mark"),
    )


@pytest.fixture
def router_replay() -> Replay:
    """A routed host behind the real sglang-router, recorded (tests/tui/data/README.md)."""
    return Replay(load(DATA / "router.jsonl"), to_end=True)


@pytest.mark.parametrize("size", [SMALL, LARGE], ids=["80x24", "160x48"])
def test_router_node(snap_compare, router_replay, size):
    """The router `front`: r1:30000 listed but down, r1:30001 up but serving nobody."""
    app = make_app(None, replay=router_replay)
    assert snap_compare(app, terminal_size=size, run_before=select(router_key("front")))


def test_server_serving_nobody(snap_compare, router_replay):
    app = make_app(None, replay=router_replay)
    assert snap_compare(app, terminal_size=LARGE, run_before=select(("r1", 30001)))
