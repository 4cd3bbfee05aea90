"""Restore: put the proven config back in one go, and prove it.

preflight -> stop -> launch -> ready -> probe -> compare with the baseline.
Success means: the server is up, the probe's answer is right and not
degenerate, and tok/s and accept length are within tolerance of the profile's
baseline. The tok/s before and after come from the server's own decode lines.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Awaitable
from dataclasses import dataclass

from sglconsole.actions.audit import AuditLog, RollbackStore
from sglconsole.actions.base import (
    ActionContext,
    ActionResult,
    Interrupted,
    StageFailed,
    left_unprobed,
    started_early,
)
from sglconsole.actions.launch import prune_kept, replace
from sglconsole.actions.lock import host_lock
from sglconsole.actions.preflight import HostAnswers, ask_host
from sglconsole.actions.probe import probe
from sglconsole.config.launch_spec import LaunchSpec, launch_spec
from sglconsole.core.decode_lines import DECODE_CURRENT_MIN_S, counted, decode_speed
from sglconsole.core.log_owner import process_decode_records, started_pid
from sglconsole.core.text import fmt_duration
from sglconsole.remote.container_engine import container_serving
from sglconsole.remote.inspect import Snapshot, snapshot
from sglconsole.remote.ssh.connection import SshHost
from sglconsole.state.status import per_request_baseline

ACCEPT_TOLERANCE = 0.8
RECENT_LINES = 20  # the newest counted decode lines a before/after figure is the median of


@dataclass(frozen=True)
class DecodeStats:
    """Medians over the counted decode lines at the end of a log (core.decode_lines.decode_speed:
    the baseline's own quantity)."""

    tok_s: float | None  # aggregate gen throughput, as SGLang logs it
    per_request: float | None  # tok/s one request sees (gen throughput / running requests)
    accept_len: float | None
    running: float | None
    lines: int = 0
    """How many busy decode lines the medians are of."""
    newest: float | None = None
    """When the newest of them was written (epoch seconds): figures have an age."""


async def decode_stats(
    ssh: SshHost,
    log: str,
    pid: int,
    started: float,
    since_offset: int | None = None,
    read: Awaitable[list[str]] | None = None,
) -> DecodeStats:
    """Medians over process `pid`'s busy decode lines (core.log_owner decides which are its: a
    relaunch appends to the same log, and the previous process's numbers are not this one's).
    READ: `log_end(ssh, log)` already under way."""
    if since_offset is not None:
        result = await ssh.run(["tail", "-c", f"+{since_offset + 1}", log], timeout=15)
        lines = result.stdout.splitlines()
    else:
        lines = await (read if read is not None else log_end(ssh, log))
    return stats_of(lines, pid, started)


async def log_end(ssh: SshHost, log: str) -> list[str]:
    """The whole lines of the log's last 128 KiB."""
    result = await ssh.run(["tail", "-c", "131072", log], timeout=15)
    return result.stdout.splitlines()[1:]  # the first may be cut


async def container_stats(
    ssh: SshHost, engine: str, container_id: str, since: str | None = None
) -> DecodeStats:
    """The same medians from a container's log as its engine keeps it, since its last start:
    every line is its server's (the PID it announces is its own, in its PID namespace)."""
    argv = [engine, "logs", "--tail", "2000", *(["--since", since] if since else []), container_id]
    result = await ssh.run(argv, timeout=30)
    lines = (result.stdout + result.stderr).splitlines()
    announced = [pid for pid in map(started_pid, lines) if pid is not None]
    return stats_of(lines, announced[-1] if announced else -1, 0.0)


def stats_of(lines: list[str], pid: int, started: float) -> DecodeStats:
    """Medians over the newest of process `pid`'s decode lines that count (core.decode_lines:
    busy, never the first after idle) among log lines."""
    busy = counted(process_decode_records(lines, pid, started))[-RECENT_LINES:]
    speed = decode_speed(busy)
    return DecodeStats(
        speed.tok_s,
        speed.per_request,
        speed.accept_len,
        speed.running,
        speed.lines,
        busy[-1].time.timestamp() if busy and busy[-1].time is not None else None,
    )


async def restore(
    ctx: ActionContext,
    host: str,
    port: int,
    *,
    audit: AuditLog | None = None,
    rollbacks: RollbackStore | None = None,
    spec: LaunchSpec | None = None,
) -> ActionResult:
    """SPEC: the one the plan showed; else the server's own profile, built here."""
    spec = spec or launch_spec(ctx.config, host, port)
    ssh, log = ctx.ssh[host], ctx.config.server(host, port).log
    # the lock is taken while the host is looked at, and what needs no snapshot is asked at
    # once (read-only): preflight's questions, the log's end
    early = started_early(
        snapshot(ssh, ctx.config.host(host).python),
        ask_host(ssh, spec),
        log_end(ssh, log) if log else None,
    )
    async with early as (looking, asked, log_read), host_lock(ctx, host, port, "restore"):
        snap = await looking
        return await _restore(ctx, host, port, spec, audit, rollbacks, snap, asked, log_read)


async def _restore(
    ctx: ActionContext,
    host: str,
    port: int,
    spec: LaunchSpec,
    audit: AuditLog | None,
    rollbacks: RollbackStore | None,
    snap: Snapshot,
    asked: Awaitable[HostAnswers],
    log_read: Awaitable[list[str]] | None,
) -> ActionResult:
    target = f"{host}:{port}"
    server = ctx.config.server(host, port)
    profile = ctx.config.profiles[spec.profile]
    ssh = ctx.ssh[host]
    before = DecodeStats(None, None, None, None)
    running = snap.server(port)
    engine = spec.container.engine if spec.container else None
    boxed = await container_serving(ssh, port, running, engine) if running else None
    if running is not None:
        async with ctx.stage("measure", "tok/s of what runs now") as stage:
            log = server.log or running.main.stdout
            main = running.main
            read = log_read if server.log else None
            if boxed is not None:  # its engine keeps its log: this start's lines
                before = await container_stats(ssh, boxed.engine, boxed.id, boxed.started_at)
            elif log:
                before = await decode_stats(ssh, log, main.pid, main.start, read=read)
            stage.detail = (
                f"{describe_one(before)}{aged(before)}"
                if before.tok_s
                else f"pid {main.pid} has written no busy decode line"
            )
    audit = audit or AuditLog()
    started = await replace(
        ctx,
        spec,
        audit=audit,
        rollbacks=rollbacks,
        action="restore",
        snap=snap,
        keep_open=True,
        asked=asked,
        locked=True,  # until the verdict: no other action comes between the launch and the probe
    )
    if ctx.dry_run:
        return ctx.result("restore", target, True, "dry run: nothing was changed")
    record, verdict = started.audit_record, None
    try:
        checked = await probe(ctx, host, port)
        verdict = dataclasses.replace(checked.data["probe"], pid=started.pid)  # judged this pid
        if verdict.verdict in ("DEGENERATE", "WRONG", "ERROR"):  # no speed is worth comparing
            ctx.skip("compare", f"not compared: the probe's answer failed ({verdict.verdict})")
            raise StageFailed(f"probe: {verdict.verdict}: {verdict.reason}")
        async with ctx.stage("compare", "tok/s and accept length against the baseline") as stage:
            after = (
                await container_stats(ssh, spec.container.engine, started.container_id)
                if started.container_id
                else await decode_stats(ssh, spec.log, started.pid, 0.0, started.log_off)
            )
            problems = compare(profile, after, verdict)
            stage.detail = describe(before, after, profile, verdict)
            if problems:
                raise StageFailed("; ".join(problems))
        if verdict.verdict != "OK":
            raise StageFailed(f"probe: {verdict.verdict}: {verdict.reason}")
    except BaseException as exc:  # the audit says how it ended, a quit midway included
        if isinstance(exc, StageFailed):  # the server's state keeps the verdict of its new pid
            exc.data.update(pid=started.pid, **({"probe": verdict} if verdict else {}))
        if isinstance(exc, asyncio.CancelledError) and verdict is None:
            left = "interrupted before its probe ended: " + left_unprobed(
                host, port, started.pid, "running (ready)"
            )
            if record:
                audit.end(record, False, left, pid=started.pid, interrupted=True)
            raise Interrupted(left) from exc
        if record:
            said = f"probe {verdict.verdict}, " if verdict is not None else ""
            if isinstance(exc, asyncio.CancelledError):
                exc = "cancelled before the checks ended (the console quit?)"
            audit.end(
                record,
                False,
                f"pid {started.pid} ready, then failed: {said}{exc or type(exc).__name__}",
                pid=started.pid,
                probe=verdict.verdict if verdict is not None else None,
            )
        raise
    removed = await prune_kept(ctx, ssh, host, port, rollbacks)  # proven: older kept ones go
    summary = f"UP as pid {started.pid}: {describe(before, after, profile, verdict)}{removed}"
    if record:
        audit.end(
            record,
            True,
            f"{summary}; probe {verdict.verdict}",
            pid=started.pid,
            probe=verdict.verdict,
            before_tok_s=before.per_request,
            after_tok_s=after.per_request,
            accept_len=after.accept_len,
        )
    return ctx.result(
        "restore",
        target,
        True,
        summary,
        pid=started.pid,
        before_tok_s=before.per_request,
        after_tok_s=after.per_request,
        before_aggregate_tok_s=before.tok_s,
        after_aggregate_tok_s=after.tok_s,
        accept_len=after.accept_len,
        probe=verdict,
    )


def compare(profile, after: DecodeStats, verdict) -> list[str]:
    """Per request, against the baseline's per-request speed (the concurrencies may differ)."""
    baseline = profile.baseline
    if baseline is None:
        return []
    problems = []
    speed = judged_speed(profile, after, verdict)
    expected, per_request = speed.expected, speed.per_request
    if expected and per_request is not None and per_request < baseline.slow_fraction * expected:
        problems.append(
            f"{per_request:.1f} tok/s per request is under {baseline.slow_fraction:.0%} "
            f"of the baseline's {expected:.1f}"
        )
    accept = after.accept_len or verdict.accept_len
    if (
        baseline.accept_len
        and accept is not None
        and accept < ACCEPT_TOLERANCE * baseline.accept_len
    ):
        problems.append(
            f"accept length {accept:.2f} is under {ACCEPT_TOLERANCE:.0%}"
            f" of the baseline {baseline.accept_len:g}"
        )
    return problems


def aged(stats: DecodeStats) -> str:
    """', 12m ago' when the newest line is not current (an idle server writes none)."""
    if stats.newest is None:
        return ""
    age = time.time() - stats.newest
    return f", {fmt_duration(age)} ago" if age > DECODE_CURRENT_MIN_S else ""


def describe_one(stats: DecodeStats) -> str:
    return (
        f"{stats.per_request:.1f} tok/s per request"
        f" ({stats.tok_s:.1f} in all at {stats.running:g} running)"
    )


@dataclass(frozen=True)
class JudgedSpeed:
    """The restore's one speed figure, per request, with what it is compared to: all of one
    source, so a sentence never puts two measurements side by side as if they were one."""

    source: str  # "the probe" | "its decode lines"
    per_request: float | None
    expected: float | None  # the baseline's per-request speed at the same concurrency


def judged_speed(profile, after: DecodeStats, verdict) -> JudgedSpeed:
    """The probe's steady measurement when it ran, else the new server's busy decode lines."""
    if verdict is not None and verdict.throughput_tok_s:
        return JudgedSpeed("the probe", verdict.throughput_tok_s, verdict.expected_tok_s)
    expected = per_request_baseline(profile, round(after.running or 1)) if after.running else None
    return JudgedSpeed("its decode lines", after.per_request, expected)


def describe(before: DecodeStats, after: DecodeStats, profile, verdict=None) -> str:
    """'the probe: 62.7 tok/s per request, 1.81x the 34.7 per request before, at baseline (98% of
    its 64.0 per request); live: 77.9 tok/s in all at 2 running, accept len 3.12': one source
    per clause, the live decode lines apart (their aggregate counts every running request)."""
    speed = judged_speed(profile, after, verdict)
    parts = []
    if speed.per_request:
        parts.append(f"{speed.source}: {speed.per_request:.1f} tok/s per request")
        if before.per_request:
            parts.append(
                f"{speed.per_request / before.per_request:.2f}x"
                f" the {before.per_request:.1f} per request before"
            )
    standing = against_baseline(speed, profile)
    if standing:
        parts.append(standing)
    sentence = ", ".join(parts) or "no speed measured yet"
    live = [f"{after.tok_s:.1f} tok/s in all at {after.running:g} running"] if after.tok_s else []
    live += [f"accept len {after.accept_len:.2f}"] if after.accept_len else []
    return f"{sentence}; live: {', '.join(live)}" if live else sentence


def against_baseline(speed: JudgedSpeed, profile) -> str | None:
    """'at baseline (103% of its 47.5 per request)': like with like, per request at the
    concurrency that ran (an aggregate baseline next to a per-request figure read as half speed)."""
    baseline = profile.baseline
    if baseline is None:
        return None
    if not speed.expected or not speed.per_request:
        return f"baseline {baseline.gen_throughput:g} tok/s" if baseline.gen_throughput else None
    ratio = speed.per_request / speed.expected
    if ratio >= 0.95:
        word = "at baseline"
    elif ratio >= baseline.slow_fraction:
        word = "near baseline"
    else:
        word = "below baseline"
    return f"{word} ({ratio:.0%} of its {speed.expected:.1f} per request)"
