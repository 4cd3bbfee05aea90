"""The console driven by keys against the simulated demo fleet over real SSH.

These share the session's demo fleet and never change it; tests that change a
host start a fleet of their own (tests/tui/test_actions_live.py).
"""

from __future__ import annotations

import time

from sglconsole import config
from sglconsole.state.fleet import Status
from sglconsole.tui.app import DRAWN_S, TICK_S, make_app
from sglconsole.tui.screens.confirm import ConfirmScreen
from sglconsole.tui.widgets.key_bar import KeyBar
from tests.tui.helpers import actions_done, log_lines, plain, shown, until

SMALL, LARGE = (80, 24), (160, 48)


def app_on(fleet, **kwargs):
    return make_app(config.load(fleet.config_path), **kwargs)


def running(app, host="ct129", port=30000):
    server = app.session.fleet.server(host, port)
    return server is not None and server.process is not None


def slow_and_compared(app):
    server = app.session.fleet.server("ct129", 30000)
    return server is not None and server.status == Status.SLOW and server.drift is not None


async def test_n_finds_the_slow_server_and_j_k_J_move_through_the_fleet(demo_fleet):
    app = app_on(demo_fleet)
    async with app.run_test(size=SMALL) as pilot:
        await until(pilot, lambda: slow_and_compared(app), 40, "ct129:30000 SLOW with its diff")
        assert app.main.selected == ("ct129", None)
        await pilot.press("n")
        await until(
            pilot, lambda: app.main.selected == ("ct129", 30000), 5, "n to select ct129:30000"
        )
        header = shown(app, "#server-header")
        assert (
            "ct129:30000" in header
            and "SLOW" in header
            and "why:" in header
            and "vs 64 baseline" in header
            and "config differs" in header  # SLOW does not hide the drift
        )
        await pilot.press("j")
        assert app.main.selected == ("h200x4", None)
        host = shown(app, "#host-body")
        assert all(f"3000{i}" in host for i in range(4)) and "DOWN" in host and "H200" in host
        await pilot.press("k")  # up, as in vim: not a kill dialog
        assert app.main.selected == ("ct129", 30000) and app.screen is app.main
        await pilot.press("j", "J")  # J still goes up
        assert app.main.selected == ("ct129", 30000)
        await pilot.press("J")
        assert "container sees host PIDs" in shown(app, "#host-body")  # the LXC note


async def test_hosts_off_screen_are_redrawn_at_the_clock_tick_not_at_each_change(demo_fleet):
    """The demo's hosts change all the time (GPU samples, decode lines): what is not on screen
    waits for the app's 1 s tick (or the next redraw of the host on screen, which takes every
    change); only a change of the host on screen is drawn at once. A tick right after that redraw
    draws nothing of its own (an idle fleet was drawn twice a second)."""
    app = app_on(demo_fleet)
    async with app.run_test(size=LARGE) as pilot:
        await until(pilot, lambda: slow_and_compared(app), 40, "ct129:30000 SLOW with its diff")
        assert app.main.selected == ("ct129", None)
        redrawn: list[set[str]] = []
        flushed: list[tuple[float, bool]] = []  # (when, by the tick)
        redraw, flush = app.main.redraw, app.flush_changes

        def counted(hosts: set[str]) -> None:
            redrawn.append(set(hosts))
            redraw(hosts)

        def noted(tick: bool = False) -> None:
            flushed.append((time.monotonic(), tick))
            flush(tick)

        app.main.redraw, app.flush_changes = counted, noted
        began = time.monotonic()
        await pilot.pause(5)
        took = time.monotonic() - began
        others = [hosts for hosts in redrawn if hosts - {"ct129"}]
        assert others, f"no change of another host was drawn: {redrawn}"
        # one a tick (TICK_S = 1 s), and one more where the window cuts a tick in two
        assert len([hosts for hosts in others if "ct129" not in hosts]) <= took / TICK_S + 1
        gaps = [
            (after - before, tick)
            for (before, _), (after, tick) in zip(flushed, flushed[1:], strict=False)
        ]
        assert any(not tick for _, tick in gaps), flushed  # the host on screen was drawn at once
        assert all(gap >= DRAWN_S - 0.05 for gap, tick in gaps if tick), gaps


async def test_d_shows_the_diff_with_the_speed_differences_first(demo_fleet):
    app = app_on(demo_fleet)
    async with app.run_test(size=LARGE) as pilot:
        await until(pilot, lambda: slow_and_compared(app), 40, "ct129:30000 SLOW with its diff")
        app.main.tree.select(("ct129", 30000))
        await pilot.press("d")
        await pilot.pause()
        assert app.main.server_pane.tab == "config"
        diff = shown(app, "#drift-panel .panel-body")
        rows = [line for line in diff.splitlines() if "--" in line or "$" in line]
        assert rows[0].split()[:4] == ["≠", "--speculative-num-draft-tokens", "4", "2"], diff
        assert diff.index("--speculative-num-steps") < diff.index("--model-path")
        # 0.5.23 does not read SGLANG_ENABLE_SPEC_V2: the profile no longer sets it; the missing
        # request cap is the other speed difference
        assert "--max-running-requests" in diff and "sglang 0.5.23 satisfies" in diff
        assert "SPEC_V2" not in diff


async def test_slash_filters_the_log_and_escape_clears_the_filter(demo_fleet):
    app = app_on(demo_fleet)
    async with app.run_test(size=LARGE) as pilot:
        await until(pilot, lambda: running(app), 40, "ct129:30000 running")
        app.main.tree.select(("ct129", 30000))
        await pilot.press("l")
        await until(
            pilot,
            lambda: any("tok/s accept" in line for line in log_lines(app)),
            10,
            "decode lines",
        )
        await pilot.press("slash", *"prefill batch")
        await until(
            pilot, lambda: app.main.server_pane.log.needle == "prefill batch", 5, "the filter"
        )
        lines = [line for line in log_lines(app) if line.strip()]
        assert lines and all(" prefill " in line for line in lines), (
            lines
        )  # condensed prefill lines only
        assert not any("tok/s accept" in line for line in log_lines(app))
        await pilot.press("enter")
        assert app.main.server_pane.log.needle == "prefill batch"  # Enter keeps the filter
        await pilot.press("escape")
        await until(
            pilot,
            lambda: any("tok/s accept" in line for line in log_lines(app)),
            5,
            "unfiltered log",
        )
        assert not app.main.server_pane.log.filtering


async def test_p_probes_in_a_worker_and_records_the_result(demo_fleet):
    app = app_on(demo_fleet)
    async with app.run_test(size=LARGE) as pilot:
        await until(
            pilot,
            lambda: (s := app.session.fleet.server("h200x4", 30000)) and s.status == Status.UP,
            40,
            "h200x4:30000 UP",
        )
        app.main.tree.select(("h200x4", 30000))
        await pilot.pause()
        await pilot.press("p")
        assert not isinstance(app.screen, ConfirmScreen)  # probing changes nothing: no confirmation
        await until(pilot, lambda: actions_done(app), 60, "the probe")
        record = actions_done(app)[-1]
        assert record.action == "probe" and record.target == "h200x4:30000"
        assert [s.name for s in record.stages][:3] == ["inspect", "forward", "answer"]
        assert app.session.fleet.server("h200x4", 30000).probe is not None
        assert "probe" in shown(app, "#server-header") and "probe h200x4:30000" in shown(
            app, "#progress"
        )


async def test_read_only_hides_every_action_that_changes_a_host(demo_fleet):
    app = app_on(demo_fleet, read_only=True)
    async with app.run_test(size=LARGE, notifications=True) as pilot:
        await until(pilot, lambda: running(app), 40, "ct129:30000 running")
        app.main.tree.select(("ct129", 30000))
        await pilot.pause()
        keys = app.main.query_one(KeyBar).keys_text().plain
        assert "Probe" in keys and "Diff" in keys and "READ-ONLY" in shown(app, "#top-bar")
        assert "Pause/play" not in keys and "space" not in keys  # a replay's key, not a fleet's
        for word in ("Kill", "Restore", "Relaunch", "Rollback", "Capture", "Read-only"):
            assert word not in keys
        # every message as it is posted: a toast expires after 5 s, and on a busy machine (the
        # suite's parallel workers) the first one was gone before the fifth key was read
        said: list[str] = []
        notify = app.notify
        app.notify = lambda message, *args, **kwargs: (  # type: ignore[method-assign]
            said.append(str(message)),
            notify(message, *args, **kwargs),
        )
        for key in ("ctrl+k", "R", "r", "u", "c"):
            await pilot.press(key)
            await pilot.pause(0.2)
            assert app.screen is app.main and not app.session.busy
        assert actions_done(app) == []
        # none of them is silent: each says why it does nothing
        for name in ("kill", "restore", "relaunch", "rollback", "capture"):
            assert f"read-only: {name} is off (started with --read-only or L)" in said, said
        palette = {c.title for c in app.get_system_commands(app.main)}
        assert not any(t.startswith(("Kill", "Restore")) for t in palette) and any(
            t.startswith("Diff") for t in palette
        )


async def test_L_asks_first_then_locks_the_console_read_only_for_good(demo_fleet):
    app = app_on(demo_fleet)
    async with app.run_test(size=LARGE, notifications=True) as pilot:
        await until(pilot, lambda: running(app), 40, "ct129:30000 running")
        app.main.tree.select(("ct129", 30000))
        await pilot.pause()
        assert "Restore" in app.main.query_one(KeyBar).keys_text().plain
        await pilot.press("L")  # a slip next to l: it asks, and says it is for good
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), 5, "L's confirmation")
        text = "\n".join(plain(w.content) for w in app.screen.query("#dialog Static"))
        assert "cannot be undone in this session" in text, text
        await pilot.press("n")
        await pilot.pause()
        assert app.screen is app.main and not app.session.read_only
        await pilot.press("L")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), 5, "L's confirmation")
        await pilot.press("y")
        await pilot.pause()
        assert (
            app.session.read_only and "Restore" not in app.main.query_one(KeyBar).keys_text().plain
        )
        assert app.main.check_action("lock", ()) is False  # nothing turns it off
        await pilot.press("R")
        await pilot.pause(0.2)
        assert app.screen is app.main and not app.session.busy
        said = [n.message for n in app._notifications]
        assert "read-only: restore is off (started with --read-only or L)" in said, said
