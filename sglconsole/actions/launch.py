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
import time
from dataclasses import dataclass, field

import httpx

from sglconsole.actions.audit import AuditLog, RollbackStore
from sglconsole.actions.base import ActionContext, ActionResult, Plan, StageFailed
from sglconsole.actions.kill import configured, remote, save_for_rollback, stop
from sglconsole.actions.lock import host_lock
from sglconsole.actions.preflight import run_preflight
from sglconsole.config import Profile, Server
from sglconsole.config.launch_spec import profile_argv, resolve_env
from sglconsole.core.secrets import mask_argv, mask_env
from sglconsole.core.sglang_log import parse_line
from sglconsole.remote.agents import source
from sglconsole.remote.inspect import Snapshot, snapshot
from sglconsole.remote.ssh import SshHost

LOG_TAIL = 30


@dataclass
class LaunchSpec:
    """Exactly what will be started."""

    argv: list[str]
    env: dict[str, str]
    cwd: str | None
    log: str
    launcher: str
    exact_env: bool = False

    def shown(self) -> str:
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in mask_env(self.env).items())
        return f"{env} {shlex.join(mask_argv(self.argv))}".strip()


@dataclass
class Started:
    pid: int
    log: str
    log_ino: int | None
    log_off: int | None
    lines: list[str] = field(default_factory=list)


def spec_for(server: Server, profile: Profile) -> LaunchSpec:
    env = resolve_env(profile.env)
    if server.gpus:
        env["CUDA_VISIBLE_DEVICES"] = ",".join(map(str, server.gpus))
    argv = [profile.python, "-m", "sglang.launch_server", *profile_argv(profile, server)]
    log = server.log or f"/tmp/sglang-{server.port}.log"
    return LaunchSpec(argv, env, profile.workdir, log, server.launcher)


def spec_from_rollback(saved: dict, server: Server | None) -> LaunchSpec:
    log = saved.get("log") or (server.log if server else None) or f"/tmp/sglang-{saved['port']}.log"
    launcher = server.launcher if server else "nohup"
    return LaunchSpec(
        list(saved["argv"]),
        dict(saved.get("env") or {}),
        saved.get("cwd"),
        log,
        launcher,
        exact_env=True,
    )


async def plan_relaunch(
    ctx: ActionContext, host: str, port: int, profile_name: str | None = None
) -> Plan:
    server = ctx.config.server(host, port)
    profile = ctx.config.profiles[profile_name or server.profile]
    spec = spec_for(server, profile)
    snap = await snapshot(ctx.ssh[host], ctx.config.host(host).python)
    process = snap.server(port)
    lines = [f"host {host}, port {port}, profile {profile_name or server.profile}"]
    lines.append(
        f"stop: pid {process.main.pid} ({shlex.join(mask_argv(list(process.main.argv)))})"
        if process
        else "stop: nothing runs there"
    )
    lines.append(f"launch ({spec.launcher}): {spec.shown()}")
    lines.append(f"log: {spec.log}" + (f"   workdir: {spec.cwd}" if spec.cwd else ""))
    lines.append("preflight runs first; if it fails nothing is touched")
    return Plan("relaunch", f"{host}:{port}", lines, argv=spec.argv)


async def relaunch(
    ctx: ActionContext,
    host: str,
    port: int,
    profile_name: str | None = None,
    *,
    audit: AuditLog | None = None,
    rollbacks: RollbackStore | None = None,
    action: str = "relaunch",
) -> ActionResult:
    server = ctx.config.server(host, port)
    profile = ctx.config.profiles[profile_name or server.profile]
    spec = spec_for(server, profile)
    started = await replace(
        ctx, host, port, spec, profile, audit=audit, rollbacks=rollbacks, action=action
    )
    if ctx.dry_run:
        return ctx.result(action, f"{host}:{port}", True, "dry run: nothing was changed")
    return ctx.result(
        action, f"{host}:{port}", True, f"pid {started.pid} is ready", pid=started.pid
    )


async def replace(
    ctx: ActionContext,
    host: str,
    port: int,
    spec: LaunchSpec,
    profile: Profile | None,
    *,
    audit: AuditLog | None,
    rollbacks: RollbackStore | None,
    action: str,
    preflight: bool = True,
    snap: Snapshot | None = None,
) -> Started:
    """preflight -> stop what runs -> launch -> ready. The shared body of relaunch, restore and rollback."""
    async with host_lock(ctx, host, port, action):
        return await _replace(
            ctx,
            host,
            port,
            spec,
            profile,
            audit=audit,
            rollbacks=rollbacks,
            action=action,
            preflight=preflight,
            snap=snap,
        )


async def _replace(
    ctx: ActionContext,
    host: str,
    port: int,
    spec: LaunchSpec,
    profile: Profile | None,
    *,
    audit: AuditLog | None,
    rollbacks: RollbackStore | None,
    action: str,
    preflight: bool,
    snap: Snapshot | None,
) -> Started:
    ssh = ctx.ssh[host]
    hostcfg = ctx.config.host(host)
    server = configured(ctx, host, port)
    async with ctx.stage("inspect", f"what runs on {host}:{port}") as stage:
        snap = snap or await snapshot(
            ssh, hostcfg.python
        )  # the kill re-checks the process on the host anyway
        process = snap.server(port)
        stage.detail = f"pid {process.main.pid}" if process else "nothing running"
    if preflight and profile is not None and server is not None:
        async with ctx.stage("preflight", f"check the profile against {host}'s SGLang") as stage:
            checked = await run_preflight(ssh, hostcfg, server, profile, snap)
            if not checked.ok:
                raise StageFailed(
                    "; ".join(c.detail for c in checked.failures()) + " (nothing was touched)",
                    checked.lines(),
                )
            stage.detail = (
                f"SGLang {checked.verdict.version}: all {len(checked.checks)} checks passed"
            )
            stage.evidence = checked.lines()
    audit = audit or AuditLog()
    saved = {}
    if process is not None:
        saved = await save_for_rollback(ctx, ssh, host, port, process, server, rollbacks)
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
            starting_argv=spec.argv,
            starting_env=spec.env,
            starting_cwd=spec.cwd,
            log=spec.log,
        )
    )
    try:
        if process is not None:
            await stop(ctx, ssh, host, port, process, snap)
        started = await launch(ctx, ssh, host, port, spec)
        if not ctx.dry_run:
            await wait_ready(
                ctx,
                ssh,
                host,
                port,
                started,
                server,
                timeout=profile.startup_timeout if profile else 900,
            )
    except Exception as exc:
        if record:
            hint = (
                f"; `sglconsole rollback {host}:{port}` brings back pid {process.main.pid}'s config"
                if process
                else ""
            )
            audit.end(record, False, f"failed: {exc}{hint}")
        raise
    if record:
        audit.end(record, True, f"pid {started.pid} ready", pid=started.pid)
    return started


async def launch(
    ctx: ActionContext, ssh: SshHost, host: str, port: int, spec: LaunchSpec
) -> Started:
    python = ctx.config.host(host).python
    unit = spec.launcher.split(":", 1)[1] if spec.launcher.startswith("systemd:") else None
    async with ctx.stage("launch", spec.shown()[:160]) as stage:
        if unit:
            offset = await log_offset(ssh, python, spec.log)
            await remote(ctx, ssh, ["systemctl", "restart", unit], timeout=120, check=True)
            return await _started_by_unit(ctx, ssh, python, port, spec, offset, stage)
        argv = spec.argv
        if spec.launcher == "systemd-run":
            argv = [
                "systemd-run",
                f"--unit=sglang-{port}",
                "--collect",
                "--quiet",
                "--property=KillMode=control-group",
                *[f"--setenv={k}={v}" for k, v in spec.env.items()],
                *([f"--working-directory={spec.cwd}"] if spec.cwd else []),
                "--",
                *spec.argv,
            ]
        request = {
            "argv": argv,
            "env": spec.env,
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
                f"the launcher printed nothing useful (exit {result.exit_status}): {result.stderr.strip()[-300:]}"
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
    script = "import os,sys\ntry:\n st=os.stat(sys.argv[1]); print(st.st_ino, st.st_size)\nexcept OSError:\n print('- -')"
    result = await ssh.run([python, "-c", script, path], timeout=15)
    parts = result.stdout.split()
    return (
        (int(parts[0]), int(parts[1])) if len(parts) == 2 and parts[0].isdigit() else (None, None)
    )


async def _started_by_unit(ctx, ssh, python, port, spec, offset, stage) -> Started:
    for _ in range(60):
        snap = await snapshot(ssh, python)
        process = snap.server(port)
        if process is not None:
            stage.detail = f"pid {process.main.pid} (unit restarted)"
            return Started(process.main.pid, spec.log, offset[0], offset[1])
        await asyncio.sleep(0.5)
    raise StageFailed("the unit restarted but no server appeared on the port within 30 s")


async def wait_ready(
    ctx: ActionContext,
    ssh: SshHost,
    host: str,
    port: int,
    started: Started,
    server: Server | None,
    timeout: float,
) -> None:
    """Follow the new server's log and /health until it generates, or it dies, or time runs out."""
    python = ctx.config.host(host).python
    address = server.http_address if server else "127.0.0.1"
    follow = {started.log: {"ino": started.log_ino, "off": started.log_off}}
    args = {"interval": 0.5, "log_poll": 0.05, "apps_interval": 3600, "follow": follow}
    stream = await ssh.stream([python, "-c", source("watcher_agent"), json.dumps(args)])
    lines: list[str] = started.lines
    state = {"alive": True, "ready_line": False}
    async with ctx.stage("startup", f"following {started.log}") as stage:
        reader = asyncio.create_task(_follow(ctx, stream, started.pid, lines, state, stage))
        try:
            await _until_healthy(ssh, port, address, state, timeout, started, lines)
        finally:
            reader.cancel()
            await stream.close()
        stage.detail = "ready line seen" if state["ready_line"] else "/health answered 200"
    async with ctx.stage("generate", "confirm readiness with a real generation (/health_generate)"):
        local = await ssh.forward(port, address)
        async with httpx.AsyncClient(timeout=60, trust_env=False) as client:
            try:
                response = await client.get(f"http://127.0.0.1:{local}/health_generate")
            except httpx.HTTPError as exc:
                raise StageFailed(f"/health_generate failed: {exc}", lines[-LOG_TAIL:]) from None
        if response.status_code != 200:
            raise StageFailed(
                f"/health_generate answered {response.status_code}", lines[-LOG_TAIL:]
            )


async def _follow(ctx, stream, pid: int, lines: list[str], state: dict, stage) -> None:
    seen = present = False
    async for raw in stream:
        try:
            message = json.loads(raw)
        except ValueError:
            continue
        kind = message.get("t")
        if kind == "log":
            for text in message.get("lines") or []:
                lines.append(text)
                _startup_line(ctx, text, state, stage)
        elif kind == "procs":
            present = any(
                p.get("pid") == pid and p.get("state") != "Z" for p in message.get("procs") or []
            )
            seen = seen or present
        if kind in ("procs", "hb"):
            # a process that died before the first scan is never seen: give it a few seconds
            state["alive"] = present or (not seen and time.monotonic() - stage.started < 3)


def _startup_line(ctx, text: str, state: dict, stage) -> None:
    record = parse_line(text)
    if record is None:
        return
    if record.kind == "milestone":
        stage.detail = (record.message or "")[:120]
        ctx.progress(stage)
    elif record.kind == "ready":
        state["ready_line"] = True
    elif record.kind == "error":
        stage.evidence.append(text)


async def _until_healthy(
    ssh: SshHost,
    port: int,
    address: str,
    state: dict,
    timeout: float,
    started: Started,
    lines: list[str],
) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    local = await ssh.forward(port, address)
    path = "/ready"
    async with httpx.AsyncClient(timeout=5, trust_env=False) as client:
        while True:
            if not state["alive"]:
                await asyncio.sleep(0.3)  # the last lines it wrote
                raise StageFailed(
                    f"pid {started.pid} exited during startup; last log lines below",
                    lines[-LOG_TAIL:],
                )
            if state["ready_line"]:
                return
            try:
                status = (await client.get(f"http://127.0.0.1:{local}{path}")).status_code
                if status == 200:
                    return
                if status == 404 and path == "/ready":
                    path = "/health"  # before 0.5.23
            except httpx.HTTPError:
                pass
            if loop.time() > deadline:
                raise StageFailed(
                    f"not ready after {timeout:g}s; last log lines below", lines[-LOG_TAIL:]
                )
            await asyncio.sleep(0.2)
