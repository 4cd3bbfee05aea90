"""Every action a server can be given, declared once: the CLI's subcommands and the TUI's keys,
its confirmation and its progress all read this.

An action's plan is `plan(ctx, host, port, **options)`; its run is
`run(ctx, host, port, plan, **options)`, given the very plan that was confirmed (a launching
action starts the LaunchSpec the plan showed). Options are what the CLI's flags add; the TUI
uses the defaults. Actions of higher layers (the quick bench sweep) `register` themselves.
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


@dataclass(frozen=True)
class Action:
    name: str
    help: str
    """One line: what it does (the CLI's help)."""
    run: Runner
    plan: Planner | None = None
    """Exactly what will happen, shown before anything does."""
    confirm: bool = False
    """It changes the host: the plan is shown and agreed to first (the CLI: --yes skips asking)."""
    doing: str | None = None
    """The verb the server's status shows while this runs."""
    key: str | None = None
    """Its key in the console."""
    command: bool = True
    """The CLI's generic `NAME HOST:PORT` runs it (bench and capture have their own subcommands)."""


ACTIONS: dict[str, Action] = {}

ROUTED = ("kill", "relaunch", "restore", "rollback")
"""Behind an SGLang router these take the server out first, drain it, and put it back only when
its probe passes (sglconsole.actions.routing); the plan says so. They also take `keep`."""


def register(action: Action) -> Action:
    if action.name in ROUTED:
        action = replace(
            action,
            run=routed_run(action.name, action.run),
            plan=routed_plan(action.name, action.plan) if action.plan else None,
        )
    ACTIONS[action.name] = action
    return action


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


register(
    Action(
        "kill",
        "stop a server and everything it started (asks first; saved for rollback)",
        _kill,
        plan_kill,
        confirm=True,
        doing="being stopped (kill)",
        key="ctrl+k",  # as in k9s: k moves up, as in vim
    )
)
register(
    Action(
        "relaunch",
        "preflight, stop, and start the proven profile; follow it to ready",
        _relaunch,
        plan_relaunch,
        confirm=True,
        doing="relaunching the proven profile",
        key="r",
    )
)
register(
    Action(
        "restore",
        "relaunch the proven profile, probe it, and compare with its baseline",
        _restore,
        plan_restore,
        confirm=True,
        doing="restoring the proven profile",
        key="R",
    )
)
register(
    Action(
        "rollback",
        "relaunch exactly what ran before the last kill/relaunch/restore",
        _rollback,
        _plan_rollback,
        confirm=True,
        doing="rolling back",
        key="u",
    )
)
register(
    Action(
        "probe",
        "ask a server a question with a known answer; time it; detect degenerate output",
        _probe,
        key="p",
    )
)
register(
    Action(
        "capture",
        "save a running server's config as a profile in hosts.yaml",
        _capture,
        key="c",
        command=False,
    )
)
register(
    Action(
        ROUTER_IN,
        "put a server in the routers hosts.yaml says front it, once its probe passes (asks first)",
        _router_in,
        plan_router_in,
        confirm=True,
        doing="being put in its router",
        key=ROUTER_IN_KEY,
    )
)
