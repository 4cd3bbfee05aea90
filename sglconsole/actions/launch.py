"""Relaunch: preflight, stop the old server, start the profile detached, follow it to ready.

The new server gets the profile's argv and env, CUDA_VISIBLE_DEVICES from the
server entry, and its own session (setsid) so it survives the SSH connection
(a systemd:UNIT launcher is restarted with systemctl; systemd-run makes a
transient unit). Its startup is followed in the log (milestones reported as
they happen) while /health is polled; /health can answer 200 from a server
that then hangs, so readiness is confirmed by a real generation. If the
process dies, the last 30 log lines say why, and rollback is offered.
"""

from __future__ import annotations

import asyncio
import json
import shlex
from collections.abc import Awaitable
from contextlib import nullcontext

from sglconsole.actions.audit import AuditLog, RollbackStore
from sglconsole.actions.base import (
    ActionContext,
    ActionResult,
    Interrupted,
    Plan,
    StageFailed,
    left_unprobed,
    started_early,
)
from sglconsole.actions.container import (
    launch_container,
    remove_kept,
    stop_container,
    wait_container_ready,
)
from sglconsole.actions.container_saved import kept_name
from sglconsole.actions.kill import save_for_rollback, stop
from sglconsole.actions.lock import host_lock
from sglconsole.actions.preflight import HostAnswers, ask_host, run_preflight
from sglconsole.actions.startup import LOG_TAIL, Started, wait_ready
from sglconsole.actions.stopping import remote
from sglconsole.config.launch_spec import LaunchSpec, launch_spec
from sglconsole.core.secrets import mask_argv
from sglconsole.remote.agents import source
from sglconsole.remote.container_engine import container_serving
from sglconsole.remote.inspect import Snapshot, snapshot
from sglconsole.remote.ssh.connection import SshHost


async def plan_relaunch(
    ctx: ActionContext, host: str, port: int, profile_name: str | None = None
) -> Plan:
    spec = launch_spec(ctx.config, host, port, profile_name)
    snap = await snapshot(ctx.ssh[host], ctx.config.host(host).python)
    process = snap.server(port)
    lines = [f"host {host}, port {port}, profile {spec.profile}"]
    engine = spec.container.engine if spec.container else None
    boxed = await container_serving(ctx.ssh[host], port, process, engine)
    lines.append(
        f"stop: container {boxed.name} ({boxed.id[:12]}, pid {boxed.pid}, image {boxed.image}"
        f" {(boxed.image_id or '')[:19]}), kept as {kept_name(boxed)} for rollback"
        if boxed
        else f"stop: pid {process.main.pid} ({shlex.join(mask_argv(list(process.main.argv)))})"
        if process
        else "stop: nothing runs there"
    )
    run = spec.container
    lines.append(f"launch ({run.engine if run else spec.launcher}): {spec.shown()}")
    log = f"{run.engine} logs {run.name}" if run else spec.log
    lines.append(f"log: {log}" + (f"   workdir: {spec.cwd}" if spec.cwd else ""))
    lines.append("preflight runs first; if it fails nothing is touched")
    return Plan("relaunch", f"{host}:{port}", lines, argv=spec.command, spec=spec)


async def relaunch(
    ctx: ActionContext,
    host: str,
    port: int,
    profile_name: str | None = None,
    *,
    audit: AuditLog | None = None,
    rollbacks: RollbackStore | None = None,
    action: str = "relaunch",
    spec: LaunchSpec | None = None,
) -> ActionResult:
    """SPEC: the one the plan showed (what was confirmed is what launches); else built here."""
    spec = spec or launch_spec(ctx.config, host, port, profile_name)
    started = await replace(ctx, spec, audit=audit, rollbacks=rollbacks, action=action)
    if ctx.dry_run:
        return ctx.result(action, f"{host}:{port}", True, "dry run: nothing was changed")
    return ctx.result(
        action, f"{host}:{port}", True, f"pid {started.pid} is ready", pid=started.pid
    )


async def replace(
    ctx: ActionContext,
    spec: LaunchSpec,
    *,
    audit: AuditLog | None,
    rollbacks: RollbackStore | None,
    action: str,
    preflight: bool = True,
    snap: Snapshot | None = None,
    keep_open: bool = False,
    asked: Awaitable[HostAnswers] | None = None,
    locked: bool = False,
) -> Started:
    """preflight -> stop what runs -> launch -> ready, all of the one SPEC.
    The shared body of relaunch, restore, rollback and bench compare. KEEP_OPEN: on success the
    audit record is left for the caller to end (`started.audit_record`) with its own verdict.
    ASKED: preflight's questions to the host (`ask_host`), when the caller started them already;
    else they start here, beside the lock and the snapshot (read-only, nothing waits on them).
    LOCKED: the caller holds the server's host lock (`host_lock`) already."""
    wanted = preflight and spec.profile is not None and asked is None
    question = ask_host(ctx.ssh[spec.host], spec) if wanted else None
    lock = nullcontext() if locked else host_lock(ctx, spec.host, spec.port, action)
    async with started_early(question) as [asking], lock:
        return await _replace(
            ctx,
            spec,
            audit=audit or AuditLog(),
            rollbacks=rollbacks,
            action=action,
            preflight=preflight,
            snap=snap,
            keep_open=keep_open,
            asked=asked if asked is not None else asking,
        )


async def _replace(
    ctx: ActionContext,
    spec: LaunchSpec,
    *,
    audit: AuditLog,
    rollbacks: RollbackStore | None,
    action: str,
    preflight: bool,
    snap: Snapshot | None,
    keep_open: bool = False,
    asked: Awaitable[HostAnswers] | None = None,
) -> Started:
    host, port = spec.host, spec.port
    ssh = ctx.ssh[host]
    async with ctx.stage("inspect", f"what runs on {host}:{port}") as stage:
        # the kill re-checks the process on the host anyway
        snap = snap or await snapshot(ssh, ctx.config.host(host).python)
        process = snap.server(port)
        engine = spec.container.engine if spec.container else None
        boxed = await container_serving(ssh, port, process, engine)  # stopped as a container
        stage.detail = f"pid {process.main.pid}" if process else "nothing running"
        stage.detail += f" in container {boxed.id[:12]} ({boxed.name})" if boxed else ""
    if preflight and spec.profile is not None:  # a rollback's saved command is not re-judged
        await _preflight(ctx, ssh, spec, snap, asked)
    saved = {}
    if process is not None:
        server = ctx.config.find_server(host, port)
        saved = await save_for_rollback(
            ctx, ssh, host, port, process, server, rollbacks, container=boxed
        )
    record = (
        None
        if ctx.dry_run
        else audit.begin(
            action,
            host,
            port,
            stopping_pid=process.main.pid if process else None,
            stopping_argv=list(process.main.argv) if process else None,
            stopping_env=saved.get("env"),
            starting_argv=spec.command,
            starting_env=dict(spec.env),
            starting_cwd=spec.cwd,
            log=spec.log,
            fleet=ctx.config.identity,
        )
    )
    started = None
    try:
        if boxed is not None:  # kept, renamed and stopped, for rollback
            await stop_container(ctx, ssh, port, boxed, process, keep=True)
        elif process is not None:
            await stop(ctx, ssh, host, port, process, snap)
        if spec.container is not None:
            started = await launch_container(ctx, ssh, spec)
            if not ctx.dry_run:
                await wait_container_ready(ctx, ssh, spec, started)
        else:
            started = await launch(ctx, ssh, spec)
            if not ctx.dry_run:
                await wait_ready(ctx, ssh, spec, started)
    except asyncio.CancelledError as exc:
        if record is None or started is None:  # its begin record says it never ended
            raise
        left = f"interrupted after the launch: {left_unprobed(host, port, started.pid, 'starting')}"
        audit.end(record, False, left, pid=started.pid, interrupted=True)
        raise Interrupted(left) from exc
    except Exception as exc:
        if record:
            hint = (
                f"; `sglconsole rollback {host}:{port}` brings back pid {process.main.pid}'s config"
                if process
                else ""
            )
            audit.end(record, False, f"failed: {exc}{hint}")
        raise
    if record and keep_open:
        started.audit_record = record
    elif record:
        removed = await prune_kept(ctx, ssh, host, port, rollbacks)
        audit.end(record, True, f"pid {started.pid} ready{removed}", pid=started.pid)
    return started


async def prune_kept(
    ctx: ActionContext, ssh: SshHost, host: str, port: int, rollbacks: RollbackStore | None
) -> str:
    """Once the new server is proven, the containers replaced before the last one go: the last
    one stays (renamed, stopped) for rollback. '' where none was removed."""
    history = (rollbacks or RollbackStore()).history(host, port)
    if ctx.dry_run or not any(saved.get("container") for saved in history):
        return ""
    keep = (history[-1].get("container") or {}).get("id") if history else None
    async with ctx.stage("prune", "containers kept by earlier replacements") as stage:
        removed = await remove_kept(ctx, ssh, history, keep)
        stage.detail = f"removed {', '.join(removed)}" if removed else "none to remove"
    return f"; removed {', '.join(removed)}" if removed else ""


async def _preflight(
    ctx: ActionContext,
    ssh: SshHost,
    spec: LaunchSpec,
    snap: Snapshot,
    asked: Awaitable[HostAnswers] | None,
) -> None:
    async with ctx.stage("preflight", f"check the profile against {spec.host}'s SGLang") as stage:
        checked = await run_preflight(ssh, spec, snap, asked)
        if not checked.ok:
            raise StageFailed(
                "; ".join(check.detail for check in checked.failures()) + " (nothing was touched)",
                checked.lines(),
            )
        warned = [check.name for check in checked.checks if check.warning]
        stage.detail = f"SGLang {checked.verdict.version}: all {len(checked.checks)} checks passed"
        stage.detail += f" ({len(warned)} warned: {', '.join(warned)})" if warned else ""
        stage.evidence = checked.lines()


async def launch(ctx: ActionContext, ssh: SshHost, spec: LaunchSpec) -> Started:
    python = ctx.config.host(spec.host).python
    unit = spec.systemd_unit
    async with ctx.stage("launch", spec.shown()[:160]) as stage:
        if unit:
            offset = await log_offset(ssh, python, spec.log)
            await remote(ctx, ssh, ["systemctl", "restart", unit], timeout=120, check=True)
            return await _started_by_unit(ssh, python, spec, offset, stage)
        argv = list(spec.argv)
        if spec.launcher == "systemd-run":
            argv = [
                "systemd-run",
                f"--unit=sglang-{spec.port}",
                "--collect",
                "--quiet",
                "--property=KillMode=control-group",
                *[f"--setenv={name}={value}" for name, value in spec.env.items()],
                *([f"--working-directory={spec.cwd}"] if spec.cwd else []),
                "--",
                *spec.argv,
            ]
        request = {
            "argv": argv,
            "env": dict(spec.env),
            "cwd": spec.cwd,
            "log": spec.log,
            "exact_env": spec.exact_env,
        }
        command = [python, "-c", source("launch_agent"), json.dumps(request)]
        if ctx.dry_run:
            ctx.would_run(ssh, command)
            stage.detail = "dry run"
            return Started(0, spec.log, None, None)
        result = await ssh.run(command, timeout=60)
        try:
            info = json.loads(result.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            raise StageFailed(
                f"the launcher printed nothing useful (exit {result.exit_status}): "
                f"{result.stderr.strip()[-300:]}"
            ) from None
        if not info.get("ok"):
            evidence = info.get("log_tail") or []
            why = info.get("error") or f"exited at once with code {info.get('exit_code')}"
            raise StageFailed(f"{why}; last log lines below", evidence[-LOG_TAIL:])
        if info.get("sid") == info.get("my_sid"):
            raise StageFailed("the new server shares the SSH session and would die with it")
        stage.detail = f"pid {info['pid']} in its own session {info.get('sid')}, log {spec.log}"
        return Started(int(info["pid"]), spec.log, info.get("log_ino"), info.get("log_off"))


async def log_offset(ssh: SshHost, python: str, path: str) -> tuple[int | None, int | None]:
    script = (
        "import os,sys\ntry:\n st=os.stat(sys.argv[1]); print(st.st_ino, st.st_size)\n"
        "except OSError:\n print('- -')"
    )
    result = await ssh.run([python, "-c", script, path], timeout=15)
    parts = result.stdout.split()
    return (
        (int(parts[0]), int(parts[1])) if len(parts) == 2 and parts[0].isdigit() else (None, None)
    )


async def _started_by_unit(ssh, python, spec: LaunchSpec, offset, stage) -> Started:
    for _ in range(60):
        snap = await snapshot(ssh, python)
        process = snap.server(spec.port)
        if process is not None:
            stage.detail = f"pid {process.main.pid} (unit restarted)"
            return Started(process.main.pid, spec.log, offset[0], offset[1])
        await asyncio.sleep(0.5)
    raise StageFailed("the unit restarted but no server appeared on the port within 30 s")
