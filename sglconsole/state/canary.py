"""What the canary found on a server, and SGLang's own warning lines, counted per lifetime.

A run (remote.feeds.canary asks; this keeps) belongs to the process it asked: a new pid starts
with no verdict. Its finding, if any, is one of: an answer judged WRONG / DEGENERATE / TIMEOUT
(a TIMEOUT while /health says 200 is said so: the server looks healthy and serves nobody), or a
greedy answer that differs from the first one this console saw for the same prompt on the same
profile (temperature 0 should give the same words every time).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from sglconsole.core.canary import CanaryAnswer

RUNS_KEPT = 48  # a server's last runs: 4 hours at the default 5 min (the sparkline shows the end)
FAIL_RUNS = 2
"""Runs of one process failed in a row before it is a finding (one slow answer under a burst is no
outage): the server's status says it (state.status) and its alert fires (alerts.canary)."""


@dataclass(frozen=True, kw_only=True)
class CanaryRun:
    time: float
    """Epoch seconds the run began."""
    pid: int | None
    """The process it asked."""
    verdict: str
    """The worst answer's: OK, WRONG, DEGENERATE, TIMEOUT or ERROR."""
    reason: str = ""
    answers: tuple[CanaryAnswer, ...] = ()
    via: str = "forward"
    """"forward" (the SSH port forward to the server) or "router NAME"."""
    health_ok: bool = False
    """Whether /health said 200 when it ran."""
    changed: tuple[str, ...] = ()
    """Greedy answers that differ from the profile's first (AnswerBook), in words."""

    @property
    def ok(self) -> bool:
        return self.verdict == "OK" and not self.changed

    @property
    def finding(self) -> str | None:
        """The problem in one line, or None."""
        if self.verdict == "TIMEOUT" and self.health_ok:
            return f"canary: no answer while /health says 200 ({self.reason})"
        if self.verdict != "OK":
            return f"canary {self.verdict}: {self.reason}"
        if self.changed:
            return "canary: answer changed at temperature 0: " + "; ".join(self.changed)
        return None

    @property
    def ttft_s(self) -> float | None:
        values = [answer.ttft_s for answer in self.answers if answer.ttft_s is not None]
        return min(values) if values else None

    @property
    def tok_s(self) -> float | None:
        values = [answer.tok_s for answer in self.answers if answer.tok_s is not None]
        return max(values) if values else None


@dataclass
class CanaryLog:
    """One server's canary runs, oldest first, and why the last one due did not run."""

    runs: deque[CanaryRun] = field(default_factory=lambda: deque(maxlen=RUNS_KEPT))
    skipped: tuple[float, str] | None = None
    """(when, why) the last due run was skipped (an action, saturation); cleared by a run."""

    def record(self, run: CanaryRun) -> None:
        self.runs.append(run)
        self.skipped = None

    def current(self, pid: int | None) -> CanaryRun | None:
        """The newest run of process PID (None: no run asked it yet)."""
        last = self.runs[-1] if self.runs else None
        return last if last is not None and pid is not None and last.pid == pid else None

    def marks(self, pid: int | None) -> str:
        """Process PID's runs as a pass/fail line, oldest first (sparklines)."""
        return "".join("✓" if run.ok else "✗" for run in self.runs if run.pid == pid)

    def failing_streak(self, pid: int | None) -> int:
        """How many of PID's newest runs failed in a row (alerts' hysteresis)."""
        count = 0
        for run in reversed(self.runs):
            if run.pid != pid or run.ok:
                break
            count += 1
        return count


@dataclass
class AnswerBook:
    """The first greedy answer this console saw for each (profile, prompt): what a later answer on
    the same profile is compared with."""

    first: dict[tuple[str, str], tuple[str, str, str]] = field(default_factory=dict)
    """(profile, prompt) -> (digest, answer, server key)."""

    def compare(self, profile: str | None, answer: CanaryAnswer, key: str) -> str | None:
        """None when it is the first or the same answer; else how it changed."""
        if profile is None or answer.digest is None or answer.verdict != "OK":
            return None
        seen = self.first.setdefault(
            (profile, answer.prompt), (answer.digest, answer.answer or "", key)
        )
        if seen[0] == answer.digest:
            return None
        return f"{answer.prompt}: {answer.answer!r}, was {seen[1]!r} (first on {seen[2]})"


SIGNALS = ("kv_canary", "nan_logits", "health_check_failed")
"""SGLang's own warning lines the console counts (core.sglang_log.signals)."""


@dataclass
class SignalCounts:
    """SGLang's own warning lines of one process lifetime: how many, and when the last came."""

    pid: int | None = None
    counts: dict[str, int] = field(default_factory=dict)
    last_at: dict[str, float] = field(default_factory=dict)
    violations: int | None = None
    """The KV canary's newest violations=N (None: no `[canary]` line this lifetime)."""

    first_at: float | None = None
    """When the first line counted was written (a log that never names its writer: the lines
    after a process's start are its own)."""

    def feed(self, kind: str, stamp: float, pid: int | None, violations: int | None) -> None:
        if pid is not None and pid != self.pid:  # another lifetime writes the log now
            self.pid, self.counts, self.last_at, self.violations = pid, {}, {}, None
            self.first_at = None
        if self.first_at is None:
            self.first_at = stamp
        if kind == "kv_canary":
            if not violations:
                return  # a clean stats line is no warning; its count stays 0
            self.violations = violations
        self.counts[kind] = self.counts.get(kind, 0) + 1
        self.last_at[kind] = stamp

    def of(self, pid: int | None, started: float | None = None) -> SignalCounts:
        """These counts when they are PID's (or, where the log never said who wrote it, when they
        were all written after PID's start at STARTED), else none: numbers belong to one
        process."""
        if pid is None:
            return SignalCounts(pid)
        if pid == self.pid:
            return self
        written_since = started is not None and self.first_at is not None
        if self.pid is None and written_since and self.first_at >= started:
            return self
        return SignalCounts(pid)


def canary_json(
    log: CanaryLog, pid: int | None, now: float, *, router: bool = False
) -> dict | None:
    """`status --json`'s `canary` of a server running as PID (None: nothing asked it yet); of a
    router (no pid: its newest run) when ROUTER."""
    run = (log.runs[-1] if log.runs else None) if router else log.current(pid)
    skipped = log.skipped
    if run is None and skipped is None:
        return None
    return {
        "verdict": run.verdict if run else None,
        "ok": run.ok if run else None,
        "finding": run.finding if run else None,
        "at": run.time if run else None,
        "age_s": round(now - run.time, 1) if run else None,
        "via": run.via if run else None,
        "ttft_s": run.ttft_s if run else None,
        "tok_s": run.tok_s if run else None,
        "history": log.marks(pid),
        "failing_streak": log.failing_streak(pid),
        "skipped": {"at": skipped[0], "reason": skipped[1]} if skipped else None,
        "answers": [
            {
                "prompt": answer.prompt,
                "expected": answer.expected,
                "answer": answer.answer,
                "verdict": answer.verdict,
                "reason": answer.reason,
                "digest": answer.digest,
                "ttft_s": answer.ttft_s,
                "tok_s": answer.tok_s,
            }
            for answer in (run.answers if run else ())
        ],
    }


def signals_json(counts: SignalCounts, pid: int | None, started: float | None = None) -> dict:
    """`status --json`'s `sglang_signals`: per kind, this lifetime's count and last time."""
    mine = counts.of(pid, started)
    out: dict = {
        kind: {"count": mine.counts.get(kind, 0), "last_at": mine.last_at.get(kind)}
        for kind in SIGNALS
    }
    out["kv_canary_violations"] = mine.violations
    return out


MARKS_SHOWN = 8  # the newest runs a table cell shows


def cell(log: CanaryLog, pid: int | None) -> tuple[str, bool | None]:
    """A table cell: the current process's verdict and its newest runs ("OK ✓✓✓", "TIMEOUT ✓✗"),
    "skipped" while due runs are skipped, "-" before any run; and whether it passed (None: not
    known)."""
    run = log.current(pid)
    if run is None:
        return ("skipped" if log.skipped else "-"), None
    word = run.verdict if run.verdict != "OK" or run.ok else "CHANGED"
    return f"{word} {log.marks(pid)[-MARKS_SHOWN:]}", run.ok


def failed_canary(log: CanaryLog, pid: int | None) -> tuple[str, str] | None:
    """(status name, reason) when process PID's last FAIL_RUNS canary runs failed the way a status
    tells: answers that loop or are wrong (DEGENERATE), no answer while /health says 200
    (STALLED: it looks healthy and serves nobody). A changed greedy answer or an HTTP error is an
    alert, not a status."""
    run = log.current(pid)
    if run is None or log.failing_streak(pid) < FAIL_RUNS:
        return None
    runs = f"its last {log.failing_streak(pid)} canary runs failed"
    if run.verdict in ("DEGENERATE", "WRONG"):
        word = "loop" if run.verdict == "DEGENERATE" else "are wrong"
        return "DEGENERATE", f"the canary's answers {word} ({runs}: {run.reason})"
    if run.verdict == "TIMEOUT" and run.health_ok:
        return "STALLED", f"{run.finding} ({runs})"
    return None
