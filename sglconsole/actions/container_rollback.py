"""Rollback of a container server: the container a kill, relaunch or restore kept (renamed,
stopped) gets its name back and starts again, exactly as it was (its image, options, argv).

What runs on the port now is stopped first, and kept in turn: a rollback can be rolled back.
"""

from __future__ import annotations

from sglconsole.actions.audit import AuditLog, RollbackStore
from sglconsole.actions.base import ActionContext, Plan, StageFailed
from sglconsole.actions.container import stop_container, wait_container_ready
from sglconsole.actions.kill import save_for_rollback, stop
from sglconsole.actions.startup import Started
from sglconsole.actions.stopping import remote
from sglconsole.config.container_run import ContainerRun
from sglconsole.config.launch_spec import LaunchSpec, spec_from_rollback
from sglconsole.remote.container_engine import by_id, container_serving
from sglconsole.remote.inspect import snapshot


def rollback_spec(ctx: ActionContext, host: str, port: int, saved: dict) -> LaunchSpec:
    """The saved server as a spec: its argv inside, and the container it is kept as."""
    kept = saved["container"]
    spec = spec_from_rollback(host, saved, ctx.config.find_server(host, port))
    box = ContainerRun(
        engine=kept["engine"], image=kept.get("image") or "", image_id=kept.get("image_id"),
        name=kept["name"],
    )  # fmt: skip
    return LaunchSpec(**{**spec.__dict__, "container": box})


def plan_lines(saved: dict) -> list[str]:
    kept = saved["container"]
    engine, short = kept["engine"], kept["id"][:12]
    return [
        f"bring back container {kept['kept_as']} ({short}, image {kept.get('image')}"
        f" {(kept.get('image_id') or '')[:19]}), as it ran (saved {saved.get('saved_at')})",
        f"then: {engine} rename {short} {kept['name']}; {engine} start {short}",
        "whatever runs on the port now is stopped first (and kept for rollback too)",
    ]


def container_plan(ctx: ActionContext, host: str, port: int, saved: dict) -> Plan:
    spec = rollback_spec(ctx, host, port, saved)
    kept = saved["container"]
    command = [kept["engine"], "start", kept["id"]]
    return Plan(
        "rollback", f"{host}:{port}", [f"host {host}, port {port}:", *plan_lines(saved)],
        argv=command, spec=spec,
    )  # fmt: skip


async def restart_kept(
    ctx: ActionContext,
    host: str,
    port: int,
    saved: dict,
    *,
    audit: AuditLog,
    rollbacks: RollbackStore | None,
) -> Started:
    """Stop what runs (kept), give the saved container its name back, start it, follow it to
    ready. The audit record is left open for the caller's verdict (`started.audit_record`)."""
    kept = saved["container"]
    engine, ssh = kept["engine"], ctx.ssh[host]
    spec = rollback_spec(ctx, host, port, saved)
    async with ctx.stage("inspect", f"what runs on {host}:{port}, and the kept container") as stage:
        snap = await snapshot(ssh, ctx.config.host(host).python)
        process = snap.server(port)
        boxed = await container_serving(ssh, port, process, engine)
        old = await by_id(ssh, engine, kept["id"])
        if old is None:
            raise StageFailed(f"the kept container {kept['kept_as']} ({kept['id'][:12]}) is gone")
        if old.running:
            raise StageFailed(f"the kept container {kept['id'][:12]} already runs")
        stage.detail = f"pid {process.main.pid}" if process else "nothing running"
    current = {}
    if process is not None:
        server = ctx.config.find_server(host, port)
        current = await save_for_rollback(
            ctx, ssh, host, port, process, server, rollbacks, container=boxed
        )
    record = None
    if not ctx.dry_run:
        record = audit.begin(
            "rollback", host, port, stopping_pid=process.main.pid if process else None,
            stopping_argv=current.get("argv"), starting_argv=[engine, "start", kept["id"]],
            container=kept["id"], fleet=ctx.config.identity,
        )  # fmt: skip
    try:
        if boxed is not None:
            await stop_container(ctx, ssh, port, boxed, process, keep=True)
        elif process is not None:
            await stop(ctx, ssh, host, port, process, snap)
        async with ctx.stage("start", f"{kept['kept_as']} as {kept['name']}") as stage:
            await remote(ctx, ssh, [engine, "rename", kept["id"], kept["name"]], check=True)
            await remote(ctx, ssh, [engine, "start", kept["id"]], timeout=120, check=True)
            if ctx.dry_run:
                return Started(0, spec.log, None, None, container_id=kept["id"])
            now = await by_id(ssh, engine, kept["id"])
            if now is None or not now.running or now.pid is None:
                raise StageFailed(f"container {kept['id'][:12]} did not stay up")
            stage.detail = f"container {kept['id'][:12]}, pid {now.pid}"
        started = Started(now.pid, spec.log, None, None, container_id=kept["id"])
        await wait_container_ready(ctx, ssh, spec, started)
    except Exception as exc:
        if record:
            audit.end(record, False, f"failed: {exc}")
        raise
    started.audit_record = record
    return started
