"""Rollback: relaunch exactly what was running before the last kill/relaunch/restore."""

from __future__ import annotations

import asyncio
import dataclasses
import shlex

from sglconsole.actions.audit import AuditLog, RollbackStore
from sglconsole.actions.base import (
    ActionContext,
    ActionResult,
    Interrupted,
    Plan,
    StageFailed,
    left_unprobed,
)
from sglconsole.actions.container_rollback import container_plan, restart_kept
from sglconsole.actions.launch import replace
from sglconsole.actions.lock import host_lock
from sglconsole.actions.probe import probe
from sglconsole.config.launch_spec import LaunchSpec, spec_from_rollback


def saved_for(host: str, port: int, rollbacks: RollbackStore | None) -> dict:
    saved = (rollbacks or RollbackStore()).latest(host, port)
    if saved is None:
        raise StageFailed(
            f"nothing saved for {host}:{port}: rollback needs an earlier kill, relaunch or restore"
        )
    return saved


def plan_rollback(
    ctx: ActionContext, host: str, port: int, rollbacks: RollbackStore | None = None
) -> Plan:
    saved = saved_for(host, port, rollbacks)
    if saved.get("container"):  # the kept container comes back, not a new one
        return container_plan(ctx, host, port, saved)
    spec = spec_from_rollback(host, saved, ctx.config.find_server(host, port))
    return Plan(
        "rollback",
        f"{host}:{port}",
        [
            f"host {host}, port {port}: bring back what pid {saved.get('pid')} ran"
            f" (saved {saved.get('saved_at')})",
            *(
                [f"it was {saved['state']} when saved: its config comes back as it was"]
                if saved.get("state")
                else []
            ),
            f"launch: {spec.shown()}",
            f"workdir: {spec.cwd}   log: {spec.log}",
            "whatever runs on the port now is stopped first (and saved too)",
        ],
        argv=list(spec.argv),
        spec=spec,
    )


async def rollback(
    ctx: ActionContext,
    host: str,
    port: int,
    *,
    audit: AuditLog | None = None,
    rollbacks: RollbackStore | None = None,
    spec: LaunchSpec | None = None,
) -> ActionResult:
    """SPEC: the one the plan showed; else read from the rollback store here."""
    rollbacks = rollbacks or RollbackStore()
    audit = audit or AuditLog()
    saved = saved_for(host, port, rollbacks) if spec is None or spec.container else None
    if saved is not None and saved.get("container"):
        async with host_lock(ctx, host, port, "rollback"):
            started = await restart_kept(ctx, host, port, saved, audit=audit, rollbacks=rollbacks)
        spec = spec or container_plan(ctx, host, port, saved).spec
    else:
        if spec is None:
            spec = spec_from_rollback(host, saved, ctx.config.find_server(host, port))
        started = await replace(
            ctx,
            spec,
            audit=audit,
            rollbacks=rollbacks,
            action="rollback",
            preflight=False,
            keep_open=True,
        )
    record = started.audit_record
    target = f"{host}:{port}"
    if ctx.dry_run:
        return ctx.result("rollback", target, True, "dry run: nothing was changed")
    runs = f"pid {started.pid} runs {shlex.join(spec.argv[:4])}..."
    if ctx.config.find_server(host, port) is None:  # nothing in hosts.yaml says how to probe it
        if record:
            audit.end(record, True, f"pid {started.pid} ready (not probed)", pid=started.pid)
        return ctx.result("rollback", target, True, runs, pid=started.pid)
    # what ran before may be what looped: the rollback ends with a verdict, never a bare "ready"
    try:
        checked = await probe(ctx, host, port, throughput=False)
    except asyncio.CancelledError as exc:
        left = "interrupted before its probe ended: " + left_unprobed(
            host, port, started.pid, "running (ready)"
        )
        if record:
            audit.end(record, False, left, pid=started.pid, interrupted=True)
        raise Interrupted(left) from exc
    except BaseException as exc:
        if record:
            audit.end(record, False, f"pid {started.pid} ready, then unprobed: {exc}")
        raise
    verdict = dataclasses.replace(checked.data["probe"], pid=started.pid)
    # what ran before may have been slow (a drifted config): only a wrong answer fails it
    passed = verdict.verdict in ("OK", "SLOW")
    said = {"OK": "probe OK", "SLOW": f"probe SLOW: {verdict.reason}"}.get(
        verdict.verdict, f"FAILED: probe: {verdict.verdict}: {verdict.reason}"
    )
    if record:
        audit.end(record, passed, f"{runs}; {said}", pid=started.pid, probe=verdict.verdict)
    return ctx.result("rollback", target, passed, f"{runs}; {said}", pid=started.pid, probe=verdict)
