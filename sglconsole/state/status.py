"""The rules that turn what is known about a server into its status and the reason for it.

One home: `derive_status` runs only when the fleet publishes a new snapshot (state.snapshot), never
when a view draws, so every view shows the verdict of the same moment.
"""

from __future__ import annotations

import math
import statistics

from sglconsole.config import Profile
from sglconsole.core.processes import flag
from sglconsole.core.text import fmt_duration
from sglconsole.state.model import (
    LOOP_SAMPLES,
    SLOW_MIN_SAMPLES,
    SLOW_WINDOW_S,
    STALL_S,
    HostState,
    Sample,
    ServerState,
    Status,
)


def derive_status(server: ServerState, host: HostState, now: float) -> tuple[Status, str]:
    if host.reachable is False:
        return Status.UNREACHABLE, host.error or "unreachable"
    if host.reachable is None or host.view is None:
        return Status.UNKNOWN, host.error or "connecting"
    if server.process is None:
        if server.action:
            return Status.STARTING, server.action
        if server.absent is not None:
            return server.absent
        return Status.DOWN, "configured but not running" + last_error(server, now)
    if not server.managed:
        return Status.UNMANAGED, "running but not in hosts.yaml"
    started = server.process.main.start
    if server.health != "ok" and (
        server.ready_seen_at is None or server.ready_seen_at < started - 1
    ):
        return Status.STARTING, server.action or starting(server, now)
    stalled = stall(server, now)
    if stalled:
        return Status.STALLED, stalled
    verdict = getattr(server.probe, "verdict", None)
    if verdict == "DEGENERATE" and getattr(server.probe, "pid", None) == server.process.main.pid:
        return Status.DEGENERATE, "the probe's answer loops"
    if looping(server):
        version = f" on sglang {server.version}" if server.version else ""
        return (
            Status.LOOPING,
            f"accept rate pinned at its ceiling while requests run (repeating output){version}; "
            "if it runs its profile, a relaunch loops again: try another SGLang version",
        )
    drift = server.drift
    differs = drift is not None and getattr(drift, "differs", False)
    slow = slowness(server, now)
    if slow:
        # the likeliest cause of a slow server is a relaunch with other flags: say so in one line
        return Status.SLOW, slow + (f"; {config_differs(drift)}" if differs else "")
    if differs:
        return Status.DRIFT, getattr(drift, "summary", "argv differs from the profile")
    return Status.UP, "serving"


TRACEBACK = "Traceback (most recent call last)"


def last_error(server: ServerState, now: float) -> str:
    """'; its log's last error 40 s ago: ...' for a server that is not running: a relaunch that
    died at start says why in its log while nobody is looking."""
    if not server.errors:
        return ""
    when, message = server.errors[-1]
    first_line = message.strip().splitlines()[0] if message.strip() else "?"
    if first_line.startswith(TRACEBACK):  # its error line comes last: not written (read) yet
        first_line = "a Python traceback, its error line not in the log yet"
    return f"; its log's last error {fmt_duration(max(0.0, now - when))} ago: {first_line[:120]}"


def config_differs(drift) -> str:
    """'config differs (3 flags)', or the version when that is what differs."""
    kinds = [row.kind for row in getattr(drift, "differences", None) or []]
    flags, env = kinds.count("flag"), kinds.count("env")
    parts = [f"{flags} flag{'s' if flags != 1 else ''}"] if flags else []
    if env:
        parts.append(f"{env} env")
    if parts:
        return f"config differs ({', '.join(parts)}; d shows how)"
    return "sglang version differs from the profile (d shows how)"


def process_samples(
    server: ServerState, since: float = 0.0, limit: int | None = None
) -> list[Sample]:
    """Decode samples written by the current process, oldest first.

    A relaunch appends to the same log. A sample whose writer the log named (core.log_owner) is
    this process's only if the PIDs match; otherwise by time: log times have whole seconds and a
    server needs seconds to start, so a line stamped before the second it started is not its.
    Walks back from the newest (status runs at every change): `since` and `limit` stop it early."""
    if server.process is None:
        return []
    pid, started = server.process.main.pid, math.floor(server.process.main.start)
    newest_first: list[Sample] = []
    for sample in reversed(server.history):
        if sample.pid is not None and sample.pid != pid:
            break
        if (sample.pid is None and sample.time < started) or sample.time < since:
            break
        newest_first.append(sample)
        if limit is not None and len(newest_first) >= limit:
            break
    return newest_first[::-1]


def starting(server: ServerState, now: float) -> str:
    """How far a start has come, by SGLang's own milestones (a cold start with CUDA graphs took
    145 s on a real H200: without them it looks hung)."""
    began = server.process.main.start if server.process else now
    text = f"starting for {max(0, now - began):.0f} s"
    if server.milestones:
        last = server.milestones[-1][1].split(". ")[0].rstrip(".")
        text += f": {last[:60]}"
    return text


def stall(server: ServerState, now: float) -> str | None:
    """Why a server that was serving now looks hung, or None: no HTTP answer and no decode line for
    STALL_S while requests wait (a JIT compile under load held a real 0.5.12 for 116 s while
    /metrics kept answering with frozen gauges)."""
    if server.health == "ok" or server.process is None:
        return None
    silent_since = max(filter(None, (server.answered_at, server.ready_seen_at)), default=None)
    if silent_since is None or now - silent_since < STALL_S:
        return None
    if server.last_decode_at is not None and now - server.last_decode_at < STALL_S:
        return None  # decode lines still flow: only HTTP is slow
    waiting = requests_waiting(server)
    if not waiting:
        return None
    quiet = (
        "no decode line"
        if server.last_decode_at is None
        else f"no decode line for {now - server.last_decode_at:.0f} s"
    )
    return f"no HTTP answer for {now - silent_since:.0f} s, {waiting} requests waiting, {quiet}"


def requests_waiting(server: ServerState) -> int:
    """Running + queued requests of this process: its newest decode line, else its /metrics page."""
    samples = process_samples(server, limit=1)
    if samples:
        return (samples[-1].running_req or 0) + (samples[-1].queue_req or 0)
    since = math.floor(server.process.main.start) if server.process else 0.0
    metrics = server.metrics
    if metrics is not None and server.metrics_at is not None and server.metrics_at >= since:
        return int((metrics.running_req or 0) + (metrics.queue_req or 0))
    return 0


def busy_samples(server: ServerState, now: float, window: float = SLOW_WINDOW_S) -> list[Sample]:
    """Decode samples of the last minute while requests ran — of this process only (a restore
    must not stay SLOW for a minute on the old server's numbers)."""
    return [
        s
        for s in process_samples(server, since=now - window)[::-1]
        if (s.running_req or 0) > 0 and not s.after_idle
    ]


def slowness(server: ServerState, now: float) -> str | None:
    """Why the server is SLOW, or None: median tok/s of the last minute under the baseline."""
    profile = server.profile
    if profile is None or profile.baseline is None:
        return None
    samples = [s for s in busy_samples(server, now) if s.gen_throughput is not None]
    if len(samples) < SLOW_MIN_SAMPLES:
        return None
    median = statistics.median(s.gen_throughput for s in samples)
    running = statistics.median(s.running_req or 1 for s in samples)
    baseline = baseline_for(profile, running)
    if baseline is None:
        return None
    limit = baseline * profile.baseline.slow_fraction
    if median < limit:
        return f"{median:.1f} tok/s vs {baseline:g} baseline ({median / baseline:.0%})"
    return None


def nearest_baseline(profile: Profile, running: float) -> tuple[float, int] | None:
    """(aggregate tok/s, concurrency) of the baseline measured nearest to `running` requests."""
    baseline = profile.baseline
    if baseline is None:
        return None
    if baseline.levels:
        level = min(baseline.levels, key=lambda lv: abs(lv.concurrency - running))
        return level.gen_throughput, level.concurrency
    return (baseline.gen_throughput, baseline.concurrency or 1) if baseline.gen_throughput else None


def baseline_for(profile: Profile, running: float) -> float | None:
    """The baseline tok/s at the concurrency nearest to what is running now."""
    nearest = nearest_baseline(profile, running)
    return nearest[0] if nearest else None


def per_request_baseline(profile: Profile, running: float) -> float | None:
    """tok/s one request should see, from the baseline at the nearest concurrency."""
    nearest = nearest_baseline(profile, running)
    return nearest[0] / nearest[1] if nearest else None


def looping(server: ServerState) -> bool:
    samples = [
        s for s in process_samples(server, limit=4 * LOOP_SAMPLES)[::-1] if (s.running_req or 0) > 0
    ][:LOOP_SAMPLES]
    if len(samples) < LOOP_SAMPLES or server.process is None:
        return False
    draft = flag(server.process.args, "--speculative-num-draft-tokens")
    ceiling = float(draft) if draft and draft.replace(".", "", 1).isdigit() else None

    def pinned(sample: Sample) -> bool:
        if sample.accept_rate is not None and sample.accept_rate >= 0.98:
            return True
        return (
            ceiling is not None
            and sample.accept_len is not None
            and sample.accept_len >= ceiling - 0.01
        )

    # one window diluted by a short request (a health check) must not hide the loop
    return sum(pinned(s) for s in samples) >= LOOP_SAMPLES - 1
