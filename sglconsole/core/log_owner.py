"""Which process wrote a line of a log that several server lifetimes append to.

A relaunch appends to the same log, so the tail read at connect holds the previous process's
lines. SGLang's HTTP server (uvicorn) writes `INFO:     Started server process [PID]` once per
lifetime, before the first request: every decode line after it, up to the next such line, is that
PID's. (Log timestamps alone cannot tell: they have whole seconds and the host's local time.)
"""

from __future__ import annotations

import re

_STARTED = re.compile(r"Started server process \[(\d+)\]")


def started_pid(text: str) -> int | None:
    """The PID a line announces as the log's new writer, or None."""
    match = _STARTED.search(text)
    return int(match.group(1)) if match else None
