"""Kill: stop one server and everything it started; prove the port and GPUs are free.

Before anything: what is running is saved for rollback and an audit record
is written. The process is re-read on the host right before signalling and
the kill is refused if it is not the process we saw (PID reuse). A systemd
unit is stopped with systemctl. Never by name.
"""

from __future__ import annotations

import json
import shlex
import time

from sglconsole.actions.audit import AuditLog, RollbackStore
from sglconsole.actions.base import ActionContext, ActionResult, Plan, StageFailed
from sglconsole.actions.container import stop_container
from sglconsole.actions.container_saved import kept_name, saved_container
from sglconsole.actions.lock import host_lock
from sglconsole.actions.stopping import GRACE_S, remote, verify_stopped
from sglconsole.config import Server
from sglconsole.core.containers import ContainerInfo
from sglconsole.core.processes import ServerProcess
from sglconsole.core.secrets import mask_argv
from sglconsole.core.text import fmt_duration
from sglconsole.remote.agents import source
from sglconsole.remote.container_engine import container_serving
from sglconsole.remote.inspect import Snapshot, snapshot
from sglconsole.remote.ssh.connection import SshHost

VOLATILE_ENV = ("SSH_", "PWD", "OLDPWD", "SHLVL", "_", "TERM", "MAIL", "LS_COLORS")


async def plan_kill(ctx: ActionContext, host: str, port: int) -> Plan:
    snap = await snapshot(ctx.ssh[host], ctx.config.host(host).python)
    process = snap.server(port)
    target = f"{host}:{port}"
    if process is None:
        return Plan(
            "kill", target, [f"nothing runs on {target}: nothing to kill"], destructive=False
        )
    server = ctx.config.find_server(host, port)
    boxed = await container_of(ctx, host, port, process)
    how = (
        f"{boxed.engine} stop -t {GRACE_S:g} {boxed.id[:12]} ({boxed.name}), {boxed.engine} kill"
        f" if it still runs; kept as {kept_name(boxed)} for rollback"
        if boxed
        else f"systemctl stop {server.systemd_unit}"
        if server and server.systemd_unit
        else (
            f"SIGTERM to process group {process.main.pgid} ({1 + len(process.children)} processes),"
            f" SIGKILL after {GRACE_S:g}s"
        )
    )
    return Plan(
        "kill",
        target,
        [
            f"host {host}, port {port}, pid {process.main.pid} "
            f"({started_text(process.main.start)})",
            f"running: {shlex.join(mask_argv(list(process.main.argv)))}",
            f"children: {', '.join(child.title for child in process.children) or 'none'}",
            f"how: {how}",
            *weight_cache_lines(process, snap),
            "what ran is saved first: `sglconsole rollback " + target + "` brings it back",
        ],
        argv=list(process.main.argv),
    )


def weight_cache_lines(process: ServerProcess, snap: Snapshot) -> list[str]:
    """What a stop means for the weights a weight cache holds (SGLang 0.5.17+)."""
    mode = process.weight_cache_mode
    if mode == "daemon":
        return ["weight cache: its own daemons are children of it and stop with it"]
    if mode != "client":
        return []
    keeping = [cache for cache in snap.view.weight_caches if set(cache.gpus) & set(process.gpus)]
    return [
        f"weight cache: it loads from weight-cache daemon pid {cache.main.pid}, which keeps "
        f"{cache.gpu_mem_mib} MiB on GPU {','.join(map(str, cache.gpus))} and stays running"
        for cache in keeping
    ] or ["weight cache: client mode, and no weight-cache daemon is seen on its GPUs"]


def started_text(start: float, now: float | None = None) -> str:
    """'started 14:03:21, 2h05m ago' (local time; the day too when not today)."""
    if start <= 0:
        return "start time unknown"
    now = time.time() if now is None else now
    when = time.localtime(start)
    shown = time.strftime(
        "%H:%M:%S" if when[:3] == time.localtime(now)[:3] else "%Y-%m-%d %H:%M:%S", when
    )
    return f"started {shown}, {fmt_duration(now - start)} ago"


async def kill(
    ctx: ActionContext,
    host: str,
    port: int,
    *,
    expected_pid: int | None = None,
    audit: AuditLog | None = None,
    rollbacks: RollbackStore | None = None,
) -> ActionResult:
    target = f"{host}:{port}"
    ssh = ctx.ssh[host]
    python = ctx.config.host(host).python
    async with ctx.stage("inspect", f"find the server on {target}") as stage:
        snap = await snapshot(ssh, python)
        process = snap.server(port)
        stage.detail = f"pid {process.main.pid}" if process else "not running"
    if process is None:
        swept = await sweep_orphans(ctx, ssh, host, port, snap, rollbacks)
        return ctx.result("kill", target, True, swept or f"nothing runs on {target}")
    if expected_pid is not None and process.main.pid != expected_pid:
        raise StageFailed(
            f"{target} is now pid {process.main.pid}, not {expected_pid}:"
            " it changed since you looked; nothing killed"
        )
    boxed = await container_of(ctx, host, port, process)
    async with host_lock(ctx, host, port, "kill"):
        saved = await save_for_rollback(
            ctx, ssh, host, port, process, ctx.config.find_server(host, port), rollbacks, boxed
        )
        audit = audit or AuditLog()
        record = (
            None
            if ctx.dry_run
            else audit.begin(
                "kill",
                host,
                port,
                pid=process.main.pid,
                argv=list(process.main.argv),
                env=saved.get("env", {}),
                python=process.python,
                fleet=ctx.config.identity,
            )
        )
        try:
            if boxed is not None:
                outcome = await stop_container(ctx, ssh, port, boxed, process, keep=True)
            else:
                outcome = await stop(ctx, ssh, host, port, process, snap)
        except Exception as exc:
            if record:
                audit.end(record, False, f"failed: {exc}")
            raise
        if record:
            audit.end(record, True, outcome)
    return ctx.result("kill", target, True, outcome, pid=process.main.pid)


async def container_of(
    ctx: ActionContext, host: str, port: int, process: ServerProcess | None
) -> ContainerInfo | None:
    """The container the server on HOST:PORT runs in (remote.container_engine)."""
    server = ctx.config.find_server(host, port)
    profile = ctx.config.profiles.get(server.profile) if server else None
    engine = profile.container.engine if profile and profile.container else None
    return await container_serving(ctx.ssh[host], port, process, engine)


async def sweep_orphans(
    ctx: ActionContext,
    ssh: SshHost,
    host: str,
    port: int,
    snap: Snapshot,
    rollbacks: RollbackStore | None,
) -> str | None:
    """SGLang children left by this port's dead server (reparented to PID 1, still holding GPUs).

    Matched by process group and session to the last server we saw on the port, or by holding
    the GPUs configured for it — and always by an SGLang child title, never by name alone.
    """
    saved = (rollbacks or RollbackStore()).latest(host, port) or {}
    server = ctx.config.find_server(host, port)
    uuid_of = {gpu.index: gpu.uuid for gpu in snap.gpus}
    mine = {uuid_of.get(index) for index in (server.gpus if server else [])} - {None}
    holders = {app.pid for app in snap.apps if app.gpu_uuid in mine}
    orphans = [
        orphan
        for orphan in snap.view.orphans
        if orphan.pgid == saved.get("pid")
        or orphan.sid == saved.get("pid")
        or orphan.pid in holders
    ]
    if not orphans:
        return None
    python = ctx.config.host(host).python
    async with ctx.stage(
        "sweep",
        f"orphans of {host}:{port}: {', '.join(f'{proc.pid} {proc.title}' for proc in orphans)}",
    ) as stage:
        for orphan in orphans:
            args = {
                "pid": orphan.pid,
                "start_ticks": orphan.start_ticks,
                "argv": list(orphan.argv),
                "grace": 5,
            }
            await remote(
                ctx, ssh, [python, "-c", source("kill_agent"), json.dumps(args)], timeout=30
            )
        stage.detail = f"stopped {len(orphans)} orphaned processes"
    return f"nothing ran on {host}:{port}; swept {len(orphans)} orphaned SGLang processes"


async def save_for_rollback(
    ctx: ActionContext,
    ssh: SshHost,
    host: str,
    port: int,
    process: ServerProcess,
    server: Server | None,
    rollbacks: RollbackStore | None,
    container: ContainerInfo | None = None,
) -> dict:
    """CONTAINER: the one it runs in (a rollback renames it back and starts it)."""
    async with ctx.stage("save", "what runs now, for rollback") as stage:
        env = await read_environ(ssh, process.main.pid)
        saved = {
            "host": host,
            "port": port,
            "pid": process.main.pid,
            "argv": list(process.main.argv),
            "env": env,
            "python": process.python,
            "cwd": process.main.cwd,
            "log": (server.log if server else None) or process.main.stdout,
            "gpus": list(process.gpus),
            **({"state": ctx.known_state} if ctx.known_state else {}),
            **({"container": saved_container(container)} if container else {}),
        }
        if not ctx.dry_run:
            (rollbacks or RollbackStore()).save(host, port, saved)
        stage.detail = f"argv, {len(env)} env vars, cwd {process.main.cwd}"
    return saved


async def read_environ(ssh: SshHost, pid: int) -> dict[str, str]:
    result = await ssh.run(["cat", f"/proc/{pid}/environ"], timeout=15)
    env = {}
    for item in result.stdout.split("\0"):
        key, sep, value = item.partition("=")
        if sep and key and not key.startswith(VOLATILE_ENV):
            env[key] = value
    return env


async def stop(
    ctx: ActionContext, ssh: SshHost, host: str, port: int, process: ServerProcess, snap: Snapshot
) -> str:
    server = ctx.config.find_server(host, port)
    if server is not None and server.systemd_unit:
        async with ctx.stage("stop", f"systemctl stop {server.systemd_unit}"):
            await remote(
                ctx, ssh, ["systemctl", "stop", server.systemd_unit], timeout=120, check=True
            )
    else:
        await signal_tree(ctx, ssh, process, ctx.config.host(host).python)
    if ctx.dry_run:
        return "dry run: nothing was signalled"
    return await verify_stopped(ctx, ssh, host, port, process, snap)


async def signal_tree(
    ctx: ActionContext, ssh: SshHost, process: ServerProcess, python: str
) -> None:
    args = {
        "pid": process.main.pid,
        "start_ticks": process.main.start_ticks,
        "argv": list(process.main.argv),
        "grace": GRACE_S,
    }
    argv = [python, "-c", source("kill_agent"), json.dumps(args)]
    async with ctx.stage("stop", f"SIGTERM pid {process.main.pid} and its tree") as stage:
        if ctx.dry_run:
            ctx.would_run(ssh, argv)
            stage.detail = "dry run"
            return
        result = await ssh.run(argv, timeout=GRACE_S + 30)
        events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
        first = events[0] if events else {}
        if first.get("stage") == "identity" and not first.get("ok"):
            raise StageFailed(first.get("detail", "the process changed"))
        done = next((event for event in events if event.get("stage") == "done"), None)
        if done is None:
            raise StageFailed(
                f"the kill did not finish (exit {result.exit_status}):"
                f" {result.stderr.strip()[-200:]}"
            )
        escalated = " (needed SIGKILL)" if done.get("escalated") else ""
        stage.detail = f"{len(first.get('members', []))} processes stopped{escalated}"
        if done.get("zombies"):
            stage.evidence = [
                f"zombie pid {zombie['pid']} held by pid {zombie['ppid']}"
                f" ({' '.join(zombie.get('parent') or [])})"
                for zombie in done["zombies"]
            ]
        if done.get("orphans"):  # not provably the server's: shown, never signalled
            stage.evidence += [
                f"left running, check: pid {orphan['pid']} {orphan['args']} (a build tool orphaned "
                "after the server started; not signalled: it may not be this server's)"
                for orphan in done["orphans"]
            ]
        if done.get("survivors"):
            raise StageFailed(f"still alive after SIGKILL: {done['survivors']}")
