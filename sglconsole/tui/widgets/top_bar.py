"""One line on top: how many hosts and servers, how many in each status, and the safety mode."""

from __future__ import annotations

import time
from collections import Counter

from rich.text import Text
from textual.widgets import Static

from sglconsole.state.fleet import SEVERITY, FleetState, Status
from sglconsole.tui.paint.palette import Palette
from sglconsole.tui.widgets.common import palette


def summary(
    fleet: FleetState,
    pal: Palette,
    read_only: bool,
    bell: bool,
    replay_at: float | None = None,
    paused: bool = False,
) -> Text:
    servers = fleet.all_servers()
    counts = Counter(server.status for server in servers)
    if replay_at is None:
        text = Text("sglconsole ", style="bold")
    else:
        # first and loud, in place of the name: a replay is never taken for the fleet of now
        when = time.strftime("%m-%d %H:%M:%S", time.localtime(replay_at))
        still = " PAUSED" if paused else ""  # a stopped clock must not read as a calm fleet
        text = Text(f" REPLAY {when}{still} ", style=f"bold reverse {pal.warn}")
        text.append(" ")
    if replay_at is None:  # a replay's banner takes this room (its tree shows the same)
        text.append(f"{len(fleet.hosts)} hosts · {len(servers)} servers ", style=pal.muted)
    # a host with no servers has none to count: its own UNREACHABLE would go unsaid
    lone = sum(1 for host in fleet.hosts.values() if host.reachable is False and not host.servers)
    for status in SEVERITY:
        shown = [str(counts[status])] if counts[status] else []
        if status is Status.UNREACHABLE and lone:
            shown.append(f"{lone} host{'s' if lone > 1 else ''}")
        if shown:
            text.append(" ")
            text.append_text(pal.badge(status))
            text.append(f" {' + '.join(shown)}")
    routed = sum(1 for server in servers if any(route.problem for route in server.view.routes))
    dead = sum(1 for router in fleet.routers.values() if router.reachable is False)
    if routed or dead:  # an UP server can serve nobody: the statuses above do not say it
        parts = [f"{routed} route problem{'s' if routed > 1 else ''}"] if routed else []
        parts += [f"{dead} router{'s' if dead > 1 else ''} down"] if dead else []  # no answer
        text.append(f"  ⇄ {', '.join(parts)}", style=pal.bad)
    if read_only and replay_at is None:
        text.append("  READ-ONLY", style=pal.warn)
    if bell:
        text.append("  bell", style=pal.muted)
    return text


class TopBar(Static):
    def show(
        self,
        fleet: FleetState,
        read_only: bool,
        bell: bool,
        replay_at: float | None = None,
        paused: bool = False,
    ) -> None:
        text = summary(fleet, palette(self), read_only, bell, replay_at, paused)
        if text != self.content:
            self.update(text, layout=False)  # one line, always: no layout pass for the whole screen
