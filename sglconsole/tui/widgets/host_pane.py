"""The right-hand pane when a host is selected: all its GPUs and servers at once."""

from __future__ import annotations

from textual.containers import VerticalScroll
from textual.widgets import Static

from sglconsole.state.fleet import HostState
from sglconsole.tui.paint.host import host_view
from sglconsole.tui.widgets.common import palette, show, width


class HostPane(VerticalScroll):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.host: HostState | None = None
        self._now = 0.0

    def compose(self):
        yield Static(id="host-body")

    def show(self, host: HostState, now: float) -> None:
        self.host = host
        self.update_view(now)

    def update_view(self, now: float) -> None:
        self._now = now
        if self.host is not None:
            body = self.query_one("#host-body", Static)
            show(body, host_view(self.host, palette(self), now, width(self)), width(self))

    def on_resize(self) -> None:
        self.update_view(self._now)
