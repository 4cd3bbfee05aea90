"""Whether a running server's scheduler makes progress: STALLED is judged from what a wedged SGLang
really shows, never from an HTTP answer alone.

On a real 0.5.17 whose scheduler was wedged for 85 s (flashinfer JIT-compiling on the first
sampled request), `/model_info`, `/v1/models`, `/get_load` and `/metrics` answered at once with
frozen values; `/health` (it generates a token), `/health_generate` and `/server_info` did not, no
batch line was written, and SGLang logged `Health check failed ...` every few seconds. The signs,
any one of which is enough:
- a generating health check unanswered for GENERATE_BOUND_S (SGLang's own timeout);
- requests in flight by the load endpoint and no decode or prefill line for STALL_S;
- SGLang's own health-check warnings, with no batch line since.
"""

from __future__ import annotations

import math

from sglconsole.core.log_owner import belongs
from sglconsole.core.server_load import RequestLoad
from sglconsole.state.model import GENERATE_BOUND_S, STALL_S, ServerState, reading_is_current

WARNING_RECENT_S = 60.0
"""A health-check warning older than this says nothing about now."""
LOAD_FRESH_S = 15.0
"""A load-endpoint answer older than this (three polls) says nothing about now."""


def fresh_load(server: ServerState, now: float) -> RequestLoad | None:
    """What the load endpoint said last, if recent and asked of the current process."""
    current = reading_is_current(server, server.load_at, LOAD_FRESH_S, now)
    return server.load if current else None


def generate_pending(server: ServerState, now: float) -> bool:
    """A generating health check waits for its answer and is not yet past its bound: a one-shot
    status waits for it rather than call a wedged scheduler UP."""
    sent = server.generate_sent_at
    return sent is not None and now - sent < GENERATE_BOUND_S


def stall_reason(server: ServerState, now: float) -> str | None:
    """What shows that the scheduler is wedged, with for how long, or None."""
    process = server.process
    if process is None:
        return None
    pid, started = process.main.pid, process.main.start
    seen: list[str] = []
    progress = last_progress(server, pid, started)
    sent = server.generate_sent_at
    # a batch line written since the check was sent proves progress (its answer may still be lost:
    # on a real 0.5.17 the check outstanding across the stall's end never came back)
    if sent is not None and (progress is None or progress < math.floor(sent)):
        waited = now - sent
        if waited >= GENERATE_BOUND_S:
            seen.append(f"/health (it generates a token) unanswered for {waited:.0f} s")
    # the last load read of this process, fresh or not: a wedged 0.5.17 answered /v1/loads only
    # after its stall, so "requests were in flight, and nothing since" is what there is to see
    load = server.load if server.load_at is not None and server.load_at >= started else None
    if load is not None and load.in_flight and server.busy_since is not None:
        since = max(filter(None, (progress, server.busy_since)))
        if now - since >= STALL_S:
            quiet = (
                f"no batch line for {now - progress:.0f} s"
                if progress is not None
                else "no batch line since it started"
            )
            asked = now - server.load_at
            when = f", {asked:.0f} s ago" if asked >= LOAD_FRESH_S else ""
            seen.append(f"{load.in_flight} requests in flight ({load.source}{when}), {quiet}")
    warnings = [
        when
        for when, writer in server.health_warnings
        if belongs(writer, when, False, pid, started)
        and (progress is None or when > progress)
        and now - when <= WARNING_RECENT_S
    ]
    if warnings:
        count = "once" if len(warnings) == 1 else f"{len(warnings)} times"
        seen.append(
            f"SGLang logged 'Health check failed' {count}, last {now - warnings[-1]:.0f} s ago"
        )
    return "scheduler makes no progress: " + "; ".join(seen) if seen else None


def last_progress(server: ServerState, pid: int, started: float) -> float | None:
    """When this process's scheduler last showed work: a batch line, a generating health check
    that answered, or its ready line."""
    times = [server.generate_ok_at]
    if server.batch_at is not None:
        when, writer = server.batch_at
        if belongs(writer, when, False, pid, started):
            times.append(when)
    if server.ready_seen_at is not None and server.ready_seen_at >= started - 1:
        times.append(server.ready_seen_at)
    return max(filter(None, times), default=None)
