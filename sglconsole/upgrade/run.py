"""The upgrade itself, after its plan was agreed: install VERSION where it will live (never in
the running server's environment), then the canary (restore's path: stop the old server saving
it for rollback, launch the candidate on the same GPUs, follow its milestones to ready, probe its
answer; behind its routers, drained first, when it has some), the A/B bench against the old
baseline at its concurrencies (ab.py), then the verdict: promote (hosts.yaml points at the
candidate, the old profile kept) or roll back to what ran (its environment untouched). Every step
is in the audit log; Ctrl-C after the old server stopped brings it back first."""

from __future__ import annotations

import asyncio
import dataclasses

from sglconsole.actions.audit import AuditLog, RollbackStore
from sglconsole.actions.base import ActionContext, ActionResult, StageFailed
from sglconsole.actions.restore import restore
from sglconsole.actions.rollback import rollback
from sglconsole.actions.routing import router_in, through_routers
from sglconsole.actions.upgrade.candidate import candidate, candidate_name, with_profile
from sglconsole.actions.upgrade.install import Install, install_release
from sglconsole.actions.upgrade.promote import promote
from sglconsole.config.launch_spec import spec_for_profile
from sglconsole.config.routers import routes_of
from sglconsole.config.schema import Baseline, Profile
from sglconsole.config.upgrade import Translation
from sglconsole.errors import ConsoleError
from sglconsole.upgrade.ab import Comparison, compare
from sglconsole.upgrade.beside import canary_beside


async def upgrade(
    ctx: ActionContext,
    host: str,
    port: int,
    *,
    translation: Translation,
    install: Install,
    audit: AuditLog | None = None,
    rollbacks: RollbackStore | None = None,
    gpus: tuple[int, ...] = (),
) -> ActionResult:
    """GPUS: run the canary there, beside the old server (beside.py), then switch."""
    audit, rollbacks = audit or AuditLog(), rollbacks or RollbackStore()
    target, version = f"{host}:{port}", translation.to_version
    old_name = ctx.config.server(host, port).profile
    old = ctx.config.profiles[old_name]
    name = candidate_name(ctx.config, old_name, version)
    # the canary's restore judges the answer; the speed is the A/B's, against the old baseline
    profile = candidate(old, old_name, translation, install.python).model_copy(
        update={"baseline": None}
    )
    record = audit.begin(
        "upgrade",
        host,
        port,
        fleet=ctx.config.identity,
        profile=old_name,
        candidate=name,
        from_version=translation.from_version,
        to_version=version,
        python=install.python,
        argv=list(translation.new_args),
    )
    try:
        await install_release(ctx, host, install, version)
    except BaseException as exc:
        audit.end(record, False, f"install failed: {exc}; the server was not touched")
        raise
    canary_ctx = dataclasses.replace(
        ctx, config=with_profile(ctx.config, name, profile, host, port)
    )
    spec = spec_for_profile(host, ctx.config.server(host, port), name, profile)
    beside: Comparison | None = None
    if gpus:
        try:
            beside = await canary_beside(
                ctx, host, port, name=name, profile=profile, gpus=gpus,
                baseline=old.baseline, audit=audit, rollbacks=rollbacks,
            )  # fmt: skip
        except (ConsoleError, asyncio.CancelledError) as exc:
            why = str(exc) or type(exc).__name__
            audit.end(record, False, f"canary beside failed: {why}; the old server kept serving")
            if isinstance(exc, asyncio.CancelledError):
                raise
            summary = f"canary on GPU {gpus} failed: {why}; the old server was not touched"
            return ctx.result("upgrade", target, False, summary, verdict="rejected", reason=why)
    saved = rollbacks.latest(host, port)

    async def canary() -> ActionResult:
        started = await restore(canary_ctx, host, port, spec=spec, audit=audit, rollbacks=rollbacks)
        if beside is not None:  # benched beside already: the switch is judged by its probe
            return ctx.result(
                "upgrade", target, True, started.summary, comparison=beside, **started.data
            )
        compared = await compare(canary_ctx, host, port, old.baseline, name)
        async with ctx.stage("a/b", "; ".join(compared.lines)):
            if compared.problems:
                raise StageFailed("A/B: " + "; ".join(compared.problems))
        return ctx.result(
            "upgrade", target, True, started.summary, comparison=compared, **started.data
        )

    routes = routes_of(ctx.config, host, port)
    try:
        result = await (
            through_routers(canary_ctx, "upgrade", host, port, routes, canary, audit=audit)
            if routes
            else canary()
        )
        if not result.ok:
            raise StageFailed(result.summary)
    except (ConsoleError, asyncio.CancelledError) as exc:
        stopped = rollbacks.latest(host, port) != saved  # the canary stopped the old server
        why = str(exc) or type(exc).__name__
        if not stopped:  # refused before anything was stopped (its preflight, the host's parser)
            audit.end(record, False, f"canary not started: {why}; the old server never stopped")
            if isinstance(exc, asyncio.CancelledError):
                raise
            summary = f"canary not started: {why}; the old server was not touched"
            return ctx.result("upgrade", target, False, summary, verdict="stopped", reason=why)
        back = await _back(ctx, host, port, audit, rollbacks)
        audit.end(record, False, f"canary failed: {why}; the old server {back}")
        if isinstance(exc, asyncio.CancelledError):
            raise
        summary = f"canary failed: {why}; rolled back: the old server {back}"
        return ctx.result(
            "upgrade", target, False, summary, verdict="rolled_back", candidate=name, reason=why
        )
    compared: Comparison = result.data.pop("comparison")
    promoted = await _promote(ctx, record, audit, host, port, name, profile, old.baseline, compared)
    promoted.data.update({key: value for key, value in result.data.items() if key != "baseline"})
    return promoted


async def _promote(
    ctx: ActionContext,
    record: dict,
    audit: AuditLog,
    host: str,
    port: int,
    name: str,
    profile: Profile,
    previous: Baseline | None,
    compared: Comparison,
) -> ActionResult:
    target = f"{host}:{port}"
    measured = compared.baseline(previous)
    promoted = profile.model_copy(
        update={"baseline": Baseline(**measured) if measured else previous}
    )
    old_name = ctx.config.server(host, port).profile
    try:
        async with ctx.stage("promote", f"profile {name} in {ctx.config.path}") as stage:
            promote(ctx.config.path, host, port, name, promoted)
            stage.detail = f"{target} now runs profile {name}; {old_name} kept"
    except ConsoleError as exc:  # the canary passed and serves; hosts.yaml still names the old
        said = (
            f"{target} runs {name}, which passed its canary, but hosts.yaml was not changed"
            f" ({exc}): it still names {old_name} (`sglconsole restore {target}` brings that back)"
        )
        audit.end(record, False, said)
        return ctx.result("upgrade", target, False, said, verdict="not_promoted", candidate=name)
    summary = f"promoted: {target} runs {name} ({'; '.join(compared.lines)})"
    audit.end(record, True, summary, profile=name)
    return ctx.result(
        "upgrade",
        target,
        True,
        summary,
        verdict="promoted",
        candidate=name,
        baseline=measured,
        ab=list(compared.lines),
    )


async def _back(
    ctx: ActionContext, host: str, port: int, audit: AuditLog, rollbacks: RollbackStore
) -> str:
    """Bring back what ran before the canary (shielded: a second Ctrl-C does not cut it)."""
    try:
        done = await asyncio.shield(rollback(ctx, host, port, audit=audit, rollbacks=rollbacks))
    except ConsoleError as exc:
        return f"could not be brought back ({exc}): `sglconsole rollback {host}:{port}`"
    if not done.ok:
        return f"is back, but: {done.summary}"
    said = f"serves again ({done.summary})"
    if routes_of(ctx.config, host, port):  # taken out for the canary: back in once it answers
        try:
            back_in = await asyncio.shield(router_in(ctx, host, port, audit=audit))
            said += f"; {back_in.summary}"
        except ConsoleError as exc:
            said += f"; not back in its routers ({exc}): `sglconsole router-in {host}:{port}`"
    return said
