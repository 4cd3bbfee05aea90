"""Runs of status polls (the console's own GET /health, /metrics, ...) in a log, told in one line.

The console polls every server a few times a second; uvicorn logs each request, and SGLang adds a
deprecation note for each old path (`/get_load` before 0.5.23). An idle server's log is nothing but
these lines. A run of them is told as one summary; every other line is kept as it is, and so is
a poll that failed (a 503 from /health says the server is not ready).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from sglconsole.core.server_load import GET_LOAD, V1_LOADS

# what remote/feeds/http.py and remote/inspect.py ask every server (also older SGLang's names);
# not /health_generate (a generation, asked once per restore) nor /generate (a client's)
POLL_PATHS = frozenset(
    {
        "/ready",
        "/health",
        V1_LOADS,
        GET_LOAD,
        "/model_info",
        "/get_model_info",
        "/metrics",
        "/server_info",
        "/get_server_info",
        "/v1/models",
    }
)
SHOWN_PATHS = 4  # in a summary, the most frequent paths named; the rest are "…"
KEPT_LINES = 400  # of a long run (an idle server's hours of polls), the lines a filter looks at

_PREFIX = r"(?:\[[^\]]*\] )?"  # SGLang's "[2026-12-04 14:59:05] " (with rank tags or not)
_ACCESS = re.compile(
    _PREFIX + r'(?:INFO: +)?\S+ - "GET (?P<path>/[^ "?]*)(?:\?[^ "]*)? HTTP/[0-9.]+" '
    r"(?P<status>[0-9]{3})(?: [A-Za-z '-]*)?"
)
_NOTE = re.compile(
    _PREFIX + r"Endpoint '(?P<path>/[^']*)' is deprecated and will be removed in a future "
    r"version\. Please use '[^']*' instead\."
)


@dataclass(frozen=True, slots=True)
class PollRun:
    """Consecutive poll lines (and the deprecation notes they cause), told as one."""

    lines: tuple[str, ...]
    """Its lines as SGLang wrote them (the last KEPT_LINES of a longer run)."""
    counts: tuple[tuple[str, int], ...]
    """(path, requests), most first."""
    notes: int
    """SGLang's "Endpoint ... is deprecated" lines among them."""

    @property
    def polls(self) -> int:
        return sum(count for _, count in self.counts)

    def summary(self) -> str:
        """'12 status polls (GET /v1/loads ×6, /health ×2, …)'."""
        if not self.counts:  # the notes came without their requests (a run cut by a read)
            return f"{self.notes} “deprecated” note{'s' if self.notes != 1 else ''} of status polls"
        named = ", ".join(
            path if count == 1 else f"{path} ×{count}" for path, count in self.counts[:SHOWN_PATHS]
        )
        more = ", …" if len(self.counts) > SHOWN_PATHS else ""
        text = f"{self.polls} status poll{'s' if self.polls != 1 else ''} (GET {named}{more})"
        if self.notes:
            text += f", {self.notes} “deprecated” note{'s' if self.notes != 1 else ''}"
        return text


def poll_request(line: str) -> str | None:
    """The path of a status poll that succeeded (or found no such path), else None."""
    match = _ACCESS.fullmatch(line.rstrip())
    if match is None or match["path"] not in POLL_PATHS:
        return None
    status = int(match["status"])
    # 404: the console asks a path this version lacks (/ready on 0.5.17), then the older one
    return match["path"] if status < 400 or status == 404 else None


def is_poll_note(line: str) -> bool:
    match = _NOTE.fullmatch(line.rstrip())
    return match is not None and match["path"] in POLL_PATHS


def condense(lines: Sequence[str], going_on: PollRun | None = None) -> list[str | PollRun]:
    """The lines, with each run of status polls in one PollRun; other lines as they are.

    `going_on` is the run the earlier lines ended with: these lines' first polls continue it
    (a live tail gets a few lines at a time; its lines are not read again)."""
    out: list[str | PollRun] = []
    run = _Run(going_on)
    for line in lines:
        path = poll_request(line)
        if path is not None or is_poll_note(line):
            run.add(line, path)
            continue
        if run.lines:
            out.append(run.done())
            run = _Run()
        out.append(line)
    if run.lines:
        out.append(run.done())
    return out


class _Run:
    """A run being read: its lines (the last KEPT_LINES), requests per path, notes."""

    def __init__(self, going_on: PollRun | None = None):
        self.lines = list(going_on.lines) if going_on else []
        self.paths = Counter(dict(going_on.counts)) if going_on else Counter()
        self.notes = going_on.notes if going_on else 0

    def add(self, line: str, path: str | None) -> None:
        self.lines.append(line)
        if path is None:
            self.notes += 1
        else:
            self.paths[path] += 1

    def done(self) -> PollRun:
        return PollRun(
            lines=tuple(self.lines[-KEPT_LINES:]),
            counts=tuple(self.paths.most_common()),
            notes=self.notes,
        )
