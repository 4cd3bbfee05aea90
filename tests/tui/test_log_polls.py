"""The log view says whether it is condensed or raw, `v` switches, and condensed it tells the
console's own status polls (GET /health, /metrics, ...) in one line per run, keeping the rest."""

from __future__ import annotations

import re

from sglconsole import config
from sglconsole.tui.app import make_app
from sglconsole.tui.replay import Replay, load
from tests.tui.conftest import DATA
from tests.tui.helpers import log_lines, shown, until

# an access line of one of the console's polls that succeeded, as uvicorn (and the sim) write it
POLL_LINE = re.compile(r'"GET /(health|ready|metrics|model_info|server_info|v1/loads)\b[^"]*" 200')


def open_polls(app) -> str:
    """The run of polls still going on, shown under the log."""
    found = app.main.server_pane.log.query("#log-open-polls")
    return shown(app, "#log-open-polls") if found and found.first().display else ""


async def test_the_log_says_condensed_or_raw_and_v_switches():
    replay = Replay(load(DATA / "demo.jsonl"), speed=0.001)
    app = make_app(None, replay=replay)
    async with app.run_test(size=(100, 30)) as pilot:
        replay.until(replay.recording.start + 60)
        await until(pilot, lambda: replay.fleet.server("ct129", 30000).process, 5, "ct129:30000")
        app.main.tree.select(("ct129", 30000))
        await pilot.pause()
        await pilot.press("l")
        await until(pilot, lambda: any(" accept " in line for line in log_lines(app)), 5, "log")
        assert "condensed (v: raw)" in shown(app, "#log-status")
        await pilot.press("v")
        await until(pilot, lambda: "raw (v: condensed)" in shown(app, "#log-status"), 5, "raw")
        assert any("Decode batch" in line for line in log_lines(app))  # as SGLang wrote
        await pilot.press("v")
        await until(
            pilot, lambda: "condensed (v: raw)" in shown(app, "#log-status"), 5, "condensed"
        )
        assert not any("Decode batch" in line for line in log_lines(app))


async def test_the_consoles_own_polls_are_one_line_per_run_and_v_shows_them(demo_fleet):
    app = make_app(config.load(demo_fleet.config_path))
    async with app.run_test(size=(160, 48)) as pilot:
        await until(
            pilot,
            lambda: (s := app.session.fleet.server("ct129", 30000)) is not None and s.process,
            40,
            "ct129:30000 running",
        )
        app.main.tree.select(("ct129", 30000))
        await pilot.press("l")

        def polls_told():
            summaries = [line for line in log_lines(app) if "status poll" in line]
            return summaries or "status poll" in open_polls(app)

        await until(pilot, polls_told, 20, "a run of polls in one line")
        await until(
            pilot, lambda: any("tok/s accept" in line for line in log_lines(app)), 10, "decode"
        )
        assert not any(POLL_LINE.search(line) for line in log_lines(app)), log_lines(app)[-10:]
        assert "condensed (v: raw)" in shown(app, "#log-status")

        await pilot.press("v")
        await until(
            pilot,
            lambda: any(POLL_LINE.search(line) for line in log_lines(app)),
            10,
            "the polls as SGLang wrote them",
        )
        assert "raw (v: condensed)" in shown(app, "#log-status")
        assert not any("status poll" in line for line in log_lines(app)) and not open_polls(app)
