"""Issue 31's smaller TUI items: Activity closes as it opens, help names every host line."""

from __future__ import annotations

from textual.widgets import ContentSwitcher

from sglconsole.tui.app import make_app
from tests.tui.helpers import plain


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
