"""The terminal driver: Textual's Linux driver, with an input thread that sleeps until there is
input.

Textual's input thread wakes every 0.1 s to look at its exit flag and at the parser's escape
timeout, typed or not: ten wakeups a second, 0.18% of a core of an idle console's 1.18% (measured
per thread of `sglconsole` in a real tmux pane, 3 idle demo hosts). This one waits on the
terminal and on a pipe that stopping the input writes to, a second at most, less while the
parser holds an escape sequence that may still be a lone Esc.
"""

from __future__ import annotations

import os
import selectors
import threading
from codecs import getincrementaldecoder

from textual._parser import ParseError
from textual._time import get_time
from textual._xterm_parser import XTermParser
from textual.drivers.linux_driver import LinuxDriver

POLL_S = 0.1
"""Textual's own period: what the thread falls back to if the parser no longer says when its
escape sequence times out (another Textual)."""
READ_BYTES = 4096
IDLE_S = 1.0
"""The longest sleep, woken or not: a bound on any wake this design misses. When the wake was
drained by the thread that read it, a console whose tmux pane was killed (SIGHUP, then SIGCONT,
whose handler starts the input again) hung at exit in 3 runs of 33, joining an input thread
asleep on an empty pipe; the wake now stays until the flag is cleared."""


class _WakingEvent(threading.Event):
    """The driver's exit flag; setting it also wakes the input thread's wait."""

    def __init__(self, wake_fd: int, read_fd: int):
        super().__init__()
        self.wake_fd: int | None = wake_fd
        """None once the driver closed the pipe: its number may be another file's by then."""
        self._read_fd = read_fd

    def set(self) -> None:
        super().set()
        if self.wake_fd is not None:
            try:
                os.write(self.wake_fd, b"x")
            except BlockingIOError:  # full: a wake is pending already
                pass

    def clear(self) -> None:
        """The wake stays readable while the flag is set (every input thread sees it), and goes
        with it."""
        super().clear()
        if self.wake_fd is not None:
            _drain(self._read_fd)


class QuietLinuxDriver(LinuxDriver):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._wake_read, self._wake_write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self._exit = _WakingEvent(self._wake_write, self._wake_read)
        self.exit_event = self._exit

    def run_input_thread(self) -> None:
        """Keys, mouse and paste into the app, as Textual's thread does, without its polling."""
        parser = XTermParser(self._debug)
        decode = getincrementaldecoder("utf-8")().decode
        # select(), as Textual's thread: macOS's kqueue and poll do not wait on a terminal
        selector = selectors.SelectSelector()
        selector.register(self.fileno, selectors.EVENT_READ)
        selector.register(self._wake_read, selectors.EVENT_READ)
        try:
            while not self.exit_event.is_set():
                self._take(selector, selector.select(_wait(parser)), parser, decode, final=False)
            # what was typed as the input stopped, as Textual's thread reads it
            self._take(selector, selector.select(POLL_S), parser, decode, final=True)
        finally:
            selector.close()
            try:
                for _event in parser.feed(""):
                    pass
            except (EOFError, ParseError):
                pass

    def _take(self, selector, ready, parser: XTermParser, decode, final: bool) -> None:
        terminal = [key for key, _mask in ready if key.fd == self.fileno]
        if len(terminal) < len(ready) and not self.exit_event.is_set():
            _drain(self._wake_read)  # a wake of an earlier stop: the flag is what counts
        if terminal:
            data = os.read(self.fileno, READ_BYTES)
            if not data:  # stdin is a pipe that ended: nothing more to wait for on it
                selector.unregister(self.fileno)
            for event in parser.feed(decode(data, final=final)) if data else ():
                self.process_message(event)
        for event in parser.tick():
            self.process_message(event)

    def close(self) -> None:
        super().close()
        self._exit.wake_fd = None
        for end in (self._wake_read, self._wake_write):
            try:
                os.close(end)
            except OSError:
                pass


def _drain(read_fd: int) -> None:
    try:
        os.read(read_fd, READ_BYTES)
    except BlockingIOError:
        pass


def _wait(parser: XTermParser) -> float:
    """How long the input thread may sleep: until the parser's pending escape sequence times out,
    else IDLE_S at most (input or the pipe wake it sooner)."""
    if not hasattr(parser, "_timeout_time"):  # another Textual: poll as it does
        return POLL_S
    due = parser._timeout_time
    return IDLE_S if due is None else max(0.0, min(IDLE_S, due - get_time()))


def quiet_driver(chosen: type) -> type:
    """The driver the app runs with: this one where Textual would take its Linux driver (every
    terminal but Windows'), else Textual's choice (headless tests, TEXTUAL_DRIVER, the web)."""
    return QuietLinuxDriver if chosen is LinuxDriver else chosen
