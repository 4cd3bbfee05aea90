"""What the actions do to a container: stop it (gracefully, then forced) and prove it stopped, keep
it under another name for rollback, start a profile's container and follow it to ready, and
remove a kept one once a newer one has been proven.

Every command is an argv list given to the host's own engine CLI, by container id (never by
name alone), re-read right before it acts: a container that is no longer the one shown (another
id or main pid on the port) is refused.
"""

from __future__ import annotations

import asyncio

from sglconsole.actions.base import ActionContext, StageFailed
from sglconsole.actions.container_saved import kept_name
from sglconsole.actions.startup import LOG_TAIL, Started, confirm_generation, until_healthy
from sglconsole.actions.stopping import GRACE_S, VERIFY_POLL_S, remote, verify_stopped
from sglconsole.config.launch_spec import LaunchSpec
from sglconsole.core.containers import ContainerInfo
from sglconsole.core.processes import ServerProcess
from sglconsole.remote.container_engine import by_id
from sglconsole.remote.inspect import snapshot
from sglconsole.remote.ssh.connection import SshHost

WATCH_S = 1.0  # between two looks at a starting container (an inspect, ~50 ms on the host)


async def same_container(ssh: SshHost, info: ContainerInfo, port: int) -> ContainerInfo:
    """The container as it is now, refused unless it is still the one seen: same id, running,
    same main pid, on the same port."""
    now = await by_id(ssh, info.engine, info.id)
    if now is None:
        raise StageFailed(f"container {info.id[:12]} ({info.name}) is gone; nothing stopped")
    if not now.running or now.pid != info.pid or now.port != port:
        raise StageFailed(
            f"container {info.id[:12]} ({info.name}) changed since it was read (running"
            f" {now.running}, pid {now.pid}, port {now.port}); nothing stopped"
        )
    return now


async def stop_container(
    ctx: ActionContext,
    ssh: SshHost,
    port: int,
    info: ContainerInfo,
    process: ServerProcess | None,
    keep: bool,
) -> str:
    """`stop -t GRACE` by id, `kill` if it still runs, then (KEEP) renamed for rollback; proven:
    the container stopped, its processes gone, its GPUs free, the port free."""
    engine, short = info.engine, info.id[:12]
    if not ctx.dry_run:
        await same_container(ssh, info, port)
    async with ctx.stage("stop", f"{engine} stop -t {GRACE_S:g} {short} ({info.name})") as stage:
        argv = [engine, "stop", "-t", f"{GRACE_S:g}", info.id]
        await remote(ctx, ssh, argv, timeout=GRACE_S + 60, check=True)
        if not ctx.dry_run:
            after = await by_id(ssh, engine, info.id)
            if after is not None and after.running:  # the grace ran out: forced
                await remote(ctx, ssh, [engine, "kill", info.id], timeout=60, check=True)
                stage.detail += " (needed kill)"
    if keep:
        async with ctx.stage("keep", f"{info.name} kept as {kept_name(info)} for rollback"):
            argv = [engine, "rename", info.id, kept_name(info)]
            await remote(ctx, ssh, argv, timeout=60, check=True)
    if ctx.dry_run:
        return "dry run: nothing was stopped"
    return await verify_container_stopped(ctx, ssh, port, info, process)


async def verify_container_stopped(
    ctx: ActionContext,
    ssh: SshHost,
    port: int,
    info: ContainerInfo,
    process: ServerProcess | None,
    timeout: float = 30,
) -> str:
    if process is not None:  # its processes, GPUs and port, as for a process on the host
        said = await verify_stopped(ctx, ssh, ssh.name, port, process, None, timeout)
    else:
        said = await _port_freed(ctx, ssh, port, info, timeout)
    now = await by_id(ssh, info.engine, info.id)
    if now is not None and now.running:
        raise StageFailed(f"container {info.id[:12]} still runs after stop and kill")
    return f"container {info.id[:12]} ({info.name}) stopped; {said}"


async def _port_freed(
    ctx: ActionContext, ssh: SshHost, port: int, info: ContainerInfo, timeout: float
) -> str:
    """Where the host's process scan does not see the container's processes (an engine in
    another PID namespace): its main pid gone from the engine's answer and the port free."""
    async with ctx.stage("verify", f"port {port} free, container {info.id[:12]} stopped") as stage:
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            snap = await snapshot(ssh, ctx.config.host(ssh.name).python)
            if port not in snap.ports:
                stage.detail = f"port {port} free"
                return f"port {port} free"
            if asyncio.get_running_loop().time() > deadline:
                raise StageFailed(f"port {port} still in use")
            await asyncio.sleep(VERIFY_POLL_S)


async def launch_container(ctx: ActionContext, ssh: SshHost, spec: LaunchSpec) -> Started:
    """`ENGINE run -d ...` of the spec; its main pid from the engine's inspect."""
    run = spec.container
    async with ctx.stage("launch", spec.shown()[:160]) as stage:
        if ctx.dry_run:
            ctx.would_run(ssh, spec.command)
            stage.detail = "dry run"
            return Started(0, spec.log, None, None)
        result = await ssh.run(spec.command, timeout=300)
        new_id = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
        if not result.ok or not new_id:
            raise StageFailed(
                f"{run.engine} run exited {result.exit_status}: {result.stderr.strip()[-300:]}"
            )
        info = await by_id(ssh, run.engine, new_id)
        if info is None or not info.running or info.pid is None:
            logs = await container_logs(ssh, run.engine, new_id)
            raise StageFailed(f"container {new_id[:12]} exited at once; its last lines below", logs)
        stage.detail = f"container {new_id[:12]} ({run.name}), pid {info.pid}"
        return Started(info.pid, spec.log, None, None, container_id=new_id)


async def container_logs(ssh: SshHost, engine: str, container_id: str) -> list[str]:
    result = await ssh.run([engine, "logs", "--tail", str(LOG_TAIL), container_id], timeout=30)
    return (result.stdout + result.stderr).splitlines()[-LOG_TAIL:]


async def wait_container_ready(
    ctx: ActionContext, ssh: SshHost, spec: LaunchSpec, started: Started
) -> None:
    """/ready (or /health) until it answers while the container runs, then a real generation;
    a container that exits says why with its engine's log."""
    engine = spec.container.engine
    lines: list[str] = started.lines
    state = {"alive": True, "ready_line": False, "changed": asyncio.Event()}

    async def watch() -> None:
        while True:
            await asyncio.sleep(WATCH_S)
            now = await by_id(ssh, engine, started.container_id)
            if now is None or not now.running:
                lines[:] = await container_logs(ssh, engine, started.container_id)
                state["alive"] = False
                state["changed"].set()
                return

    async with ctx.stage("startup", f"{engine} container {started.container_id[:12]}") as stage:
        watcher = asyncio.create_task(watch())
        try:
            await until_healthy(
                ssh, spec.port, spec.http_address, state, spec.startup_timeout, started, lines
            )
        finally:
            watcher.cancel()
        stage.detail = "/ready answered 200"
    await confirm_generation(ctx, ssh, spec.port, spec.http_address, lines)


async def remove_kept(
    ctx: ActionContext, ssh: SshHost, history: list[dict], keep_id: str | None
) -> list[str]:
    """Once a newer server is proven: remove the containers earlier replacements kept, by id,
    only where the engine still has them stopped under the name they were kept as."""
    removed = []
    for saved in history:
        kept = saved.get("container") or {}
        if not kept.get("id") or kept["id"] == keep_id:
            continue
        now = await by_id(ssh, kept["engine"], kept["id"])
        if now is None or now.running or now.name != kept.get("kept_as"):
            continue
        await remote(ctx, ssh, [kept["engine"], "rm", kept["id"]], timeout=60)
        removed.append(f"{kept['kept_as']} ({kept['id'][:12]})")
    return removed
