"""One line on top: how many hosts and servers, how many in each status, and the safety mode."""

from __future__ import annotations

import time
from collections import Counter

from rich.text import Text
from textual.widgets import Static

from sglconsole.state.fleet import SEVERITY, FleetState
from sglconsole.tui.paint.palette import Palette
from sglconsole.tui.widgets.common import palette


def summary(
    fleet: FleetState, pal: Palette, read_only: bool, bell: bool, replay_at: float | None = None
) -> Text:
    servers = fleet.all_servers()
    counts = Counter(s.status for s in servers)
    text = Text("sglconsole ", style="bold")
    if replay_at is not None:
        # first and loud: a replay must never be taken for the fleet as it is now
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(replay_at))
        text.append(f" REPLAY {when}: recorded, not live ", style=f"bold reverse {pal.warn}")
        text.append(" ")
    text.append(f"{len(fleet.hosts)} hosts · {len(servers)} servers ", style=pal.muted)
    for status in SEVERITY:
        if counts[status]:
            text.append(" ")
            text.append_text(pal.badge(status))
            text.append(f" {counts[status]}")
    if read_only and replay_at is None:
        text.append("  READ-ONLY", style=pal.warn)
    if bell:
        text.append("  bell", style=pal.muted)
    return text


class TopBar(Static):
    def show(
        self, fleet: FleetState, read_only: bool, bell: bool, replay_at: float | None = None
    ) -> None:
        text = summary(fleet, palette(self), read_only, bell, replay_at)
        if text != self.content:
            self.update(text, layout=False)  # one line, always: no layout pass for the whole screen
