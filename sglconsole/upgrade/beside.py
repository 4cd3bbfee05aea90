"""`--gpus`: the canary on free GPUs, beside the old server, which keeps serving meanwhile. It gets
a port of its own (the first free one from PORT+100), is launched, followed to ready, probed and
A/B benched like the canary on the same GPUs, and is always stopped afterwards: only a canary
that passed lets the switch (a restore of the promoted profile on the server's own GPUs) begin."""

from __future__ import annotations

from dataclasses import replace

from sglconsole.actions.audit import AuditLog, RollbackStore
from sglconsole.actions.base import ActionContext, StageFailed
from sglconsole.actions.kill import kill
from sglconsole.actions.restore import restore
from sglconsole.actions.upgrade.candidate import with_profile
from sglconsole.config.launch_spec import spec_for_profile
from sglconsole.config.schema import Baseline, Config, Profile
from sglconsole.remote.inspect import snapshot
from sglconsole.upgrade.ab import Comparison, compare

PORT_OFFSET = 100  # the canary's port: the first free one from the server's own + 100
PORT_TRIES = 100


def with_canary(cfg: Config, host: str, port: int, canary_port: int, gpus: tuple[int, ...]):
    """`cfg` with a server entry for the canary: the server's own, on its port and GPUs."""
    entry = cfg.host(host)
    server = cfg.server(host, port)
    canary = server.model_copy(
        update={"port": canary_port, "gpus": list(gpus), "log": None, "launcher": "nohup"}
    )
    hosts = {**cfg.hosts, host: entry.model_copy(update={"servers": [*entry.servers, canary]})}
    return Config(cfg.model.model_copy(update={"hosts": hosts}), cfg.path, cfg.lines)


async def free_port(ctx: ActionContext, host: str, port: int) -> int:
    snap = await snapshot(ctx.ssh[host], ctx.config.host(host).python)
    taken = set(snap.ports) | {server.port for server in ctx.config.host(host).servers}
    for candidate in range(port + PORT_OFFSET, port + PORT_OFFSET + PORT_TRIES):
        if candidate not in taken:
            return candidate
    raise StageFailed(f"no free port for the canary from {port + PORT_OFFSET} on {host}")


async def canary_beside(
    ctx: ActionContext,
    host: str,
    port: int,
    *,
    name: str,
    profile: Profile,
    gpus: tuple[int, ...],
    baseline: Baseline | None,
    audit: AuditLog,
    rollbacks: RollbackStore,
) -> Comparison:
    """The A/B of the candidate run beside the old server (StageFailed: it did not pass)."""
    async with ctx.stage("canary port", f"a free port on {host} for GPUs {gpus}") as stage:
        canary_port = await free_port(ctx, host, port)
        stage.detail = f"{host}:{canary_port} on GPU {','.join(map(str, gpus))}"
    cfg = with_canary(ctx.config, host, port, canary_port, gpus)
    canary_ctx = replace(ctx, config=with_profile(cfg, name, profile, host, canary_port))
    spec = spec_for_profile(host, canary_ctx.config.server(host, canary_port), name, profile)
    try:
        await restore(canary_ctx, host, canary_port, spec=spec, audit=audit, rollbacks=rollbacks)
        compared = await compare(canary_ctx, host, canary_port, baseline, name)
        async with ctx.stage("a/b", "; ".join(compared.lines)):
            if compared.problems:
                raise StageFailed("A/B: " + "; ".join(compared.problems))
        return compared
    finally:  # the canary never outlives its verdict (nothing running there: nothing to do)
        await kill(canary_ctx, host, canary_port, audit=audit, rollbacks=rollbacks)
