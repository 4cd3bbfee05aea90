"""The right-hand pane when a router is selected: its reachability and its workers."""

from __future__ import annotations

from textual.containers import VerticalScroll
from textual.widgets import Static

from sglconsole.state.fleet import FleetState
from sglconsole.tui.paint.router import router_view
from sglconsole.tui.widgets.common import palette, show, width


class RouterPane(VerticalScroll):
    def __init__(self, fleet: FleetState, **kwargs):
        super().__init__(**kwargs)
        self.fleet = fleet
        self.router: str | None = None
        self._now = 0.0

    def compose(self):
        yield Static(id="router-body")

    def show(self, router: str, now: float) -> None:
        self.router = router
        self.update_view(now)

    def update_view(self, now: float) -> None:
        self._now = now
        state = self.fleet.routers.get(self.router or "")
        if state is not None:
            body = self.query_one("#router-body", Static)
            show(body, router_view(state, self.fleet, palette(self), now), width(self))

    def on_resize(self) -> None:
        self.update_view(self._now)
