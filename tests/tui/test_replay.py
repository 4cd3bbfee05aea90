"""The console on a recorded fleet: read-only, alerts, an unreachable host, the replay command."""

from __future__ import annotations

import sys
from dataclasses import replace

from sglconsole.config import Config
from sglconsole.state.fleet import Status
from sglconsole.tui.alerts import HOLD_S
from sglconsole.tui.app import make_app
from sglconsole.tui.history import AlertRecord
from sglconsole.tui.replay import Replay, load
from sglconsole.tui.screens.confirm import ConfirmScreen
from sglconsole.tui.widgets.key_bar import KeyBar
from tests.tui.conftest import DATA
from tests.tui.helpers import log_lines, shown, until


def replay_with_alert_command(argv: list[str]) -> Replay:
    recording = load(DATA / "demo.jsonl")
    recording.config = Config(
        recording.config.model.model_copy(update={"alert_command": argv}), None
    )
    return Replay(recording, to_end=True)


async def test_a_replay_is_read_only_and_cannot_reach_hosts(demo_replay):
    app = make_app(None, replay=demo_replay)
    async with app.run_test(size=(160, 48)) as pilot:
        app.main.tree.select(("ct129", 30000))
        await pilot.pause()
        keys = app.main.query_one(KeyBar).keys_text().plain
        assert "Diff" in keys and "Log" in keys
        assert not any(word in keys for word in ("Kill", "Restore", "Probe", "Capture"))
        assert (
            app.title == "sglconsole" and app.sub_title == "sglconsole: LOOPING (3 hosts)"
        )  # old059 loops: worse than a stopped server
        assert "up 0m" in shown(
            app, "#server-header"
        )  # uptime by the recording's clock, not today's
        top = shown(app, "#top-bar")  # a replay is never taken for the fleet as it is now
        assert top.startswith(" REPLAY 12-0") and "LOOPING" in top, top


async def test_a_problem_on_another_host_notifies_and_runs_the_alert_command(tmp_path):
    out = tmp_path / "events"
    script = f"import sys; open({str(out)!r}, 'a').write(sys.stdin.read())"
    replay = replay_with_alert_command([sys.executable, "-c", script])
    app = make_app(None, replay=replay)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await pilot.pause(0.3)  # the first look at the fleet is the baseline, not news
        server = replay.fleet.server("h200x4", 30001)
        server.view = replace(server.view, status=Status.DOWN, reason="configured but not running")
        replay.fleet.changed("h200x4", 30001)
        await pilot.pause(0.3)
        replay.now += HOLD_S + 1  # the recording's clock moves on: the status held
        await until(pilot, lambda: out.exists() and out.read_text(), 10, "the alert command")
        assert '"to": "DOWN"' in out.read_text() and '"host": "h200x4"' in out.read_text()
        alerts = [e for e in app.session.history if isinstance(e, AlertRecord)]
        assert [(a.target, a.new) for a in alerts] == [("h200x4:30001", "DOWN")]
        assert any("h200x4:30001" in n.message for n in app._notifications)


async def test_an_unreachable_host_shows_its_error_and_retry_countdown(demo_replay):
    host = demo_replay.fleet.hosts["old059"]
    host.reachable, host.error, host.retry_at = False, "connect timed out", demo_replay.now + 17
    app = make_app(None, replay=demo_replay)
    async with app.run_test(size=(80, 24)) as pilot:
        app.main.tree.select(("old059", None))
        await pilot.pause()
        body = shown(app, "#host-body")
        assert "UNREACHABLE" in body and "connect timed out" in body and "retry 17s" in body
        label = app.main.tree._by_key[("old059", None)].label
        assert (
            "UNREACHABLE" in label.plain and "↻17s" in label.plain
        )  # the short form at 80 columns


async def test_f_pauses_the_log_and_catches_up_when_following_again():
    replay = Replay(load(DATA / "demo.jsonl"), speed=0.001)  # played by hand below
    start = replay.recording.start
    app = make_app(None, replay=replay)
    async with app.run_test(size=(100, 30)) as pilot:
        replay.until(start + 12)
        await until(pilot, lambda: replay.fleet.server("ct129", 30000).process, 5, "ct129:30000")
        app.main.tree.select(("ct129", 30000))
        await pilot.pause()
        await pilot.press("l")
        await until(pilot, lambda: log_lines(app), 5, "log lines")
        await pilot.press("f")
        seen = len(log_lines(app))
        replay.until(start + 30)
        await pilot.pause(0.5)
        assert len(log_lines(app)) == seen and "paused" in shown(app, "#log-status")
        await pilot.press("f")
        await until(
            pilot, lambda: len(log_lines(app)) > seen, 5, "the lines that came while paused"
        )
        assert "following" in shown(app, "#log-status")


async def test_quitting_while_an_action_runs_asks_first(demo_replay):
    app = make_app(None, replay=demo_replay)
    async with app.run_test(size=(80, 24)) as pilot:
        app.session.busy.add(("ct129", 30000))
        await pilot.press("q")
        await until(
            pilot, lambda: isinstance(app.screen, ConfirmScreen), 5, "the quit confirmation"
        )
        await pilot.press("n")
        await pilot.pause()
        assert app.is_running and app.screen is app.main
