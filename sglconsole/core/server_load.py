"""The requests a server runs and queues, read from SGLang's own load endpoint.

`/v1/loads` (0.5.9+): `{..., "loads": [{"dp_rank", "num_running_reqs", "num_waiting_reqs", ...}]}`,
one entry per data-parallel rank; SGLang omits fields that are zero (msgspec `omit_defaults`), so
in an entry that is there a missing count is 0. `/get_load` (older, deprecated from 0.5.10, gone in
0.5.23): a list of `{"dp_rank", "num_reqs", "num_waiting_reqs", ...}` where `num_reqs` counts the
waiting ones too. Anything else is unknown (None), never 0: a drain or a stall judged on a 404
read as "0 running" cuts live requests or misses a hung scheduler.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

V1_LOADS = "/v1/loads"
GET_LOAD = "/get_load"


@dataclass(frozen=True, slots=True)
class RequestLoad:
    running: int
    waiting: int
    source: str
    """The endpoint that said it."""

    @property
    def in_flight(self) -> int:
        return self.running + self.waiting


def _count(entry: dict, key: str) -> int | None:
    value = entry.get(key, 0)
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        return None
    return int(value)


def parse_load(path: str, body: Any) -> RequestLoad | None:
    """The load a JSON body of `path` says, or None when it cannot be read."""
    if path == V1_LOADS:
        entries = body.get("loads") if isinstance(body, dict) else None
        running_key, includes_waiting = "num_running_reqs", False
    elif path == GET_LOAD:
        entries, running_key, includes_waiting = body, "num_reqs", True
    else:
        return None
    if not isinstance(entries, list) or not entries:
        return None
    running = waiting = 0
    for entry in entries:
        if not isinstance(entry, dict) or "dp_rank" not in entry and running_key not in entry:
            return None
        reqs, queued = _count(entry, running_key), _count(entry, "num_waiting_reqs")
        if reqs is None or queued is None:
            return None
        running += max(0, reqs - queued) if includes_waiting else reqs
        waiting += queued
    return RequestLoad(running, waiting, path)
