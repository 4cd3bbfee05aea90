"""The rules that turn what is known about a server into its status and the reason for it.

One home: `derive_status` runs only when the fleet publishes a new view (state.server_view),
never when a view draws, so every view shows the verdict of the same moment.
"""

from __future__ import annotations

import time

from sglconsole.config import Profile
from sglconsole.core.decode_lines import counts, decode_speed
from sglconsole.core.drift import Report
from sglconsole.core.log_owner import belongs
from sglconsole.core.processes import flag
from sglconsole.core.text import fmt_duration
from sglconsole.state.canary import failed_canary
from sglconsole.state.liveness import stall_reason
from sglconsole.state.model import (
    LOOP_SAMPLES,
    SLOW_MIN_SAMPLES,
    SLOW_WINDOW_S,
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
        stop = server.stopped
        if stop is not None and not crashed_since(server, stop.ended_at):
            # its log's last error is the stop's own SIGTERM traceback, not a crash
            when = time.strftime("%H:%M:%S", time.localtime(stop.ended_at))
            return Status.DOWN, f"stopped by {stop.user} ({stop.action}) at {when}"
        return Status.DOWN, "configured but not running" + last_error(server, now)
    if not server.managed:
        return Status.UNMANAGED, "running but not in hosts.yaml"
    started = server.process.main.start
    if server.health != "ok" and (
        server.ready_seen_at is None or server.ready_seen_at < started - 1
    ):
        return Status.STARTING, server.action or starting(server, now)
    if server.action and server.process.main.pid != server.action_found_pid:
        # the action's own process: it is not UP (nor "recovered") before the action's verdict
        return Status.STARTING, f"{server.action}: ready, verifying (no verdict yet)"
    stalled = stall_reason(server, now)
    if stalled:
        return Status.STALLED, stalled
    failed = failed_probe(server, now)
    if failed:
        return failed
    canary = failed_canary(server.canary, server.process.main.pid)
    if canary:  # healthy but wrong: /health says 200 and the answers are garbage or never come
        return Status(canary[0]), canary[1]
    if looping(server):
        version = f" on sglang {server.version}" if server.version else ""
        return (
            Status.LOOPING,
            f"accept rate pinned at its ceiling while requests run (repeating output){version}; "
            "if it runs its profile, a relaunch loops again: try another SGLang version",
        )
    drift = server.drift
    differs = drift is not None and drift.differs
    slow = slowness(server, now)
    if slow:
        # the likeliest cause of a slow server is a relaunch with other flags: say so in one line
        return Status.SLOW, slow + (f"; {config_differs(drift)}" if differs else "")
    if differs:
        return Status.DRIFT, drift.summary
    return Status.UP, "serving"


STOP_ERRORS_S = 5.0
"""A stop's own traceback is written while it stops (read a poll later): an error later than
this after the stop ended is a new crash (the server was started again outside the console)."""


def crashed_since(server: ServerState, stopped_at: float) -> bool:
    return bool(server.errors) and server.errors[-1][0] > stopped_at + STOP_ERRORS_S


def failed_probe(server: ServerState, now: float) -> tuple[Status, str] | None:
    """The problem a failed probe of the process that runs now proves: a wrong or looping answer
    does not mend itself; a slow one holds until enough live decode lines judge the speed."""
    probe = server.probe
    if probe is None or server.process is None or probe.pid != server.process.main.pid:
        return None
    verdict = probe.verdict
    why = f"its probe failed: {verdict}: {probe.reason}"
    if verdict == "DEGENERATE":
        return Status.DEGENERATE, f"the probe's answer loops ({why})"
    if verdict == "WRONG":
        return Status.DEGENERATE, f"the probe's answer is wrong ({why})"
    if verdict == "SLOW" and len(busy_samples(server, now)) < SLOW_MIN_SAMPLES:
        return Status.SLOW, why
    return None


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


def config_differs(drift: Report) -> str:
    """'config differs (3 flags)', or the version when that is what differs."""
    kinds = [row.kind for row in drift.differences]
    flags, env = kinds.count("flag"), kinds.count("env")
    parts = [f"{flags} flag{'s' if flags != 1 else ''}"] if flags else []
    if env:
        parts.append(f"{env} env")
    if parts:
        return f"config differs ({', '.join(parts)})"
    return "sglang version differs from the profile"


def process_samples(
    server: ServerState, since: float = 0.0, limit: int | None = None
) -> list[Sample]:
    """Decode samples written by the current process, oldest first.

    A relaunch appends to the same log: which lines are this process's is core.log_owner's rule.
    Walks back from the newest (status runs at every change): `since` and `limit` stop it early."""
    if server.process is None:
        return []
    pid, started = server.process.main.pid, server.process.main.start
    newest_first: list[Sample] = []
    for sample in reversed(server.history):
        if not belongs(sample.pid, sample.time, False, pid, started) or sample.time < since:
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


def busy_samples(server: ServerState, now: float, window: float = SLOW_WINDOW_S) -> list[Sample]:
    """Decode samples of the last minute that count (core.decode_lines: busy, not the first after
    idle) — of this process only (a restore must not stay SLOW for a minute on the old server's
    numbers)."""
    return [
        sample
        for sample in process_samples(server, since=now - window)[::-1]
        if counts(sample, sample.after_idle)
    ]


def slowness(server: ServerState, now: float) -> str | None:
    """Why the server is SLOW, or None: the last minute's decode speed (core.decode_lines, the
    baseline's own quantity) under the baseline at the nearest concurrency."""
    profile = server.profile
    if profile is None or profile.baseline is None:
        return None
    speed = decode_speed(busy_samples(server, now))
    if speed.lines < SLOW_MIN_SAMPLES or speed.tok_s is None or speed.running is None:
        return None
    median = speed.tok_s
    baseline = baseline_for(profile, speed.running)
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
        level = min(baseline.levels, key=lambda candidate: abs(candidate.concurrency - running))
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
        sample
        for sample in process_samples(server, limit=4 * LOOP_SAMPLES)[::-1]
        if (sample.running_req or 0) > 0
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
    return sum(pinned(sample) for sample in samples) >= LOOP_SAMPLES - 1
