"""The rules that turn what is known about a server into its status and the reason for it.

One home: `derive_status` runs only when the fleet publishes a new snapshot (state.snapshot), never
when a view draws, so every view shows the verdict of the same moment.
"""

from __future__ import annotations

import math
import statistics

from sglconsole.config import Profile
from sglconsole.core.processes import flag
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
        return Status.UNKNOWN, "connecting"
    if server.process is None:
        if server.action:
            return Status.STARTING, server.action
        return Status.DOWN, "configured but not running"
    if not server.managed:
        return Status.UNMANAGED, "running but not in hosts.yaml"
    started = server.process.main.start
    if server.health != "ok" and (server.ready_seen_at is None or server.ready_seen_at < started - 1):
        return Status.STARTING, server.action or "starting"
    stalled = stall(server, now)
    if stalled:
        return Status.STALLED, stalled
    verdict = getattr(server.probe, "verdict", None)
    if verdict == "DEGENERATE" and getattr(server.probe, "pid", None) == server.process.main.pid:
        return Status.DEGENERATE, "the probe's answer loops"
    if looping(server):
        return Status.LOOPING, "accept rate pinned at its ceiling while requests run (repeating output)"
    slow = slowness(server, now)
    if slow:
        return Status.SLOW, slow
    drift = server.drift
    if drift is not None and getattr(drift, "differs", False):
        return Status.DRIFT, getattr(drift, "summary", "argv differs from the profile")
    return Status.UP, "serving"


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
    quiet = "no decode line" if server.last_decode_at is None else \
        f"no decode line for {now - server.last_decode_at:.0f} s"
    return f"no HTTP answer for {now - silent_since:.0f} s, {waiting} requests waiting, {quiet}"


def requests_waiting(server: ServerState) -> int:
    """Running + queued requests of this process: its newest decode line, else its /metrics page."""
    since = math.floor(server.process.main.start) if server.process else 0.0
    last = server.history[-1] if server.history else None
    if last is not None and last.time >= since:
        return (last.running_req or 0) + (last.queue_req or 0)
    metrics = server.metrics
    if metrics is not None and server.metrics_at is not None and server.metrics_at >= since:
        return int((metrics.running_req or 0) + (metrics.queue_req or 0))
    return 0


def busy_samples(server: ServerState, now: float, window: float = SLOW_WINDOW_S) -> list[Sample]:
    """Decode samples of the last minute while requests ran — of this process only (a restore
    must not stay SLOW for a minute on the old server's numbers)."""
    since = max(now - window, _started(server))
    return [s for s in _newest_since(server.history, since) if (s.running_req or 0) > 0 and not s.after_idle]


def _newest_since(history, since: float) -> list[Sample]:
    """Samples at or after `since`, newest first (walks back from the end: status runs at every change)."""
    out = []
    for sample in reversed(history):
        if sample.time < since:
            break
        out.append(sample)
    return out


def _started(server: ServerState) -> float:
    # log timestamps have whole seconds: a line of this process may carry the second it started in
    return server.process.main.start - 1 if server.process is not None else 0.0


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
        return f"{median:.1f} tok/s, baseline {baseline:g} (under {profile.baseline.slow_fraction:.0%})"
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
    samples = [s for s in _newest_since(server.history, _started(server)) if (s.running_req or 0) > 0][:LOOP_SAMPLES]
    if len(samples) < LOOP_SAMPLES or server.process is None:
        return False
    draft = flag(server.process.args, "--speculative-num-draft-tokens")
    ceiling = float(draft) if draft and draft.replace(".", "", 1).isdigit() else None

    def pinned(sample: Sample) -> bool:
        if sample.accept_rate is not None and sample.accept_rate >= 0.98:
            return True
        return ceiling is not None and sample.accept_len is not None and sample.accept_len >= ceiling - 0.01

    # one window diluted by a short request (a health check) must not hide the loop
    return sum(pinned(s) for s in samples) >= LOOP_SAMPLES - 1
