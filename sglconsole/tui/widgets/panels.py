"""Scrollable panels that re-render one Rich renderable from a server (again when resized)."""

from __future__ import annotations

from textual.containers import VerticalScroll
from textual.widgets import Static

from sglconsole.state.fleet import FleetState, ServerState
from sglconsole.tui.paint.drift import drift_view
from sglconsole.tui.paint.gpus import gpu_table
from sglconsole.tui.widgets.common import palette, show, width


class _Panel(VerticalScroll):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.server: ServerState | None = None

    def compose(self):
        yield Static(classes="panel-body")

    def paint(self, renderable) -> None:
        show(self.query_one(".panel-body", Static), renderable, width(self))

    def show(self, server: ServerState) -> None:
        self.server = server

    def on_resize(self) -> None:
        # tables are laid out for a width: a tab shown for the first time, or a resized terminal
        if self.server is not None:
            self.show(self.server)


class DriftPanel(_Panel):
    """Re-rendered only when the comparison or the width changes: it is long and rarely changes."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._shown: tuple | None = None

    def show(self, server: ServerState) -> None:
        super().show(server)
        key = (
            id(server),
            id(server.drift),
            server.drift_error,
            server.process is None,
            width(self),
        )
        if key != self._shown:
            self._shown = key
            self.paint(drift_view(server, palette(self), width(self)))


class GpuPanel(_Panel):
    def __init__(self, fleet: FleetState, **kwargs):
        super().__init__(**kwargs)
        self.fleet = fleet

    def show(self, server: ServerState) -> None:
        super().show(server)
        host = self.fleet.hosts[server.host]
        mine = (
            server.process.gpus
            if server.process
            else tuple(server.config.gpus if server.config else ())
        )
        self.paint(gpu_table(host, palette(self), width(self), mine))
