"""Summaries of an SGLang server log: what ``sglconsole log-stats`` prints.

Pure: standard library only, no I/O; ``summarize`` takes the lines.

Throughput and accept length are taken from the decode lines that count
(core.decode_lines, the rule the status, restore, capture and bench use: busy,
not the first after idle, each rank on its own).

A relaunch appends to the same log: ``runs`` holds one summary per server
lifetime (see ``_RunSplitter``), so one run's numbers never blur another's.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sglconsole.core.decode_lines import IdleWatch
from sglconsole.core.log_owner import started_pid
from sglconsole.core.sglang_log import parse_line, parse_time_prefix
from sglconsole.core.sglang_log.record import KINDS, LogRecord

__all__ = ["Distribution", "ErrorEntry", "LogStats", "quantile", "summarize"]

_EPOCH = datetime(1970, 1, 1)


def quantile(sorted_values: list[float], fraction: float) -> float:
    """Linear-interpolation quantile (numpy's default) of an ascending, non-empty list."""
    count = len(sorted_values)
    pos = (count - 1) * fraction
    lower = math.floor(pos)
    upper = min(lower + 1, count - 1)
    frac = pos - lower
    return sorted_values[lower] + (sorted_values[upper] - sorted_values[lower]) * frac


@dataclass(frozen=True, slots=True)
class Distribution:
    n: int
    median: float
    p5: float
    p95: float
    min: float
    max: float

    @classmethod
    def of(cls, values: list[float]) -> Distribution | None:
        vals = sorted(value for value in values if value is not None and math.isfinite(value))
        if not vals:
            return None
        return cls(
            n=len(vals),
            median=quantile(vals, 0.5),
            p5=quantile(vals, 0.05),
            p95=quantile(vals, 0.95),
            min=vals[0],
            max=vals[-1],
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "median": self.median,
            "p5": self.p5,
            "p95": self.p95,
            "min": self.min,
            "max": self.max,
        }


@dataclass(frozen=True, slots=True)
class ErrorEntry:
    line: int  # 1-based
    error: str
    message: str
    time: datetime | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "error": self.error,
            "message": self.message,
            "time": self.time.isoformat() if self.time else None,
        }


@dataclass(slots=True)
class LogStats:
    lines: int = 0
    records: int = 0
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    gen_throughput: Distribution | None = None
    accept_len: Distribution | None = None
    decode_used: int = 0  # decode lines that fed the distributions
    decode_idle_skipped: int = 0  # first decode line after an idle period
    decode_not_running: int = 0  # decode lines with #running-req 0 (or missing)
    errors: list[ErrorEntry] = field(default_factory=list)
    error_counts: dict[str, int] = field(default_factory=dict)
    milestones: dict[str, tuple[int, datetime | None]] = field(
        default_factory=dict
    )  # first of each
    first_time: datetime | None = None
    ready_line: int | None = None
    ready_time: datetime | None = None
    time_to_ready_s: float | None = None
    last_time: datetime | None = None
    first_line: int = 1
    pid: int | None = None
    """The server process that wrote this part (its `Started server process [PID]` line)."""
    runs: list[LogStats] = field(default_factory=list)
    """One summary per server lifetime in the file (the whole file's is this one)."""

    def to_dict(self) -> dict[str, Any]:
        def iso(stamp: datetime | None) -> str | None:
            return stamp.isoformat() if stamp else None

        data = self._own_dict(iso)
        data["runs"] = [
            {"first_line": run.first_line, "last_line": run.lines, "pid": run.pid}
            | run._own_dict(iso)
            for run in self.runs
        ]
        return data

    def _own_dict(self, iso) -> dict[str, Any]:
        return {
            "lines": self.lines,
            "records": self.records,
            "counts": dict(self.counts),
            "gen_throughput": self.gen_throughput.to_dict() if self.gen_throughput else None,
            "accept_len": self.accept_len.to_dict() if self.accept_len else None,
            "decode_used": self.decode_used,
            "decode_idle_skipped": self.decode_idle_skipped,
            "decode_not_running": self.decode_not_running,
            "errors": [entry.to_dict() for entry in self.errors],
            "error_counts": dict(self.error_counts),
            "milestones": {
                name: {"line": line, "time": iso(stamp)}
                for name, (line, stamp) in self.milestones.items()
            },
            "first_time": iso(self.first_time),
            "last_time": iso(self.last_time),
            "ready_line": self.ready_line,
            "ready_time": iso(self.ready_time),
            "time_to_ready_s": self.time_to_ready_s,
        }


def _seconds(rec: LogRecord) -> tuple[str, float] | None:
    """A comparable clock reading: absolute seconds, or seconds of day for time-only prefixes."""
    if rec.time is not None:
        return "abs", (rec.time - _EPOCH).total_seconds()
    tod = rec.extra.get("time_of_day") if rec.extra else None
    if isinstance(tod, str) and len(tod) == 8:
        try:
            return "day", int(tod[0:2]) * 3600 + int(tod[3:5]) * 60 + int(tod[6:8])
        except ValueError:
            return None
    return None


def _gap(prev: tuple[str, float] | None, cur: tuple[str, float] | None) -> float | None:
    if prev is None or cur is None or prev[0] != cur[0]:
        return None
    if prev[0] == "day":
        return (cur[1] - prev[1]) % 86400
    return cur[1] - prev[1]


_LAUNCH_WARNING = "sglang.launch_server' is still supported"
_SERVER_ARGS = "server_args=ServerArgs("


class _Summary:
    """One LogStats being filled, with the running lists its distributions come from."""

    def __init__(self, first_line: int = 1):
        self.stats = LogStats(first_line=first_line)
        self.throughput: list[float] = []
        self.accept: list[float] = []
        self.idle = IdleWatch(gap=_gap)
        self.saw_server_args = False

    def feed(self, lineno: int, line: str) -> None:
        self.stats.lines = lineno
        try:
            _feed(self.stats, lineno, line, self.throughput, self.accept, self.idle)
        except Exception:  # pragma: no cover - parse_line never raises; belt and braces
            pass

    def finish(self) -> LogStats:
        stats = self.stats
        stats.gen_throughput = Distribution.of(self.throughput)
        stats.accept_len = Distribution.of(self.accept)
        if stats.first_time is not None and stats.ready_time is not None:
            stats.time_to_ready_s = max(0.0, (stats.ready_time - stats.first_time).total_seconds())
        return stats


def _opens_a_run(run: _Summary, line: str) -> bool:
    """Whether this line is the first of another server lifetime than `run`'s.

    A launch prints the launcher's warning (recent versions), then `server_args=...`, then, once
    loaded, `Started server process [PID]`; a tail may hold only the last of these."""
    if _LAUNCH_WARNING in line:
        return run.saw_server_args or run.stats.records > 0
    if _SERVER_ARGS in line:
        return run.saw_server_args
    return run.stats.pid is not None and started_pid(line) is not None


def summarize(lines: Iterable[str]) -> LogStats:
    """Counts, decode distributions, errors and time-to-ready of a log, for the whole file and for
    each server lifetime in it. Never raises on content."""
    whole = _Summary()
    runs = [_Summary()]
    for lineno, line in enumerate(lines, 1):
        if isinstance(line, str) and lineno > 1 and _opens_a_run(runs[-1], line):
            runs.append(_Summary(first_line=lineno))
        run = runs[-1]
        run.saw_server_args |= isinstance(line, str) and _SERVER_ARGS in line
        if isinstance(line, str) and run.stats.pid is None:
            run.stats.pid = started_pid(line)
        whole.feed(lineno, line)
        run.feed(lineno, line)
    stats = whole.finish()
    stats.runs = [run.finish() for run in runs if run.stats.lines >= run.stats.first_line]
    stats.pid = stats.runs[-1].pid if len(stats.runs) == 1 else None
    return stats


def _feed(
    stats: LogStats,
    lineno: int,
    line: str,
    throughput: list[float],
    accept: list[float],
    idle: IdleWatch,
) -> None:
    if isinstance(line, str):
        line = line.rstrip("\r\n")
    rec = parse_line(line)
    stamp = rec.time if rec is not None else None
    if stamp is None and (stats.first_time is None or rec is None):
        stamp = parse_time_prefix(line) if isinstance(line, str) else None
    if stamp is not None:
        if stats.first_time is None:
            stats.first_time = stamp
        stats.last_time = stamp
    if rec is None:
        return
    stats.records += 1
    stats.counts[rec.kind] = stats.counts.get(rec.kind, 0) + 1
    kind = rec.kind
    if kind == "decode":
        follows_idle = idle.feed(rec, _seconds(rec))
        if not rec.running_req or rec.running_req <= 0:
            stats.decode_not_running += 1
            return
        if follows_idle:
            stats.decode_idle_skipped += 1
            return
        stats.decode_used += 1
        if rec.gen_throughput is not None:
            throughput.append(rec.gen_throughput)
        if rec.accept_len is not None:
            accept.append(rec.accept_len)
    elif kind == "error":
        err = rec.error or "error"
        stats.errors.append(ErrorEntry(lineno, err, rec.message or "", rec.time))
        stats.error_counts[err] = stats.error_counts.get(err, 0) + 1
    elif kind == "ready":
        if stats.ready_line is None:
            stats.ready_line = lineno
            stats.ready_time = rec.time
    elif kind == "milestone" and rec.milestone and rec.milestone not in stats.milestones:
        stats.milestones[rec.milestone] = (lineno, rec.time)
