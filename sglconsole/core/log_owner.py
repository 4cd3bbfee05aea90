"""Which process wrote each line of a log that several server lifetimes append to. The one rule
every number uses: the status, the tree and pane, `status --json`, restore's before/after and
capture's baseline (which of a process's decode lines count, and for how long: core.decode_lines).

A relaunch appends to the same log, so a tail holds the previous process's lines. A lifetime
begins with SGLang's `server_args=ServerArgs(...)` line (written first, by every release) and its
HTTP server (uvicorn) names the main PID in `INFO:     Started server process [PID]` before the
first request: every line after it, up to the next lifetime's start, is that PID's. Lines before
any such marker have no known writer: they count for a process only if stamped after it started
(log times have whole seconds and a server needs seconds to start).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

from sglconsole.core.sglang_log import parse_line
from sglconsole.core.sglang_log.record import LogRecord

_STARTED = re.compile(r"Started server process \[(\d+)\]")
LIFETIME_START = "server_args=ServerArgs("
"""The first timestamped line of every SGLang lifetime (0.5.9-0.5.23)."""


def started_pid(text: str) -> int | None:
    """The PID a line announces as the log's new writer, or None."""
    match = _STARTED.search(text)
    return int(match.group(1)) if match else None


def starts_lifetime(text: str) -> bool:
    """Whether a line is the first of a new server lifetime (its writer is not known yet)."""
    return LIFETIME_START in text


class LogOwner:
    """The writer of the lines read so far: feed every line in order; `pid` is the PID of the
    lifetime the latest line belongs to, None when not known (yet)."""

    __slots__ = ("pid", "marked")

    def __init__(self) -> None:
        self.pid: int | None = None
        self.marked = False
        """Whether any lifetime marker was read: lines after one never fall back on time."""

    def feed(self, text: str) -> int | None:
        pid = started_pid(text)
        if pid is not None:
            self.pid, self.marked = pid, True
        elif starts_lifetime(text):
            self.pid, self.marked = None, True
        return self.pid


def belongs(
    line_pid: int | None, line_time: float | None, marked: bool, pid: int, started: float
) -> bool:
    """Whether a line (its writer by the markers, its timestamp) is process `pid`'s, which started
    at `started` (epoch seconds)."""
    if line_pid is not None:
        return line_pid == pid
    if marked:  # after a lifetime start whose Started line has not come: a start-up, not `pid`
        return False
    return line_time is not None and line_time >= math.floor(started)


def process_decode_records(lines: Iterable[str], pid: int, started: float) -> list[LogRecord]:
    """The decode records of process `pid` among log lines (oldest first)."""
    owner = LogOwner()
    owned: list[LogRecord] = []
    for text in lines:
        line_pid = owner.feed(text)
        record = parse_line(text)
        if record is None or record.kind != "decode":
            continue
        when = record.time.timestamp() if record.time is not None else None
        if belongs(line_pid, when, owner.marked, pid, started):
            owned.append(record)
    return owned
