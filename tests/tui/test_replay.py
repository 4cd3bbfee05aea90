"""The console on a recorded fleet: read-only, alerts, an unreachable host, the replay command."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from sglconsole.alerts.tracker import HOLD_S
from sglconsole.config import Config
from sglconsole.state.fleet import Status
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


def held_on(tmp_path, seconds: int = 8) -> Path:
    """demo.jsonl recorded `seconds` longer: old059:30000's samples go on, so the LOOPING it
    turns at the very end holds past the alert's hold time (in the recording's own time)."""
    lines = (DATA / "demo.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in lines[1:]]
    last = [e for e in events if e["kind"] == "sample" and e["host"] == "old059"][-1]
    tail = [json.dumps({**last, "t": events[-1]["t"] + step}) for step in range(1, seconds + 1)]
    path = tmp_path / "held.jsonl"
    path.write_text("\n".join(lines + tail) + "\n")
    return path


def looping_at(replay: Replay) -> float:
    """When the recording turns old059:30000 LOOPING for the last time."""
    return [
        e["t"]
        for e in replay.recording.events
        if e["kind"] == "server" and e["host"] == "old059" and e["set"].get("status") == "LOOPING"
    ][-1]


async def test_a_problem_on_another_host_notifies_and_runs_the_alert_command(tmp_path):
    out = tmp_path / "events"
    script = f"import sys; open({str(out)!r}, 'a').write(sys.stdin.read())"
    recording = load(held_on(tmp_path))
    recording.config = Config(
        recording.config.model.model_copy(update={"alert_command": [sys.executable, "-c", script]}),
        None,
    )
    replay = Replay(recording, speed=4)
    app = make_app(None, replay=replay)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        app.main.tree.select(("h200x4", 30001))
        await until(pilot, lambda: out.exists() and out.read_text(), 20, "the alert command")
        assert '"to": "LOOPING"' in out.read_text() and '"host": "old059"' in out.read_text()
        alerts = [e for e in app.session.history if isinstance(e, AlertRecord)]
        assert [(a.target, a.new) for a in alerts] == [("old059:30000", "LOOPING")]
        assert any("old059:30000" in n.message for n in app._notifications)


async def test_replay_alerts_come_from_the_recordings_clock_at_any_speed(tmp_path):
    """At 1000x the whole recording passes in one tick of the screen: a wall-clock sweep saw
    only its last moment (no alert); the recording's moments give the alert at its own time."""
    replay = Replay(load(held_on(tmp_path)), speed=1000)
    app = make_app(None, replay=replay)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await until(pilot, lambda: replay.ended, 10, "the end of the recording")

        def alerts() -> list[AlertRecord]:
            return [e for e in app.session.history if isinstance(e, AlertRecord)]

        await until(pilot, alerts, 5, "the recording's alert, taken at the app's next tick")
        await pilot.pause(1.5)  # a tick more: nothing else comes
        found = alerts()
        assert [(a.target, a.new) for a in found] == [("old059:30000", "LOOPING")]
        held = found[0].time - looping_at(replay)  # the hold, by the recording's clock
        assert HOLD_S <= held <= HOLD_S + 1.0, held
        assert any("the recording ended" in n.message for n in app._notifications)


async def test_space_pauses_and_brackets_seek_the_replay():
    replay = Replay(load(DATA / "demo.jsonl"))
    start = replay.recording.start
    app = make_app(None, replay=replay)
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        keys = app.main.query_one(KeyBar).keys_text().plain
        assert "Pause/play" in keys and "-10s" in keys and "+10s" in keys, keys
        await pilot.press("space")
        assert replay.paused and "PAUSED" in shown(app, "#top-bar")
        held = replay.now
        await pilot.pause(0.6)
        assert replay.now == held  # paused: the recording's clock stands still
        await pilot.press("right_square_bracket")
        await pilot.pause()
        assert abs(replay.now - (held + 10)) < 0.01
        assert replay.paused and any("replay at" in n.message for n in app._notifications)
        await pilot.press("left_square_bracket", "left_square_bracket")
        await pilot.pause()
        assert replay.now == start  # back to the start: rebuilt from the recording
        assert replay.fleet.server("old059", 30000).status == Status.UNKNOWN
        await pilot.press("right_square_bracket", "right_square_bracket")
        await pilot.pause()
        assert replay.fleet.server("old059", 30000).status == Status.UP  # as at 20 s in
        assert not [e for e in app.session.history if isinstance(e, AlertRecord)]
        await pilot.press("space")
        await until(pilot, lambda: replay.now > start + 20.5, 5, "playing on")
        assert "PAUSED" not in shown(app, "#top-bar")


async def test_replay_keys_are_not_offered_on_a_live_fleet():
    from sglconsole.tui import gating

    live = gating.Facts(None, False, False, False, live=True)
    assert gating.state("replay_pause", live) is False
    assert gating.state("replay_seek", live) is False


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
