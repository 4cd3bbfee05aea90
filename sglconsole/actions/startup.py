"""Follow a just-launched server to ready: its log's milestones, /ready or /health, then a real
generation (/health_generate), since /health can answer 200 from a server that then hangs.
If the process dies, the last log lines say why."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field

import httpx

from sglconsole.actions.base import ActionContext, StageFailed
from sglconsole.config.launch_spec import LaunchSpec
from sglconsole.core.deadline import within
from sglconsole.core.sglang_log import parse_line
from sglconsole.remote.agents import source
from sglconsole.remote.ssh.connection import SshHost

LOG_TAIL = 30


@dataclass
class Started:
    pid: int
    log: str
    log_ino: int | None
    log_off: int | None
    lines: list[str] = field(default_factory=list)
    audit_record: dict | None = None
    """The audit "begin" record still open: the caller (a restore) ends it with its verdict."""
    container_id: str | None = None
    """The container it runs in, where the launch was a container's `run`."""


async def wait_ready(ctx: ActionContext, ssh: SshHost, spec: LaunchSpec, started: Started) -> None:
    """Follow the new server's log and /health until it generates, or it dies, or time runs out."""
    python = ctx.config.host(spec.host).python
    port, address, timeout = spec.port, spec.http_address, spec.startup_timeout
    follow = {started.log: {"ino": started.log_ino, "off": started.log_off}}
    args = {"interval": 0.5, "log_poll": 0.05, "apps_interval": 3600, "follow": follow}
    stream = await ssh.stream([python, "-c", source("watcher_agent"), json.dumps(args)])
    lines: list[str] = started.lines
    # the reader wakes the health loop at once on the ready line or a death (`changed`)
    state = {"alive": True, "ready_line": False, "changed": asyncio.Event()}
    async with ctx.stage("startup", f"following {started.log}") as stage:
        reader = asyncio.create_task(_follow(ctx, stream, started.pid, lines, state, stage))
        try:
            await until_healthy(ssh, port, address, state, timeout, started, lines)
        finally:
            reader.cancel()
            await stream.close()
        stage.detail = "ready line seen" if state["ready_line"] else "/health answered 200"
    await confirm_generation(ctx, ssh, port, address, lines)


async def confirm_generation(
    ctx: ActionContext, ssh: SshHost, port: int, address: str, lines: list[str]
) -> None:
    async with ctx.stage("generate", "confirm readiness with a real generation (/health_generate)"):
        endpoint = await ssh.forward(port, address)
        async with endpoint.client(timeout=60) as client:
            try:
                response = await client.get("/health_generate")
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
                proc.get("pid") == pid and proc.get("state") != "Z"
                for proc in message.get("procs") or []
            )
            seen = seen or present
        if kind in ("procs", "hb"):
            # a process that died before the first scan is never seen: give it a few seconds
            state["alive"] = present or (not seen and time.monotonic() - stage.started < 3)
            if not state["alive"]:
                state["changed"].set()


def _startup_line(ctx, text: str, state: dict, stage) -> None:
    record = parse_line(text)
    if record is None:
        return
    if record.kind == "milestone":
        stage.detail = (record.message or "")[:120]
        ctx.progress(stage)
    elif record.kind == "ready":
        state["ready_line"] = True
        state["changed"].set()
    elif record.kind == "error":
        stage.evidence.append(text)


async def until_healthy(
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
    endpoint = await ssh.forward(port, address)
    path = "/ready"
    async with endpoint.client(timeout=5) as client:
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
                status = (await client.get(path)).status_code
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
            await _changed_or(state["changed"], HEALTH_POLL_S)


HEALTH_POLL_S = 0.2
"""/ready (or /health) is asked this often; the ready line or the process's death, read from
the log and the process scans, ends the wait at once (the reader sets the event)."""


async def _changed_or(changed: asyncio.Event, seconds: float) -> None:
    try:
        await within(changed.wait(), seconds)
    except TimeoutError:
        pass
    changed.clear()
