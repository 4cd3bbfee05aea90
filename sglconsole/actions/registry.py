"""Every action a server can be given, each one complete record: its CLI help, its key with label
and tip, what it needs of the server, whether it asks first, the verb shown while it runs, its
plan and its runner. The CLI's subcommands, the TUI's keys, their gating, the confirmation and
the progress all read the records.

An action's plan is `plan(ctx, host, port, **options)`; its run is
`run(ctx, host, port, plan, **options)`, given the very plan that was confirmed (a launching
action starts the LaunchSpec the plan showed). Options are what the CLI's flags add; the TUI
uses the defaults. This layer declares its own actions (`SERVER_ACTIONS`); the registry the views
read, with the quick bench of the layer above, is assembled in one place: `sglconsole.catalog`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace

from sglconsole.actions.base import ActionContext, ActionResult, Plan
from sglconsole.actions.capture import capture
from sglconsole.actions.kill import kill, plan_kill
from sglconsole.actions.launch import plan_relaunch, relaunch
from sglconsole.actions.probe import probe_if_running
from sglconsole.actions.restore import restore
from sglconsole.actions.rollback import plan_rollback, rollback
from sglconsole.actions.routing import (
    ROUTER_IN,
    ROUTER_IN_KEY,
    plan_router_in,
    routed_plan,
    routed_run,
    router_in,
)
from sglconsole.config.launch_spec import LaunchSpec

Planner = Callable[..., Awaitable[Plan]]
Runner = Callable[..., Awaitable[ActionResult]]


RUNNING, MANAGED = "running", "managed"
"""What an action can need of the selected server: a process (running), a place in hosts.yaml
(managed). Without it the key is greyed, and pressing it says which is missing."""


@dataclass(frozen=True, kw_only=True)
class Action:
    name: str
    help: str
    """One line: what it does (the CLI's help)."""
    label: str
    """Its key's name in the console (footer, `?` help, command palette)."""
    tip: str
    """What its key does, in the console's help and palette."""
    run: Runner
    plan: Planner | None = None
    """Exactly what will happen, shown before anything does."""
    confirm: bool = False
    """It changes the host: the plan is shown and agreed to first (the CLI: --yes skips asking)."""
    doing: str | None = None
    """The verb the server's status shows while this runs."""
    key: str | None = None
    """Its key in the console."""
    needs: tuple[str, ...] = ()
    """RUNNING and/or MANAGED: what the selected server must be for its key to work."""
    changes_host: bool = False
    """It changes a host or hosts.yaml: off in a read-only console."""
    command: bool = True
    """The CLI's generic `NAME HOST:PORT` runs it (bench and capture have their own subcommands)."""


ROUTED = ("kill", "relaunch", "restore", "rollback")
"""Behind an SGLang router these take the server out first, drain it, and put it back only when
its probe passes (sglconsole.actions.routing); the plan says so. They also take `keep`."""


def routed(action: Action) -> Action:
    """The action as it runs: one of ROUTED gets its router steps around its plan and run."""
    if action.name not in ROUTED:
        return action
    return replace(
        action,
        run=routed_run(action.name, action.run),
        plan=routed_plan(action.name, action.plan) if action.plan else None,
    )


def _spec(plan: Plan | None) -> LaunchSpec | None:
    return plan.spec if plan is not None else None


async def plan_restore(ctx: ActionContext, host: str, port: int) -> Plan:
    plan = await plan_relaunch(ctx, host, port)
    plan.action = "restore"
    plan.lines.append("then: wait for ready, probe, compare with the baseline")
    return plan


async def _plan_rollback(ctx: ActionContext, host: str, port: int) -> Plan:
    return plan_rollback(ctx, host, port)


async def _kill(ctx: ActionContext, host: str, port: int, plan: Plan | None) -> ActionResult:
    return await kill(ctx, host, port)


async def _relaunch(
    ctx: ActionContext, host: str, port: int, plan: Plan | None, profile_name: str | None = None
) -> ActionResult:
    return await relaunch(ctx, host, port, profile_name, spec=_spec(plan))


async def _restore(ctx: ActionContext, host: str, port: int, plan: Plan | None) -> ActionResult:
    return await restore(ctx, host, port, spec=_spec(plan))


async def _rollback(ctx: ActionContext, host: str, port: int, plan: Plan | None) -> ActionResult:
    return await rollback(ctx, host, port, spec=_spec(plan))


async def _probe(
    ctx: ActionContext,
    host: str,
    port: int,
    plan: Plan | None,
    prompt: str | None = None,
    max_tokens: int | None = None,
    throughput: bool = True,
) -> ActionResult:
    return await probe_if_running(
        ctx, host, port, prompt=prompt, max_tokens=max_tokens, throughput=throughput
    )


async def _router_in(ctx: ActionContext, host: str, port: int, plan: Plan | None) -> ActionResult:
    return await router_in(ctx, host, port)


async def _capture(
    ctx: ActionContext, host: str, port: int, plan: Plan | None, name: str, force: bool = False
) -> ActionResult:
    return await capture(ctx, host, port, name, force=force)


SERVER_ACTIONS: tuple[Action, ...] = (
    Action(
        name="kill",
        help="stop a server and everything it started (asks first; saved for rollback)",
        label="Kill",
        tip="stop the server and every process it started (saved for rollback)",
        run=_kill,
        plan=plan_kill,
        confirm=True,
        doing="being stopped (kill)",
        key="ctrl+k",  # as in k9s: k moves up, as in vim
        needs=(RUNNING,),
        changes_host=True,
    ),
    Action(
        name="relaunch",
        help="preflight, stop, and start the proven profile; follow it to ready",
        label="Relaunch",
        tip="stop the server and start its proven profile (no baseline check)",
        run=_relaunch,
        plan=plan_relaunch,
        confirm=True,
        doing="relaunching the proven profile",
        key="r",
        needs=(MANAGED,),
        changes_host=True,
    ),
    Action(
        name="restore",
        help="relaunch the proven profile, probe it, and compare with its baseline",
        label="Restore",
        tip="relaunch the proven profile, probe it, compare with its baseline",
        run=_restore,
        plan=plan_restore,
        confirm=True,
        doing="restoring the proven profile",
        key="R",
        needs=(MANAGED,),
        changes_host=True,
    ),
    Action(
        name="rollback",
        help="relaunch exactly what ran before the last kill/relaunch/restore",
        label="Rollback",
        tip="bring back exactly what ran before the last kill/relaunch/restore",
        run=_rollback,
        plan=_plan_rollback,
        confirm=True,
        doing="rolling back",
        key="u",
        changes_host=True,
    ),
    Action(
        name="probe",
        help="ask a server a question with a known answer; time it; detect degenerate output",
        label="Probe",
        tip="ask the server a question with a known answer; time it",
        run=_probe,
        key="p",
        needs=(MANAGED, RUNNING),
    ),
    Action(
        name="capture",
        help="save a running server's config as a profile in hosts.yaml",
        label="Capture",
        tip="save the running server's config as a profile in hosts.yaml",
        run=_capture,
        key="c",
        needs=(RUNNING,),
        changes_host=True,  # hosts.yaml: a read-only console writes nothing
        command=False,
    ),
    Action(
        name=ROUTER_IN,
        help="put a server in the routers hosts.yaml says front it, once its probe passes (asks "
        "first)",
        label="Router in",
        tip="put the server in its routers (after a probe): after a restore it was not in",
        run=_router_in,
        plan=plan_router_in,
        confirm=True,
        doing="being put in its router",
        key=ROUTER_IN_KEY,
        needs=(MANAGED, RUNNING),
        changes_host=True,
    ),
)
"""The actions of this layer, as declared (sglconsole.catalog routes and assembles them)."""
