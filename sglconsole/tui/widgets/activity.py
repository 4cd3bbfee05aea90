"""Progress of the latest action, and the session's history (actions and alerts)."""

from __future__ import annotations

from textual.containers import VerticalScroll
from textual.widgets import Static

from sglconsole.tui.history import ActionRecord
from sglconsole.tui.paint import activity
from sglconsole.tui.widgets.common import palette


class ActivityView(VerticalScroll):
    def compose(self):
        yield Static(id="activity-body")

    def show(self, entries: list, audit: list[dict] | None = None, running=()) -> None:
        self.query_one("#activity-body", Static).update(
            activity.history(entries, palette(self), audit, running)
        )


class ProgressPanel(VerticalScroll):
    """Docked under the detail view while an action runs, and after, until Escape or until another
    server is selected. Scrolls to follow the running step; shows the outcome when done."""

    record: ActionRecord | None = None

    def compose(self):
        yield Static(id="progress")

    def show(self, record: ActionRecord) -> None:
        self.record = record
        self.display = True
        self.query_one("#progress", Static).update(activity.progress(record, palette(self)))
        # the running step is the newest, at the end; once done, the outcome heads the panel
        follow = self.scroll_end if record.running else self.scroll_home
        self.call_after_refresh(follow, animate=False, immediate=True)

    def close(self) -> None:
        self.display = False
