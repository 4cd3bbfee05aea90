"""Reading the log while it moves: the filter matches what is on screen, and scrolling up pauses
following (like `less +F`) with a count of the lines that came meanwhile."""

from __future__ import annotations

import re

from sglconsole.tui.app import make_app
from sglconsole.tui.replay import Replay, load
from tests.tui.conftest import DATA
from tests.tui.helpers import log_lines, shown, until


async def open_log(pilot, app, replay, seconds: float):
    replay.until(replay.recording.start + seconds)
    await until(pilot, lambda: replay.fleet.server("ct129", 30000).process, 5, "ct129:30000")
    app.main.tree.select(("ct129", 30000))
    await pilot.pause()
    await pilot.press("l")
    await until(pilot, lambda: len(log_lines(app)) > 20, 5, "log lines")


async def test_the_filter_matches_the_condensed_text_on_screen():
    replay = Replay(load(DATA / "demo.jsonl"), speed=0.001)
    app = make_app(None, replay=replay)
    async with app.run_test(size=(100, 30)) as pilot:
        await open_log(pilot, app, replay, 60)
        condensed = [line for line in log_lines(app) if " accept " in line]
        assert condensed, log_lines(app)[-5:]
        needle = re.search(r"accept \d", condensed[-1]).group(0)  # not in SGLang's raw text
        await pilot.press("slash", *needle)
        await until(
            pilot,
            lambda: log_lines(app) and all(needle in line for line in log_lines(app)),
            5,
            needle,
        )
        assert len(log_lines(app)) >= 1


async def test_scrolling_up_pauses_following_and_counts_new_lines():
    replay = Replay(load(DATA / "demo.jsonl"), speed=0.001)
    app = make_app(None, replay=replay)
    async with app.run_test(size=(100, 30)) as pilot:
        await open_log(pilot, app, replay, 10)
        lines = app.main.server_pane.log.lines
        lines.focus()
        await pilot.press("pageup")
        await pilot.pause(0.3)
        assert "paused" in shown(app, "#log-status")
        top = lines.scroll_y
        replay.until(replay.recording.start + 40)  # the recorded log grows until ~30 s
        await until(
            pilot, lambda: "new line" in shown(app, "#log-status"), 5, "the count of waiting lines"
        )
        assert lines.scroll_y == top  # what the reader looks at did not move
        await pilot.press("end")
        await until(pilot, lambda: "following" in shown(app, "#log-status"), 5, "following again")


async def test_only_the_reader_pauses_the_log_not_a_new_server_or_a_resize():
    """The log used to pause by itself: the next server's log opened paused, and a resize (the
    progress panel of a restore appearing) paused it, stuck on SGLang's long server_args line."""
    replay = Replay(load(DATA / "demo.jsonl"), speed=0.001)
    app = make_app(None, replay=replay)
    async with app.run_test(size=(100, 30)) as pilot:
        await open_log(pilot, app, replay, 60)
        await pilot.pause(0.3)
        assert "following" in shown(app, "#log-status")
        for size in ((100, 24), (80, 24), (100, 30)):  # rewrapped: every line written again
            await pilot.resize_terminal(*size)
            await pilot.pause(0.3)
            assert "following" in shown(app, "#log-status"), size
        for key in (("h200x4", 30000), ("ct129", 30000), ("old059", 30000)):
            app.main.tree.select(key)
            await pilot.pause(0.3)
            assert "following" in shown(app, "#log-status"), key
            lines = app.main.server_pane.log.lines
            assert lines.scroll_y >= lines.max_scroll_y - 1, key  # at the end, where it follows
        replay.until(replay.recording.start + 120)
        await pilot.pause(0.5)
        assert "following" in shown(app, "#log-status")
        lines = app.main.server_pane.log.lines
        lines.focus()
        await pilot.press("pageup")  # the reader scrolls: that pauses
        await pilot.pause(0.3)
        assert "paused" in shown(app, "#log-status")
