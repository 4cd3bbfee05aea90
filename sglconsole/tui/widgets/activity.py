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

    def show(self, entries: list) -> None:
        self.query_one("#activity-body", Static).update(activity.history(entries, palette(self)))


class ProgressPanel(Static):
    """Docked under the detail view while an action runs, and after, until Escape."""

    def show(self, record: ActionRecord) -> None:
        self.display = True
        self.update(activity.progress(record, palette(self)))

    def close(self) -> None:
        self.display = False
