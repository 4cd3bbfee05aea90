"""Proving a stop, and the one door for commands that change a host: a stopped server's port is
free, no process of it holds GPU memory, none of it is alive (remote() records instead of
running under --dry-run)."""

from __future__ import annotations

import asyncio

from sglconsole.actions.base import ActionContext, StageFailed
from sglconsole.core.processes import ServerProcess
from sglconsole.remote.inspect import Snapshot, snapshot
from sglconsole.remote.ssh.connection import SshHost

GRACE_S = 20.0
"""How long a stopping server is given after SIGTERM (or `stop -t`) before it is forced."""


async def verify_stopped(
    ctx: ActionContext,
    ssh: SshHost,
    host: str,
    port: int,
    process: ServerProcess,
    before: Snapshot,
    timeout: float = 30,
) -> str:
    members = {process.main.pid, *(child.pid for child in process.children)}
    async with ctx.stage(
        "verify", f"port {port} free, GPUs {list(process.gpus)} released"
    ) as stage:
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            snap = await snapshot(ssh, ctx.config.host(host).python)
            holders = [app for app in snap.apps if app.pid in members]
            busy_port = port in snap.ports
            lingering = [proc for proc in snap.procs if proc.pid in members and not proc.zombie]
            if not busy_port and not holders and not lingering:
                stage.detail = f"port {port} free; no process of the server holds GPU memory"
                gpus = list(process.gpus)
                kept = kept_by_design(snap, process)
                if kept:  # free of the server's processes, not empty: say whose the rest is
                    stage.evidence = kept
                    return (
                        f"stopped pid {process.main.pid}; port {port} free; GPUs {gpus} free of "
                        f"the server's processes; {'; '.join(kept)}"
                    )
                return f"stopped pid {process.main.pid}; port {port} free; GPUs {gpus} released"
            if asyncio.get_running_loop().time() > deadline:
                problems = []
                if busy_port:
                    problems.append(f"port {port} still in use")
                problems += [
                    f"pid {app.pid} still holds {app.used_mib} MiB on GPU {app.gpu_uuid}"
                    for app in holders
                ]
                problems += [f"pid {proc.pid} ({proc.title}) still alive" for proc in lingering]
                raise StageFailed("; ".join(problems))
            await asyncio.sleep(VERIFY_POLL_S)


VERIFY_POLL_S = 0.2
"""Between two looks at a stopping server (a look is a snapshot, ~0.1 s on the host): a GPU's
memory is often released a moment after the process exits."""


def kept_by_design(snap: Snapshot, process: ServerProcess) -> list[str]:
    """What weight-cache daemons keep on the stopped server's GPUs: held by design (a
    `--weight-cache-mode client` server loads from them), neither the server's nor an orphan's."""
    uuid_of = {gpu.index: gpu.uuid for gpu in snap.gpus}
    kept = []
    for cache in snap.view.weight_caches:
        for index in sorted(set(cache.gpus) & set(process.gpus)):
            kept.append(
                f"weight-cache daemon pid {cache.main.pid} keeps "
                f"{cache.mib_on(uuid_of.get(index))} MiB on GPU {index} by design"
            )
    return kept


async def remote(
    ctx: ActionContext, ssh: SshHost, argv: list[str], timeout: float = 60, check: bool = False
):
    """Run a command that changes the host (recorded instead under --dry-run)."""
    if ctx.dry_run:
        ctx.would_run(ssh, argv)
        return None
    result = await ssh.run(argv, timeout=timeout)
    if check and not result.ok:
        raise StageFailed(f"{argv[0]} exited {result.exit_status}: {result.stderr.strip()[-300:]}")
    return result
