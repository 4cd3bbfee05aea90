"""The right-hand pane when a server is selected: header, then GPUs, Config (the diff) and Log
tabs."""

from __future__ import annotations

from rich.text import Text
from textual.containers import Vertical
from textual.widgets import Static, TabbedContent, TabPane

from sglconsole.state.fleet import FleetState, ServerState
from sglconsole.tui.paint.precursors import server_sign_lines
from sglconsole.tui.paint.server import header
from sglconsole.tui.widgets.common import palette
from sglconsole.tui.widgets.log_view import LogView
from sglconsole.tui.widgets.panels import DriftPanel, GpuPanel

TABS = (("gpus", "GPUs g"), ("config", "Config d"), ("log", "Log l"))


class ServerPane(Vertical):
    def __init__(self, fleet: FleetState, **kwargs):
        super().__init__(**kwargs)
        self.fleet = fleet
        self.server: ServerState | None = None

    def compose(self):
        yield Static(id="server-header")
        with TabbedContent(id="server-tabs", initial="gpus"):
            with TabPane(TABS[0][1], id="gpus"):
                yield GpuPanel(self.fleet, id="gpu-panel")
            with TabPane(TABS[1][1], id="config"):
                yield DriftPanel(id="drift-panel")
            with TabPane(TABS[2][1], id="log"):
                yield LogView(id="log-view")

    @property
    def log(self) -> LogView:
        return self.query_one(LogView)

    @property
    def tab(self) -> str:
        return self.query_one(TabbedContent).active

    def open(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab

    def show(self, server: ServerState, now: float) -> None:
        self.server = server
        self.log.show(server)
        self.update_view(now)

    def update_view(self, now: float, tables: bool = True) -> None:
        """The header (status, tok/s, load) at every fleet change, like the tree, so both show the
        same published view; the GPU and drift tables, costly to lay out, only when `tables`."""
        if self.server is None:
            return
        shown = self.query_one("#server-header", Static)
        text = header(self.server, palette(self), now)
        host = self.fleet.hosts.get(self.server.host)
        if host is not None:  # the signs before an outage that hit it (paint.precursors)
            lines = server_sign_lines(host, self.server.port, palette(self), now)
            text = Text("\n").join([text, *lines]) if lines else text
        if text != shown.content:  # the same line again costs no repaint
            shown.update(text)
        if tables:
            self.query_one(GpuPanel).show(self.server)
            self.query_one(DriftPanel).show(self.server)
        self.log.pull()
