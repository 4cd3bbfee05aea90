"""The right-hand pane when a host is selected: all its GPUs and servers at once."""

from __future__ import annotations

from rich.console import Group
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

from sglconsole.state.fleet import HostState
from sglconsole.tui.paint.host import SECTIONS, host_sections
from sglconsole.tui.widgets.common import palette, show, width


class HostPane(VerticalScroll):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.host: HostState | None = None
        self._now = 0.0

    def compose(self):
        # one Static per section: a new GPU sample repaints the GPU table, not the whole pane
        with Vertical(id="host-body"):
            for name in SECTIONS:
                yield Static(id=f"host-{name}", classes="host-section")

    def show(self, host: HostState, now: float) -> None:
        self.host = host
        self.update_view(now)

    def update_view(self, now: float) -> None:
        self._now = now
        if self.host is None:
            return
        cells = width(self)
        parts = host_sections(self.host, palette(self), now, cells)
        for name in SECTIONS:
            static = self.query_one(f"#host-{name}", Static)
            if static.display != bool(parts[name]):
                static.display = bool(parts[name])  # an empty section takes no line
            if parts[name]:
                show(static, Group(*parts[name]), cells)

    def on_resize(self) -> None:
        self.update_view(self._now)
