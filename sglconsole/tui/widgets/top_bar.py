"""One line on top: how many hosts and servers, how many in each status, and the safety mode."""

from __future__ import annotations

from collections import Counter

from rich.text import Text
from textual.widgets import Static

from sglconsole.state.fleet import SEVERITY, FleetState
from sglconsole.tui.paint.palette import Palette
from sglconsole.tui.widgets.common import palette


def summary(fleet: FleetState, pal: Palette, read_only: bool, bell: bool) -> Text:
    servers = fleet.all_servers()
    counts = Counter(s.status for s in servers)
    text = Text("sglconsole ", style="bold")
    text.append(f"{len(fleet.hosts)} hosts · {len(servers)} servers ", style=pal.muted)
    for status in SEVERITY:
        if counts[status]:
            text.append(" ")
            text.append_text(pal.badge(status))
            text.append(f" {counts[status]}")
    if read_only:
        text.append("  READ-ONLY", style=pal.warn)
    if bell:
        text.append("  bell", style=pal.muted)
    return text


class TopBar(Static):
    def show(self, fleet: FleetState, read_only: bool, bell: bool) -> None:
        text = summary(fleet, palette(self), read_only, bell)
        if text != self.content:
            self.update(text, layout=False)  # one line, always: no layout pass for the whole screen
