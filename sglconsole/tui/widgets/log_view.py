"""Live tail of a server's log: follow or pause, `/` to filter, decode lines condensed or raw."""

from __future__ import annotations

from rich.text import Text
from textual.containers import Vertical
from textual.widgets import Input, RichLog, Static

from sglconsole.core.text import clean
from sglconsole.state.fleet import ServerState
from sglconsole.tui.paint.log import log_line, matches
from sglconsole.tui.tail import TailCursor
from sglconsole.tui.widgets.common import palette

MAX_LINES = 2000


class LogView(Vertical):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.server: ServerState | None = None
        self.cursor: TailCursor[str] | None = None
        self.following = True
        self.condensed = True
        self.needle = ""

    def compose(self):
        yield Static(id="log-status")
        yield RichLog(
            id="log-lines",
            max_lines=MAX_LINES,
            wrap=True,
            markup=False,
            highlight=False,
            min_width=20,
        )
        yield Input(placeholder="filter: text to keep (Enter keeps, Esc clears)", id="log-filter")

    @property
    def lines(self) -> RichLog:
        return self.query_one("#log-lines", RichLog)

    @property
    def filter_input(self) -> Input:
        return self.query_one("#log-filter", Input)

    def show(self, server: ServerState) -> None:
        if server is not self.server:
            self.server = server
            self.cursor = TailCursor(server.log_lines)
            self.rewrite()

    def on_resize(self) -> None:
        # lines are wrapped when written: a new width (or a tab just shown) needs them again
        self.rewrite()

    def rewrite(self) -> None:
        """Render the whole buffer again (another server, another filter, raw/condensed)."""
        self.lines.clear()
        if self.cursor is not None:
            self.cursor.skip()
            self._write(list(self.server.log_lines))
        self._status()

    def pull(self) -> None:
        """Append what arrived since the last pull (nothing while paused)."""
        if self.following and self.cursor is not None:
            self._write(self.cursor.take())
        self._status()

    def _write(self, raw_lines: list[str]) -> None:
        pal = palette(self)
        for raw in raw_lines:
            if matches(raw, self.needle):
                self.lines.write(log_line(raw, pal, self.condensed), scroll_end=self.following)

    # ------------------------------------------------------------ controls

    def toggle_follow(self) -> bool:
        self.following = not self.following
        self.lines.auto_scroll = self.following
        self.pull()
        return self.following

    def toggle_condensed(self) -> None:
        self.condensed = not self.condensed
        self.rewrite()

    def open_filter(self) -> None:
        self.filter_input.display = True
        self.filter_input.focus()

    def close_filter(self) -> None:
        self.filter_input.value = ""
        self.filter_input.display = False
        self.set_filter("")
        self.lines.focus()

    @property
    def filtering(self) -> bool:
        return bool(self.filter_input.display)

    def set_filter(self, needle: str) -> None:
        if needle != self.needle:
            self.needle = needle
            self.rewrite()

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.set_filter(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.lines.focus()

    def _status(self) -> None:
        pal = palette(self)
        mode = (
            Text("following", style=pal.good)
            if self.following
            else Text("paused (f follows)", style=pal.warn)
        )
        text = Text.assemble(("log ", "bold"), mode)
        if self.server is not None:
            text.append(f" · {clean(self.server.log_path or 'no log found')}", style=pal.muted)
            if self.server.log_state:
                text.append(f" ({clean(self.server.log_state)})", style=pal.warn)
        if self.needle:
            text.append(f" · filter “{clean(self.needle)}”", style=pal.accent)
        status = self.query_one("#log-status", Static)
        if text != status.content:
            status.update(text, layout=False)  # one line, always
