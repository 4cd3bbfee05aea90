"""The terminal's title shows the fleet's worst status, so a tmux window list says it too."""

from __future__ import annotations

from sglconsole.core.text import clean
from sglconsole.state.fleet import FleetState, worst
from sglconsole.state.statuses import CALM
from sglconsole.tui.paint.fleet import host_status


def fleet_title(fleet: FleetState) -> str:
    statuses = [host_status(host) for host in fleet.hosts.values()]
    problems = sum(status not in CALM for status in statuses)
    count = f" ({problems} host{'s' if problems != 1 else ''})" if problems else ""
    return f"sglconsole: {worst(statuses).value}{count}"


def osc_title(text: str) -> str:
    """OSC 2 (window title); control characters removed so a host name cannot end it early."""
    return f"\x1b]2;{clean(text)}\x07"
