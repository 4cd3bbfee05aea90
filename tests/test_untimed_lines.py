"""A log line that does not say when it was written (a traceback's body) was written with the
timed line before it, not when a console read it: a status run a minute after a kill must not
take the kill's own shutdown traceback for a new crash."""

from __future__ import annotations

from datetime import datetime

from sglconsole.state.ingest import take_line
from sglconsole.state.model import ServerState
from sglconsole.state.status import crashed_since

WRITTEN = datetime(2026, 12, 5, 18, 0, 0).timestamp()
TIMED = (
    "[2026-12-05 18:00:00] Decode batch, #running-req: 0, #token: 0, gen throughput (token/s): 0.00"
)


def stopped_and_read_later(*lines: str) -> ServerState:
    server = ServerState("ct129", 30000, None, None, None)
    take_line(server, TIMED, WRITTEN)
    for line in lines:
        take_line(server, line, WRITTEN + 60)  # a fresh console reads the tail a minute later
    return server


def test_a_traceback_read_late_is_as_old_as_the_line_before_it():
    server = stopped_and_read_later(
        "Traceback (most recent call last):",
        "KeyboardInterrupt",
    )
    assert server.errors, "the traceback is an error the console keeps"
    assert all(stamp == WRITTEN for stamp, _ in server.errors)
    assert not crashed_since(server, WRITTEN + 1)


def test_an_error_that_says_its_time_is_a_new_crash():
    server = stopped_and_read_later(
        "[2026-12-05 18:01:00] Scheduler hit an exception: Traceback (most recent call last):"
    )
    assert crashed_since(server, WRITTEN + 1)
