"""run_compare: relaunch a server with each profile in turn, sweep each, then put back what ran.

Each profile goes through the actions' own path (preflight, stop, launch,
ready). What ran before is saved first and relaunched at the end, also when
a profile fails or the comparison is interrupted (Ctrl-C cancels the task;
the put-back runs in `finally`), and then verified: the same argv, answering.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from sglconsole.actions.base import ActionContext, StageFailed
from sglconsole.actions.kill import kill, save_for_rollback
from sglconsole.actions.launch import relaunch, replace
from sglconsole.bench.model import ProgressCallback, SweepResult, SweepSettings, no_progress
from sglconsole.bench.sweep import run_sweep
from sglconsole.config.launch_spec import LaunchSpec, launch_spec, spec_from_rollback
from sglconsole.core import drift
from sglconsole.errors import ConsoleError, UsageError
from sglconsole.remote.drift import env_registry
from sglconsole.remote.inspect import snapshot
from sglconsole.remote.sglang_args import canonicalize_remote


@dataclass
class ProfileRun:
    profile: str
    sweep: SweepResult | None = None
    error: str | None = None

    def to_dict(self) -> dict:
        return {
            "profile": self.profile,
            "error": self.error,
            "sweep": self.sweep.to_dict() if self.sweep else None,
        }


@dataclass
class CompareResult:
    target: str
    profiles: list[str]
    runs: list[ProfileRun] = field(default_factory=list)
    differences: dict[str, drift.Report] = field(default_factory=dict)
    """Flag/env differences of each profile from the first one, as the host's SGLang reads them."""
    restored: str = ""
    restored_ok: bool = False

    @property
    def ok(self) -> bool:
        return self.restored_ok and all(run.sweep is not None and run.sweep.ok for run in self.runs)

    def to_dict(self) -> dict:
        return {
            "target": self.target,
            "profiles": self.profiles,
            "ok": self.ok,
            "restored": self.restored,
            "restored_ok": self.restored_ok,
            "runs": [run.to_dict() for run in self.runs],
            "differences": {
                name: [row.to_dict() for row in report.differences]
                for name, report in self.differences.items()
            },
        }


async def run_compare(
    ctx: ActionContext,
    host: str,
    port: int,
    profiles: list[str],
    *,
    settings: SweepSettings | None = None,
    progress: ProgressCallback = no_progress,
) -> CompareResult:
    check_profiles(ctx, profiles)
    result = CompareResult(f"{host}:{port}", list(profiles))
    # one spec per profile: the differences shown are between what is then launched
    specs = {name: launch_spec(ctx.config, host, port, name) for name in profiles}
    saved = await _save_original(ctx, host, port)
    try:
        result.differences = await profile_differences(ctx, specs)
        for spec in specs.values():
            result.runs.append(await _run_one(ctx, spec, settings, progress))
    finally:
        # also on Ctrl-C (CancelledError) or a failure: the server must be left as it was found
        result.restored, result.restored_ok = await put_back(ctx, host, port, saved)
    return result


def check_profiles(ctx: ActionContext, profiles: list[str]) -> None:
    unknown = [profile for profile in profiles if profile not in ctx.config.profiles]
    if unknown:
        known = ", ".join(ctx.config.profiles) or "none"
        raise UsageError(f"unknown profile(s) {', '.join(unknown)} (profiles: {known})")
    if len(set(profiles)) != len(profiles):
        raise UsageError("each profile can be compared once")


async def _save_original(ctx: ActionContext, host: str, port: int) -> dict | None:
    snap = await snapshot(ctx.ssh[host], ctx.config.host(host).python)
    process = snap.server(port)
    if process is None:
        return None
    return await save_for_rollback(
        ctx, ctx.ssh[host], host, port, process, ctx.config.find_server(host, port), None
    )


async def _run_one(ctx, spec: LaunchSpec, settings, progress) -> ProfileRun:
    """One profile: relaunch, sweep. A failure is recorded and the next profile still runs."""
    host, port, name = spec.host, spec.port, spec.profile
    try:
        await relaunch(ctx, host, port, name, action="bench-compare", spec=spec)
        return ProfileRun(
            name,
            await run_sweep(ctx, host, port, settings=settings, profile=name, progress=progress),
        )
    except (StageFailed, ConsoleError) as exc:
        return ProfileRun(name, error=str(exc))


async def profile_differences(
    ctx: ActionContext, specs: dict[str, LaunchSpec]
) -> dict[str, drift.Report]:
    """Each profile's spec against the first one's, as the host's SGLang reads them."""
    profiles = list(specs)
    first_spec = specs[profiles[0]]
    host, port = first_spec.host, first_spec.port
    async with ctx.stage(
        "differences", f"{', '.join(profiles)} as {host}'s SGLang reads them"
    ) as stage:
        argvs = {name: spec.args for name, spec in specs.items()}
        verdict = await canonicalize_remote(ctx.ssh[host], first_spec.python, argvs)
        if not verdict.ok:
            stage.detail = f"not compared: {verdict.error}"
            return {}
        first = verdict.results[profiles[0]]
        registry, judge = env_registry(verdict, verdict.version)
        reports = {}
        for name in profiles[1:]:
            other = verdict.results[name]
            reports[name] = drift.build(
                profile_values=first.values,
                profile_given=first.given,
                running_values=other.values,
                running_given=other.given,
                flag_of=verdict.flag_of,
                profile_env=dict(first_spec.env),
                running_env=dict(specs[name].env),
                version=verdict.version,
                server_port=port,
                env_registry=registry,
                env_judge=judge,
            )
        stage.detail = (
            "; ".join(
                f"{name}: {len(report.differences)} differences" for name, report in reports.items()
            )
            or "one profile"
        )
    return reports


async def put_back(
    ctx: ActionContext, host: str, port: int, saved: dict | None
) -> tuple[str, bool]:
    """Relaunch what ran before (or stop the port if nothing did) and check it; (summary, ok)."""
    try:
        return await asyncio.shield(_put_back(ctx, host, port, saved))
    except (StageFailed, ConsoleError) as exc:
        return (
            f"could not put back the original: {exc} (try: sglconsole rollback {host}:{port})",
            False,
        )


async def _put_back(
    ctx: ActionContext, host: str, port: int, saved: dict | None
) -> tuple[str, bool]:
    snap = await snapshot(ctx.ssh[host], ctx.config.host(host).python)
    process = snap.server(port)
    if saved is None:
        if process is not None:
            await kill(ctx, host, port)
        return "nothing ran before: the port is free again", True
    if process is not None and process.main.pid == saved["pid"]:
        return f"pid {saved['pid']} was never stopped", True
    spec = spec_from_rollback(host, saved, ctx.config.find_server(host, port))
    await replace(
        ctx,
        spec,
        audit=None,
        rollbacks=None,
        action="bench-restore",
        preflight=False,
    )
    return await verify(ctx, host, port, saved)


async def verify(ctx: ActionContext, host: str, port: int, saved: dict) -> tuple[str, bool]:
    async with ctx.stage("verify", "the original argv runs and answered a generation") as stage:
        snap = await snapshot(ctx.ssh[host], ctx.config.host(host).python)
        process = snap.server(port)
        if process is None or list(process.main.argv) != list(saved["argv"]):
            raise StageFailed(f"{host}:{port} does not run the original argv after the put-back")
        stage.detail = f"pid {process.main.pid} runs what pid {saved['pid']} ran"
    return stage.detail, True
