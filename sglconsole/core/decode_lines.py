"""Which of SGLang's decode lines count, and what their numbers mean: the one rule for the status
(SLOW, the views, `status --json`), restore, capture, bench, probe, `log-stats` and the
Prometheus source.

A decode line says `gen throughput (token/s)`: the tokens the whole batch generated since the
previous decode line of its rank, divided by the time since then (SGLang writes one every
`--decode-log-interval` steps, none while idle). So a line counts when
- it is the process's own (core.log_owner: a relaunch appends to the same log);
- it is busy: `#running-req` > 0 (an idle scheduler's 0 says nothing about the GPU);
- it is not the first after idle: its rank (DP/TP/PP/EP: with DP attention every DP rank logs its
  own lines) wrote no line before it, or that one had no running request, or it is more than
  `IDLE_GAP_S` older. Its interval spans the pause, so its rate is near zero;
- and, for what runs *now*, it is current (`is_current`): the last line stays in the log after
  the last request, so it ages out.

The baseline (hosts.yaml `baseline.gen_throughput`) is this same quantity: the median gen
throughput of the counted lines, in all, at a concurrency (`#running-req`): `decode_speed`.
Capture and `bench --save-baseline` store it, SLOW compares the live median with it, and probe
and restore divide it by its concurrency for the speed one request sees.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from sglconsole.core.sglang_log.record import LogRecord

IDLE_GAP_S = 30.0
"""A decode line more than this after the previous one of its rank follows an idle period: at any
real speed SGLang writes one every few seconds while requests run."""

DECODE_CURRENT_MIN_S = 10.0
"""A decode line is current for at least this long: SGLang writes one every
--decode-log-interval (40) decode steps, at any real speed seconds apart."""
DECODE_CURRENT_MAX_S = 60.0
"""...and never longer: SGLang writes no decode line when idle, so the last one stays in the log
while nothing runs (a real 0.5.17 showed 417 tok/s, 1 running a minute after its last request)."""


class DecodeLine(Protocol):
    """What the rule reads of a decode line (a parsed LogRecord, or a state Sample)."""

    @property
    def running_req(self) -> int | None: ...

    @property
    def gen_throughput(self) -> float | None: ...

    @property
    def accept_len(self) -> float | None: ...


def after_idle(previous: DecodeLine | None, gap_s: float | None) -> bool:
    """Whether a decode line is the first after an idle period, given its rank's previous line
    (None: none was read) and the seconds between them (None: unknown)."""
    return (
        previous is None
        or (previous.running_req or 0) <= 0
        or (gap_s is not None and gap_s > IDLE_GAP_S)
    )


def counts(line: DecodeLine, follows_idle: bool) -> bool:
    """Whether a decode line's numbers say what the GPU does: busy, and not the first after idle."""
    return (line.running_req or 0) > 0 and not follows_idle


def rank(record: LogRecord) -> tuple[int | None, ...]:
    """The rank that wrote a line: each keeps its own interval."""
    return (record.dp_rank, record.tp_rank, record.pp_rank, record.ep_rank)


def _seconds_between(previous: float, current: float) -> float:
    return current - previous


class IdleWatch:
    """The previous decode line of each rank, for `after_idle`: feed every decode line in order.

    `clock` is the line's time in seconds (its stamp, or when it was read); `gap` measures
    between two clocks (log-stats reads time-of-day stamps that wrap at midnight)."""

    __slots__ = ("_last", "_gap")

    def __init__(self, gap: Callable[[Any, Any], float | None] = _seconds_between) -> None:
        self._last: dict[tuple[int | None, ...], tuple[LogRecord, Any]] = {}
        self._gap = gap

    def feed(self, record: LogRecord, clock: Any) -> bool:
        """Whether `record` is the first after idle (and remember it as its rank's last)."""
        key = rank(record)
        previous = self._last.get(key)
        self._last[key] = (record, clock)
        if previous is None:
            return True
        gap = None if clock is None or previous[1] is None else self._gap(previous[1], clock)
        return after_idle(previous[0], gap)


def counted(records: Iterable[LogRecord]) -> list[LogRecord]:
    """The decode records that count (busy, not first after idle), oldest first, of records that
    are already one process's (core.log_owner.process_decode_records)."""
    watch = IdleWatch()
    out = []
    for record in records:
        clock = record.time.timestamp() if record.time is not None else None
        if counts(record, watch.feed(record, clock)):
            out.append(record)
    return out


@dataclass(frozen=True, kw_only=True)
class DecodeSpeed:
    """SGLang's decode speed over counted lines: the quantity a baseline holds."""

    tok_s: float | None
    """Median gen throughput, in all (every running request's tokens): `baseline.gen_throughput`."""
    per_request: float | None
    """Median of gen throughput / running requests: what one request sees."""
    accept_len: float | None
    running: float | None
    """Median #running-req: the concurrency the figures were measured at."""
    lines: int = 0
    """How many counted lines the medians are of."""


def _median(values: Iterable[float | int | None]) -> float | None:
    present = [value for value in values if value is not None]
    return statistics.median(present) if present else None


def decode_speed(lines: Sequence[DecodeLine]) -> DecodeSpeed:
    """The median speed of lines that count (see `counted`): the one definition of what
    `baseline.gen_throughput` means and of what SLOW, probe, restore, capture and bench compare."""
    timed = [
        line for line in lines if line.gen_throughput is not None and (line.running_req or 0) > 0
    ]
    return DecodeSpeed(
        tok_s=_median(line.gen_throughput for line in timed),
        per_request=_median(line.gen_throughput / line.running_req for line in timed),  # type: ignore[operator]
        accept_len=_median(line.accept_len for line in timed if line.accept_len),
        running=_median(line.running_req for line in timed),
        lines=len(timed),
    )


def current_for(newest: float, previous: float | None) -> float:
    """How long after its newest decode line a process's figures still describe now: twice the
    gap between its last two lines (its decode-log interval at this speed), within bounds."""
    gap = 0.0 if previous is None else max(0.0, newest - previous)
    return min(DECODE_CURRENT_MAX_S, max(DECODE_CURRENT_MIN_S, 2 * gap))


def is_current(newest: float, previous: float | None, now: float) -> bool:
    """Whether the newest decode line (stamped `newest`) still says what runs now."""
    return now - newest <= current_for(newest, previous)
