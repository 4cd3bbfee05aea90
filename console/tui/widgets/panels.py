"""Scrollable panels that re-render one Rich renderable from a server or host."""

from __future__ import annotations

from textual.containers import VerticalScroll
from textual.widgets import Static

from console.fleet import FleetState, ServerState
from console.tui.paint.drift import drift_view
from console.tui.paint.gpus import gpu_table
from console.tui.widgets.common import palette, width


class _Panel(VerticalScroll):
    def compose(self):
        yield Static(classes="panel-body")

    def paint(self, renderable) -> None:
        self.query_one(".panel-body", Static).update(renderable)


class DriftPanel(_Panel):
    """Re-rendered only when the comparison or the width changes: it is long and rarely changes."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._shown: tuple | None = None

    def show(self, server: ServerState) -> None:
        key = (id(server), id(server.drift), server.drift_error, width(self))
        if key != self._shown:
            self._shown = key
            self.paint(drift_view(server, palette(self), width(self)))


class GpuPanel(_Panel):
    def show(self, fleet: FleetState, server: ServerState) -> None:
        host = fleet.hosts[server.host]
        mine = server.process.gpus if server.process else tuple(server.config.gpus if server.config else ())
        self.paint(gpu_table(host, palette(self), width(self), mine))
