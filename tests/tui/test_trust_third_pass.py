"""Issue 31's smaller TUI items: Activity closes as it opens, help names every host line."""

from __future__ import annotations

import asyncio
import re

import yaml
from textual.theme import BUILTIN_THEMES
from textual.widgets import ContentSwitcher

from sglconsole import config
from sglconsole.core.drift import Report, Row, State
from sglconsole.sim.fleet.scenarios import demo_hosts
from sglconsole.tui.app import make_app
from sglconsole.tui.paint.drift import rows_table
from sglconsole.tui.paint.palette import palette_of
from sglconsole.tui.replay import Replay, load
from sglconsole.tui.widgets.key_bar import KeyBar
from tests.tui.conftest import DATA
from tests.tui.helpers import plain, shown, until


async def test_activity_closes_with_a_and_with_escape(demo_replay):
    app = make_app(None, replay=demo_replay)
    async with app.run_test(size=(120, 36)) as pilot:
        app.main.tree.select(("ct129", 30000))
        await pilot.pause()
        views = app.main.query_one(ContentSwitcher)
        for close in ("a", "escape"):
            await pilot.press("a")
            await pilot.pause()
            assert views.current == "activity-view"
            await pilot.press(close)
            await pilot.pause()
            assert views.current == "server-view", close  # back to what is selected


async def test_help_says_what_an_orphan_line_means(demo_replay):
    app = make_app(None, replay=demo_replay)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        body = plain(app.screen.query_one("#help-body Static").content)
        assert "ORPHAN" in body and "GPU memory nobody accounts for" in body, body


async def test_an_unreachable_host_without_servers_is_counted_in_the_top_bar(demo_fleet, tmp_path):
    data = yaml.safe_load(demo_fleet.config_path.read_text())
    # nothing listens on port 9 of loopback: connect is refused at once
    data["hosts"]["spare"] = {"address": "127.0.0.1", "port": 9, "connect_timeout": 2}
    path = tmp_path / "hosts.yaml"
    path.write_text(yaml.safe_dump(data))
    app = make_app(config.load(path))
    async with app.run_test(size=(160, 48)) as pilot:
        spare = app.session.fleet.hosts["spare"]
        await until(pilot, lambda: spare.reachable is False, 20, "spare UNREACHABLE")
        # counted at the next redraw: wait for it, not a fixed pause (a loaded machine is slower)
        counted = lambda: re.search(r"UNREACHABLE\s+1 host\b", shown(app, "#top-bar"))  # noqa: E731
        await until(pilot, counted, 10, "the top bar to count the unreachable host")
        top = shown(app, "#top-bar")  # the demo's own hosts answer: the spare is the one
        assert re.search(r"UNREACHABLE\s+1 host\b", top) and spare.reachable is False, top


async def test_the_gpu_tab_shows_no_numbers_while_its_host_is_unreachable(fleet_factory):
    (old059,) = [host for host in demo_hosts(startup_s=0.5) if host.name == "old059"]
    fleet = fleet_factory([old059])
    app = make_app(config.load(fleet.config_path))
    async with app.run_test(size=(160, 48)) as pilot:
        app.main.tree.select(("old059", 30000))

        def gpu_tab() -> str:
            return plain(app.main.query_one("#gpu-panel .panel-body").content)

        await until(pilot, lambda: "%" in gpu_tab(), 30, "the GPU table with numbers")
        host = app.session.fleet.hosts["old059"]
        rebooting = asyncio.create_task(asyncio.to_thread(fleet.reboot, "old059", 12.0))
        await until(pilot, lambda: host.reachable is False, 40, "old059 UNREACHABLE")
        # the tables' next refresh: wait for it, not a fixed pause
        await until(pilot, lambda: "no GPU numbers" in gpu_tab(), 10, "the GPU tab's refresh")
        shown_now = gpu_tab()
        assert "no GPU numbers while UNREACHABLE" in shown_now and "%" not in shown_now, shown_now
        await rebooting


async def test_at_80_columns_the_footer_still_has_every_key_that_applies(demo_fleet):
    app = make_app(config.load(demo_fleet.config_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await until(
            pilot,
            lambda: (s := app.session.fleet.server("ct129", 30000)) and s.process,
            40,
            "ct129:30000 running",
        )
        app.main.tree.select(("ct129", 30000))
        await pilot.pause(0.3)
        bar = app.main.query_one(KeyBar)
        keys = bar.keys_text().plain
        assert bar.keys_text().cell_len <= 80, keys
        # the least useful lose their label, not their key
        for key in ("R", "r", "u", "^k", "p", "d", "l", "g", "/", "a"):
            assert f" {key} " in keys, (key, keys)
        assert "Help" in keys and "Quit" in keys and "Next problem" in keys, keys


def test_a_model_path_in_the_config_tab_breaks_at_a_slash_or_hyphen_never_mid_name():
    path = "/srv/models/deployments/2026-12/Qwen3-Next-80B-A3B-Instruct-FP8"
    report = Report(
        rows=[
            Row(
                kind="flag",
                name="model_path",
                flag="--model-path",
                profile=path,
                running=path,
                resolved=path,
                state=State.SAME,
                performance=False,
            ),
            Row(
                kind="flag",
                name="tp_size",
                flag="--tp-size",
                profile="2",
                running="1",
                resolved="1",
                state=State.DIFFERENT,
                performance=True,
            ),
        ]
    )
    words = set(re.split(r"[/-]", path)) - {""}
    for width in (50, 60, 80, 100):
        table = plain(rows_table(report, palette_of(BUILTIN_THEMES["textual-dark"]), width), width)
        pieces = [
            w
            for line in table.splitlines()
            for cell in line.split()
            for w in re.split(r"[/-]", cell)
        ]
        path_pieces = [
            w
            for w in pieces
            if w
            and w
            not in (
                "setting",
                "profile",
                "running",
                "resolved",
                "2",
                "1",
                "≠",
                "tp",
                "size",
                "model",
                "path",
            )
        ]
        # every piece of the path on screen is a whole word of it: no `Instruc` / `t` fold
        assert set(path_pieces) <= words, (width, table)


async def test_a_replay_says_when_its_recording_ended():
    replay = Replay(load(DATA / "demo.jsonl"), speed=1000.0)
    app = make_app(None, replay=replay)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await until(pilot, lambda: replay.ended, 30, "the recording played to its end")
        await pilot.pause(0.3)
        said = [n.message for n in app._notifications]
        assert any("the recording ended at" in message for message in said), said
