"""`?`: every key (from the same data as the footer), what each status means, and the usual fix."""

from __future__ import annotations

from itertools import groupby

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from sglconsole.state.fleet import Status
from sglconsole.state.statuses import INFO
from sglconsole.tui.keys import KEYS
from sglconsole.tui.paint.palette import palette_of

MEANING = {status: INFO[status].meaning for status in Status}  # in reading order
HOST_LINES = {
    "ORPHAN": "a process whose server is gone, still alive (often holding GPU memory): stop it on "
    "the host (sglconsole run HOST -- kill PID) before a relaunch needs that memory",
    "GPU memory nobody accounts for": "a process holds GPU memory that no server of hosts.yaml "
    "explains (another job, or a leftover the console cannot see)",
}
"""The lines a host's view adds under its servers, besides the statuses."""
FIRST_STEPS = (
    "n jumps to the next problem · d shows why (the diff) · R restores the proven profile, "
    "probes it and compares it with its baseline · a shows what was done"
)


def keys_table(app) -> Table:
    table = Table(box=None, show_header=False, pad_edge=False)
    table.add_column(style="bold", no_wrap=True)
    table.add_column(no_wrap=True)
    table.add_column(style="dim")
    for group, keys in groupby(KEYS, key=lambda key: key.group):
        table.add_row(Text(group, style="underline"), "", "")
        for key in keys:
            table.add_row(
                app.get_key_display(key.binding), key.binding.description, key.binding.tooltip
            )
    table.add_row("ctrl+p / :", "Commands", "every key above, searchable by name")
    table.add_row("tab", "Next pane", "fleet → tabs → the tab's content")
    return table


def statuses_table(app) -> Table:
    pal = palette_of(app.current_theme)
    table = Table(box=None, show_header=False, pad_edge=False)
    table.add_column(no_wrap=True)
    table.add_column()
    for status, meaning in MEANING.items():
        table.add_row(pal.badge(status), meaning)
    return table


def host_lines_table(app) -> Table:
    pal = palette_of(app.current_theme)
    table = Table(box=None, show_header=False, pad_edge=False)
    table.add_column(no_wrap=True)
    table.add_column()
    for line, meaning in HOST_LINES.items():
        table.add_row(Text(line, style=pal.bad), meaning)
    return table


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,question_mark,q", "close", "Close", id="help-close")]

    def compose(self):
        with Vertical(id="help"):
            yield Static(
                Text("sglconsole: keys and statuses   (↑↓ scroll, Esc closes)", style="bold"),
                id="dialog-title",
            )
            with VerticalScroll(id="help-body"):
                yield Static(
                    Group(
                        Text(FIRST_STEPS),
                        Text(""),
                        keys_table(self.app),
                        Text(""),
                        Text("Statuses", style="bold underline"),
                        statuses_table(self.app),
                        Text(""),
                        Text("On a host's page, under its servers", style="bold underline"),
                        host_lines_table(self.app),
                    )
                )

    def on_mount(self) -> None:
        self.query_one("#help-body").focus()

    def action_close(self) -> None:
        self.dismiss(None)
