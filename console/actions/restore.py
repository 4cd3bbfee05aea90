"""Restore: put the proven config back in one go, and prove it.

preflight -> stop -> launch -> ready -> probe -> compare with the baseline.
Success means: the server is up, the probe's answer is right and not
degenerate, and tok/s and accept length are within tolerance of the profile's
baseline. The tok/s before and after come from the server's own decode lines.
"""

from __future__ import annotations

import statistics

from console.actions.audit import AuditLog, RollbackStore
from console.actions.base import ActionContext, ActionResult, StageFailed
from console.actions.launch import replace, spec_for
from console.actions.probe import probe
from console.core.sglang_log import parse_line
from console.remote.inspect import snapshot
from console.remote.ssh import SshHost

ACCEPT_TOLERANCE = 0.8


async def decode_tok_s(ssh: SshHost, log: str, since_offset: int | None = None) -> tuple[float | None, float | None]:
    """Median gen throughput and accept length of the busy decode lines at the end of a log."""
    if since_offset is not None:
        result = await ssh.run(["tail", "-c", f"+{since_offset + 1}", log], timeout=15)
        lines = result.stdout.splitlines()
    else:
        result = await ssh.run(["tail", "-c", "131072", log], timeout=15)
        lines = result.stdout.splitlines()[1:]  # the first may be cut
    records = [r for r in map(parse_line, lines) if r is not None and r.kind == "decode"]
    busy = [r for prev, r in zip(records, records[1:], strict=False) if (r.running_req or 0) > 0 and (prev.running_req or 0) > 0]
    busy = busy[-20:]
    speeds = [r.gen_throughput for r in busy if r.gen_throughput]
    accepts = [r.accept_len for r in busy if r.accept_len]
    return (statistics.median(speeds) if speeds else None, statistics.median(accepts) if accepts else None)


async def restore(ctx: ActionContext, host: str, port: int, *, audit: AuditLog | None = None,
                  rollbacks: RollbackStore | None = None) -> ActionResult:
    target = f"{host}:{port}"
    server = ctx.config.server(host, port)
    profile = ctx.config.profiles[server.profile]
    ssh = ctx.ssh[host]
    spec = spec_for(server, profile)
    before = (None, None)
    snap = await snapshot(ssh, ctx.config.host(host).python)
    running = snap.server(port)
    if running is not None:
        async with ctx.stage("measure", "tok/s of what runs now") as stage:
            log = server.log or running.main.stdout
            before = await decode_tok_s(ssh, log) if log else (None, None)
            stage.detail = f"{before[0]:.1f} tok/s" if before[0] else "no busy decode lines yet"
    started = await replace(ctx, host, port, spec, profile, audit=audit, rollbacks=rollbacks, action="restore")
    if ctx.dry_run:
        return ctx.result("restore", target, True, "dry run: nothing was changed")
    checked = await probe(ctx, host, port)
    verdict = checked.data["probe"]
    after = (None, None)
    async with ctx.stage("compare", "tok/s and accept length against the baseline") as stage:
        after = await decode_tok_s(ssh, spec.log, started.log_off)
        problems = compare(profile, after, verdict)
        stage.detail = describe(before, after, profile)
        if problems:
            raise StageFailed("; ".join(problems))
    if verdict.verdict != "OK":
        raise StageFailed(f"probe: {verdict.verdict}: {verdict.reason}")
    summary = f"UP as pid {started.pid}: {describe(before, after, profile)}"
    return ctx.result("restore", target, True, summary, pid=started.pid, before_tok_s=before[0], after_tok_s=after[0],
                      accept_len=after[1], probe=verdict)


def compare(profile, after: tuple[float | None, float | None], verdict) -> list[str]:
    baseline = profile.baseline
    if baseline is None:
        return []
    problems = []
    speed = after[0] or verdict.throughput_tok_s
    if baseline.gen_throughput and speed is not None and speed < baseline.slow_fraction * baseline.gen_throughput:
        problems.append(f"{speed:.1f} tok/s is under {baseline.slow_fraction:.0%} of the baseline {baseline.gen_throughput:g}")
    accept = after[1] or verdict.accept_len
    if baseline.accept_len and accept is not None and accept < ACCEPT_TOLERANCE * baseline.accept_len:
        problems.append(f"accept length {accept:.2f} is under {ACCEPT_TOLERANCE:.0%} of the baseline {baseline.accept_len:g}")
    return problems


def describe(before, after, profile) -> str:
    parts = []
    if after[0]:
        parts.append(f"{after[0]:.1f} tok/s")
        if before[0]:
            parts.append(f"({after[0] / before[0]:.2f}x the {before[0]:.1f} before)")
    if after[1]:
        parts.append(f"accept len {after[1]:.2f}")
    if profile.baseline and profile.baseline.gen_throughput:
        parts.append(f"baseline {profile.baseline.gen_throughput:g} tok/s")
    return ", ".join(parts) or "no decode lines yet"
