"""Live tail of a server's log: follow or pause, `/` to filter, condensed (decode lines, runs of
status polls) or raw."""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.containers import Vertical
from textual.scrollbar import ScrollTo, ScrollUp
from textual.widgets import Input, RichLog, Static

from sglconsole.core.status_polls import PollRun, condense
from sglconsole.core.text import clean
from sglconsole.state.fleet import ServerState
from sglconsole.tui.paint.log import log_line, matches, poll_summary
from sglconsole.tui.paint.palette import Palette
from sglconsole.tui.tail import TailCursor
from sglconsole.tui.widgets.common import palette

MAX_LINES = 2000


class TailLog(RichLog):
    """A RichLog that notices the reader scrolling up (following only ever scrolls down).

    Only the reader's own scrolling counts (keys, wheel, scrollbar): the view also moves up when
    it is cleared for another server, rewrapped for a new size, or trimmed at MAX_LINES, and
    none of that is a reason to stop following."""

    scrolled_up = False

    def _reader_scrolled_up(self) -> None:
        self.scrolled_up = True
        parent = self.parent
        if isinstance(parent, LogView):
            parent.call_later(parent.pull)  # say "paused" at once, not at the next refresh

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        if not (event.ctrl or event.shift):  # those scroll sideways
            self._reader_scrolled_up()

    def on_scroll_up(self, event: ScrollUp) -> None:  # a click on the scrollbar above its thumb
        self._reader_scrolled_up()

    def on_scroll_to(self, message: ScrollTo) -> None:  # the scrollbar's thumb dragged
        if message.y is not None and message.y < self.scroll_y:
            self._reader_scrolled_up()

    def action_scroll_up(self) -> None:
        super().action_scroll_up()
        self._reader_scrolled_up()

    def action_page_up(self) -> None:
        super().action_page_up()
        self._reader_scrolled_up()

    def action_scroll_home(self) -> None:
        super().action_scroll_home()
        self._reader_scrolled_up()


class LogView(Vertical):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.server: ServerState | None = None
        self.cursor: TailCursor[str] | None = None
        self.following = True
        self.condensed = True
        self.needle = ""
        self.paused_by_scroll = False
        # the status polls at the end, not written yet: the run may go on with the next lines
        self.open_polls: PollRun | None = None

    def compose(self):
        yield Static(id="log-status")
        yield TailLog(
            id="log-lines",
            max_lines=MAX_LINES,
            wrap=True,
            markup=False,
            highlight=False,
            min_width=20,
        )
        yield Static(id="log-open-polls")
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
        self.open_polls = None
        if self.cursor is not None:
            self.cursor.skip()
            self._write(list(self.server.log_lines))
        self._status()

    def pull(self) -> None:
        """Append what arrived since the last pull (nothing while paused).

        Scrolling up pauses following, like `less +F`; scrolling back to the end resumes it."""
        self._follow_by_scroll()
        if self.following and self.cursor is not None:
            self._write(self.cursor.take())
        self._status()

    def _follow_by_scroll(self) -> None:
        lines = self.lines
        if self.following and lines.scrolled_up:
            self.following, self.paused_by_scroll = False, True
            lines.auto_scroll = False
        elif (
            not self.following
            and self.paused_by_scroll
            and lines.scroll_y >= lines.max_scroll_y - 1
        ):
            self.following, self.paused_by_scroll = True, False
            lines.auto_scroll = True
        lines.scrolled_up = False

    def waiting(self) -> int:
        """Lines that arrived while paused (not shown yet)."""
        if self.following or self.cursor is None:
            return 0
        return len(self.cursor.peek())

    def _write(self, raw_lines: list[str]) -> None:
        pal = palette(self)
        items: list[str | PollRun] = list(raw_lines)
        if self.condensed:
            items = condense([clean(raw) for raw in raw_lines], self.open_polls)
            last = items[-1] if items else None
            self.open_polls = items.pop() if isinstance(last, PollRun) else None
        for item in items:
            if isinstance(item, PollRun):
                self._write_shown(poll_summary(item, pal), item.lines)
            else:
                self._write_shown(log_line(item, pal, self.condensed), (item,))
        self._open_polls_line(pal)

    def _write_shown(self, shown: Text, raw_lines: tuple[str, ...]) -> None:
        if self._kept(shown, raw_lines):
            self.lines.write(shown, scroll_end=self.following)

    def _kept(self, shown: Text, raw_lines: tuple[str, ...]) -> bool:
        # what is on screen ("accept 4" in a condensed line) or what SGLang wrote
        return matches(shown.plain, self.needle) or any(
            matches(raw, self.needle) for raw in raw_lines
        )

    def _open_polls_line(self, pal: Palette) -> None:
        """The run of polls still going on, under the log until another line ends it."""
        line = self.query_one("#log-open-polls", Static)
        run = self.open_polls
        shown = poll_summary(run, pal) if run is not None else None
        line.display = shown is not None and self._kept(shown, run.lines)
        if line.display and shown != line.content:
            line.update(shown)

    # ------------------------------------------------------------ controls

    def toggle_follow(self) -> bool:
        self.following = not self.following
        self.paused_by_scroll = False
        self.lines.auto_scroll = self.following
        if self.following:
            self.lines.scroll_end(animate=False)
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
        if self.following:
            mode = Text("following", style=pal.good)
        else:
            waiting = self.waiting()
            more = f", {waiting} new line{'s' if waiting != 1 else ''}" if waiting else ""
            mode = Text(f"paused{more} (f or End follows)", style=pal.warn)
        text = Text.assemble(("log ", "bold"), mode)
        # which of the two the reader sees, and the key for the other
        text.append(" · condensed (v: raw)" if self.condensed else " · raw (v: condensed)")
        if self.server is not None:
            text.append(f" · {clean(self.server.log_path or 'no log found')}", style=pal.muted)
            if self.server.log_state:
                text.append(f" ({clean(self.server.log_state)})", style=pal.warn)
        if self.needle:
            text.append(f" · filter “{clean(self.needle)}”", style=pal.accent)
        status = self.query_one("#log-status", Static)
        if text != status.content:
            status.update(text, layout=False)  # one line, always
